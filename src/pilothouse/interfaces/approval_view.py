"""What an approval asks, as a person reads it: the real call, what it runs, and on whose behalf.

An approval's value is LangChain's per-call gate request (`name`, `args`, `description`) or, for
an approval a sub-agent asked for through the supervisor, the supervisor's `ask_<agent>` request
carrying the sub-agent's own pending calls (`agent`, `subagent_calls`). Interfaces show the
real calls: `run_command` with its command and working directory, `sync_application` with its
target and dry-run diff (both in the gate's description), never just the question the
supervisor passed on. The web UI's `app.js` reads the same value the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Approving a plan changes nothing by itself; every other gated call acts on something.
PLAN_TOOL = "propose_plan"


@dataclass(frozen=True)
class ActionView:
    """One call waiting for approval."""

    name: str
    args: Mapping[str, Any]
    description: str
    #: What would run: the command, the plan's goal and steps, or the arguments as JSON.
    shown: str

    @property
    def changes_something(self) -> bool:
        return self.name != PLAN_TOOL


@dataclass(frozen=True)
class ApprovalView:
    """An approval: its title, who asks (for a sub-agent's call), and the calls themselves."""

    title: str
    asked_by: str
    actions: tuple[ActionView, ...]

    @property
    def changes_something(self) -> bool:
        """Whether approving acts on a system (so the safe default is Reject)."""
        return any(action.changes_something for action in self.actions)


def shown_action(name: str, args: Mapping[str, Any]) -> str:
    """What would run: the command, the plan's steps, or the arguments as JSON."""
    if name == PLAN_TOOL:
        steps = [f"{n}. {step.get('title', '')}" if isinstance(step, Mapping) else f"{n}. {step}"
                 for n, step in enumerate(args.get("steps") or [], 1)]
        return "\n".join([str(args.get("goal", "")), *steps])
    if isinstance(args.get("command"), str):
        return str(args["command"])
    return json.dumps(dict(args), indent=2, default=str)


def _action(value: Mapping[str, Any]) -> ActionView:
    name = str(value.get("name") or "action")
    args = value.get("args") if isinstance(value.get("args"), Mapping) else {}
    assert isinstance(args, Mapping)
    return ActionView(name, args, str(value.get("description") or ""), shown_action(name, args))


def approval_view(value: Any) -> ApprovalView:
    """The view of an interrupt value (anything unexpected is shown as its JSON)."""
    if not isinstance(value, Mapping):
        return ApprovalView("Approval needed", "", (ActionView(
            "action", {}, "", json.dumps(value, indent=2, default=str)),))
    calls = [c for c in value.get("subagent_calls") or [] if isinstance(c, Mapping)]
    if not calls and isinstance(value.get("action_requests"), list):  # LangChain's batch shape
        calls = [c for c in value["action_requests"] if isinstance(c, Mapping)]
        value = {}
    agent = str(value.get("agent") or "")
    asked_by = f"Asked by the {agent} agent (through {value.get('name')})" if agent else ""
    actions = tuple(_action(c) for c in calls) or (_action(value),)
    title = (f"Approval needed: {actions[0].name}" if len(actions) == 1
             else f"Approval needed: {len(actions)} actions")
    return ApprovalView(title, asked_by, actions)
