"""The Argo CD agent: the Argo CD MCP server's tools, the seed's prompt strategy, approvals.

A real change (a sync, a rollback, a resource action) is approved on evidence computed by code,
whatever the model asked: after every model turn that calls one of `GATED_TOOLS` with
`dry_run=false`, `SyncEvidenceMiddleware` runs the same call as a dry run itself and records it
(with its fingerprint) in the conversation state; the approval prompt shows that dry run; after
approval, `SyncApprovedMiddleware` sends the fingerprint with the call, and the tool refuses if
the dry run it repeats just before acting no longer matches. One mechanism for all three.
The evidence lives in the graph state, written before the approval pause, so the prompt and
the check read the same record after a resume or a restart.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from pilothouse.agents.argocd_prompt import ARGOCD_SYSTEM_PROMPT
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.runtime.tool_first import ToolFirstMiddleware
from pilothouse.tools.argocd.connection import stdio_parameters
from pilothouse.tools.mcp_connect import call_for_payload, open_mcp_tools

SYNC_TOOL = "sync_application"
ROLLBACK_TOOL = "rollback_application"
ACTION_TOOL = "run_resource_action"
#: Tools that change the cluster: each has a dry run, `approved` and `expected_evidence`.
GATED_TOOLS: tuple[str, ...] = (SYNC_TOOL, ROLLBACK_TOOL, ACTION_TOOL)
EVIDENCE_KEY = "sync_evidence"
_SHOWN = 20  # resources listed in a prompt; the fingerprint covers all of them


class SyncEvidenceState(AgentState[Any]):
    """State of the sync gate: the dry run computed for each real sync call, by call id."""

    sync_evidence: NotRequired[Annotated[dict[str, dict[str, Any]], PrivateStateAttr]]


def _is_real_sync(call: Any) -> bool:
    """A call of a gated tool that would change something (an action needs its name)."""
    if call["name"] not in GATED_TOOLS or call["args"].get("dry_run", True) is not False:
        return False
    return call["name"] != ACTION_TOOL or bool(call["args"].get("action"))


def _evidence_of(request: ToolCallRequest) -> dict[str, Any]:
    records = (request.state or {}).get(EVIDENCE_KEY) or {}
    return dict(records.get(request.tool_call.get("id") or "", {}))


def _real_sync(request: ToolCallRequest) -> bool:
    """Ask a person only about a real sync whose dry run Pilothouse computed itself."""
    return _is_real_sync(request.tool_call) and "evidence" in _evidence_of(request)


def describe_dry_run(dry_run: dict[str, Any]) -> str:
    """The dry run as a person reads it: what would change, and to which revision."""
    count = int(dry_run.get("changes") or 0)
    lines = [f"Target revision: {dry_run.get('revision') or 'unknown'}. "
             f"Dry run by Pilothouse: {count} resource(s) would change"
             + (":" if count else " (the application is already in sync).")]
    for resource in (dry_run.get("resources") or [])[:_SHOWN]:
        where = f"{resource.get('namespace')}/" if resource.get("namespace") else ""
        lines.append(f"- {resource.get('action', 'apply')} {resource.get('kind')} "
                     f"{where}{resource.get('name')} ({resource.get('status', 'Unknown')})")
    if count > _SHOWN:
        lines.append(f"- ... and {count - _SHOWN} more")
    return "\n".join(lines)


def _describe_sync(tool_call: Any, state: Any, runtime: Any) -> str:
    evidence = ((state or {}).get(EVIDENCE_KEY) or {}).get(tool_call.get("id") or "", {})
    name = tool_call["args"].get("name", "?")
    if tool_call["name"] != SYNC_TOOL:  # rollback and actions render their own plan
        what = "Roll back" if tool_call["name"] == ROLLBACK_TOOL else "Run this action on"
        return (f"{what} application '{name}'?\n{evidence.get('summary', '')}\n"
                f"Evidence {evidence.get('evidence')}: if this changes before it runs, "
                "nothing runs and you are asked again.")
    return (f"Sync application '{name}' on the cluster?\n{describe_dry_run(evidence)}\n"
            f"Evidence {evidence.get('evidence')}: if this changes before the sync starts, "
            "nothing is synced and you are asked again.")


SYNC_APPROVAL = InterruptOnConfig(
    allowed_decisions=["approve", "reject"],
    description=_describe_sync,
    when=_real_sync,
)


class SyncEvidenceMiddleware(AgentMiddleware[SyncEvidenceState, Any, Any]):
    """Runs the dry run of every real sync the model asks for, before anyone is asked.

    An `after_model` hook is a graph step of its own, so its record is saved before the
    approval pause and read back unchanged by the prompt and by the check after approval.
    """

    state_schema = SyncEvidenceState

    def __init__(self, tools: dict[str, BaseTool]) -> None:
        super().__init__()
        self.gated = tools

    async def _dry_run(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        request = {k: v for k, v in args.items() if k not in {"approved", "expected_evidence"}}
        try:
            answer = await call_for_payload(self.gated[name], {**request, "dry_run": True})
        except Exception as exc:  # a dead tool server: its error says what went wrong
            return {"error": str(exc)[:400]}
        if "error" in answer or "evidence" not in answer:
            return {"error": str(answer.get("error", "the dry run gave no evidence"))[:400]}
        return answer

    async def aafter_model(self, state: SyncEvidenceState,
                           runtime: Runtime[Any]) -> dict[str, Any] | None:
        last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
        calls = [c for c in (last.tool_calls if last else [])
                 if _is_real_sync(c) and c["name"] in self.gated]
        if not calls:
            return None
        return {EVIDENCE_KEY: {c["id"]: await self._dry_run(c["name"], dict(c["args"]))
                               for c in calls if c.get("id")}}


_NOTHING = {SYNC_TOOL: "Nothing was synced", ROLLBACK_TOOL: "Nothing was rolled back",
            ACTION_TOOL: "Nothing was run"}


class SyncApprovedMiddleware(AgentMiddleware):
    """Sets `approved` and the approved evidence on gated calls, never from the model.

    It sits inside the human-in-the-loop gate, so a real change reaches it only after a person
    approved the recorded dry run; whatever `approved` or evidence the model wrote is replaced.
    A real change without a recorded dry run was never shown to anyone, so it does not run.
    """

    def _mark(self, request: ToolCallRequest) -> ToolCallRequest | ToolMessage:
        call = request.tool_call
        if call["name"] not in GATED_TOOLS:
            return request
        args = {k: v for k, v in call["args"].items() if k != "expected_evidence"}
        args["approved"] = False
        if _is_real_sync(call):
            evidence = _evidence_of(request)
            if "evidence" not in evidence:
                return ToolMessage(
                    content=json.dumps({
                        "error": f"{_NOTHING[call['name']]}: Pilothouse could not run the "
                                 "dry run that an approval must show "
                                 f"({evidence.get('error', 'none')}).",
                        "kind": "ApprovalRequired",
                        "suggestion": "Check the application name and Argo CD, then ask again.",
                    }),
                    name=call["name"], tool_call_id=call["id"], status="error")
            args.update(approved=True, expected_evidence=evidence["evidence"])
        return request.override(tool_call={**call, "args": args})

    def wrap_tool_call(
        self, request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        marked = self._mark(request)
        return marked if isinstance(marked, ToolMessage) else handler(marked)

    async def awrap_tool_call(
        self, request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        marked = self._mark(request)
        return marked if isinstance(marked, ToolMessage) else await handler(marked)


def sync_gate(tools: list[BaseTool]) -> tuple[dict[str, InterruptOnConfig],
                                              list[AgentMiddleware[Any, Any, Any]],
                                              list[AgentMiddleware[Any, Any, Any]]]:
    """(approvals, middleware outside the gate, middleware inside it) for the gated tools."""
    gated = {t.name: t for t in tools if t.name in GATED_TOOLS}
    if not gated:  # read-only: nothing to approve
        return {}, [], []
    return ({name: SYNC_APPROVAL for name in gated}, [SyncEvidenceMiddleware(gated)],
            [SyncApprovedMiddleware()])


@asynccontextmanager
async def open_argocd_toolkit(settings: Settings) -> AsyncIterator[Toolkit]:
    """Start the Argo CD tool server for `settings` and yield the agent's toolkit."""
    async with open_mcp_tools("argocd", stdio_parameters(settings)) as tools:
        approvals, evidence, approved = sync_gate(tools)
        yield Toolkit(
            name="argocd",
            prompt=ARGOCD_SYSTEM_PROMPT,
            tools=tools,
            approvals=approvals,
            after_approval=approved,
            extra_middleware=[ToolFirstMiddleware(), *evidence],
        )
