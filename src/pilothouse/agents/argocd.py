"""The Argo CD agent: the Argo CD MCP server's tools, the seed's prompt strategy, approvals.

A real change (a sync, a rollback, a resource action) is approved on evidence computed by code,
whatever the model asked: after every model turn that calls one of `GATED_TOOLS` with
`dry_run=false`, the evidence gate (`agents/evidence_gate.py`, the one mechanism shell commands
use too) runs the same call as a dry run through `ArgoCDEvidence` and records it (with its
fingerprint) in the conversation state; the approval prompt shows that dry run; after approval
the fingerprint goes with the call, and the tool refuses if the dry run it repeats just before
acting no longer matches.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool

from pilothouse.agents.argocd_prompt import ARGOCD_SYSTEM_PROMPT
from pilothouse.agents.evidence_gate import EVIDENCE_KEY, EvidenceGate, evidence_gate
from pilothouse.agents.grounded_args import GroundedArgsMiddleware
from pilothouse.agents.inventory import (
    APPLICATION,
    APPLICATIONSET,
    CLUSTER,
    PROJECT,
    ArgoCDNames,
    Inventory,
)
from pilothouse.agents.named_scope import OneNamedResource, by_project, by_query
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.runtime.tool_choice import ToolChoiceMiddleware
from pilothouse.tools.argocd.change_views import capped_diff
from pilothouse.tools.argocd.connection import stdio_parameters
from pilothouse.tools.argocd.rollback import describe_plan
from pilothouse.tools.mcp_connect import call_for_payload, open_mcp_tools

SYNC_TOOL = "sync_application"
ROLLBACK_TOOL = "rollback_application"
SEARCH_TOOL = "search_argocd_resources"
ACTION_TOOL = "run_resource_action"
#: Tools that change the cluster: each has a dry run, `approved` and `expected_evidence`.
GATED_TOOLS: tuple[str, ...] = (SYNC_TOOL, ROLLBACK_TOOL, ACTION_TOOL)
#: Arguments the model never chooses, hidden from the schemas it is shown (the server still
#: takes them): approval is set from the recorded evidence, the health follow-up has a sound
#: default, and `project` of a named app is redundant (names are unique per Argo CD). Measured
#: on the local model: it filled in every optional argument, `project` with the app's own
#: name ("not found", so no rollback could even be planned) and `expected_evidence` with its
#: description.
_HIDDEN_ARGS = ("approved", "expected_evidence", "follow_seconds")
#: Ids the model may only pass when the conversation gave them (`agents.grounded_args`).
GROUNDED_IDS = {ROLLBACK_TOOL: ("history_id",), SYNC_TOOL: ("revision",),
                "get_application_logs": ("pod_name", "container")}
#: Names it may only pass when a person said them. Measured on the local model: a question
#: about every out-of-sync app became `list_applications(project=<an example's project>,
#: selector="app=app1,app=app2", ...)`, the project copied from a few-shot example, the
#: selector made up: 0 matches, a wrong answer.
GROUNDED_NAMES = {
    ROLLBACK_TOOL: ("project",),
    ACTION_TOOL: ("project",),
    "list_applications": ("project", "selector"),
    "list_applicationsets": ("project",),
    "get_application": ("project",),
    "get_application_resource_tree": ("project",),
    "get_application_events": ("project",),
    "get_application_logs": ("project",),
    SYNC_TOOL: ("project",),
}
#: Tools about one application, named by their `name` argument.
ONE_APP_TOOLS = (
    "get_application", "get_application_resource_tree", "get_application_events",
    "get_application_logs", "get_application_history", "diff_application",
    "get_application_changes", SYNC_TOOL, ROLLBACK_TOOL, ACTION_TOOL)
#: Tools about one project's applications, named by their `project` argument.
PROJECT_TOOLS = ("list_applications", "list_applicationsets")
#: A person asking to see a change, not to make it (a change itself still waits for approval).
PREVIEW_PHRASES = ("preview", "dry run", "dry-run", "what would", "would it", "would change",
                   "do not", "don't", "not yet", "plan", "simulate", "before i", "what if")
#: Status filters and the words of a person asking for them (lower case, no spaces or "_").
GROUNDED_FILTERS = {
    "health_status": {
        "healthy": ("healthy",),
        "degraded": ("degraded", "unhealthy", "failing", "broken", "down", "crashing", "error"),
        "progressing": ("progressing", "rolling out", "in progress"),
        "suspended": ("suspended", "paused"),
        "missing": ("missing",),
        "unknown": ("unknown",)},
    "sync_status": {
        "synced": ("synced", "in sync"),
        "outofsync": ("outofsync", "out of sync", "not synced", "unsynced", "drift", "drifted"),
        "unknown": ("unknown",)},
    # Resource actions (measured: "restart", copied from a few-shot example, was about to run
    # when the person asked which actions a Deployment offers). Others are left as written.
    "action": {
        "restart": ("restart", "roll", "rolling", "bounce", "recycle", "redeploy"),
        "scale": ("scale", "replicas", "replica"),
        "pause": ("pause",), "resume": ("resume", "unpause"),
        "retry": ("retry",), "abort": ("abort", "cancel")},
}
_SHOWN = 20  # resources listed in a prompt; the fingerprint covers all of them
_DIFF_SHOWN = 40  # diff lines in a prompt; the fingerprint covers every line


def _is_change(call: Any) -> bool:
    """A call of a gated tool that names a change (an action call without an action only
    lists the resource's actions)."""
    return call["name"] in GATED_TOOLS and (call["name"] != ACTION_TOOL
                                            or bool(call["args"].get("action")))


def _is_real_sync(call: Any) -> bool:
    """A call of a gated tool that would change something (an action needs its name)."""
    return _is_change(call) and call["args"].get("dry_run", True) is False


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
    diff = capped_diff(dry_run, _DIFF_SHOWN)  # a dry run that carries diffs shows them
    return "\n".join([*lines, *([diff] if diff else [])])


def _describe_sync(tool_call: Any, state: Any, runtime: Any) -> str:
    evidence = ((state or {}).get(EVIDENCE_KEY) or {}).get(tool_call.get("id") or "", {})
    name = tool_call["args"].get("name", "?")
    if tool_call["name"] != SYNC_TOOL:  # rollback and actions render their own plan
        what = "Roll back" if tool_call["name"] == ROLLBACK_TOOL else "Run this action on"
        summary = str(evidence.get("summary", ""))
        diff = capped_diff(evidence, _DIFF_SHOWN)
        if diff and tool_call["name"] == ROLLBACK_TOOL:  # the plan's sentences (its summary
            # has the diff as bare lines), then the diff it would apply in a ```diff block
            summary = describe_plan({**evidence, "diffs": [], "omitted": None}) + "\n" + diff
        elif diff:
            summary += "\n" + diff
        return (f"{what} application '{name}'?\n{summary}\n"
                f"Evidence {evidence.get('evidence')}: if this changes before it runs, "
                "nothing runs and you are asked again.")
    return (f"Sync application '{name}' on the cluster?\n{describe_dry_run(evidence)}\n"
            f"Evidence {evidence.get('evidence')}: if this changes before the sync starts, "
            "nothing is synced and you are asked again.")


_NOTHING = {SYNC_TOOL: "Nothing was synced", ROLLBACK_TOOL: "Nothing was rolled back",
            ACTION_TOOL: "Nothing was run"}
_APPROVAL_ARGS = ("approved", "expected_evidence")


class ArgoCDEvidence:
    """The evidence source of Argo CD changes: the dry run Pilothouse runs itself."""

    def __init__(self, tools: dict[str, BaseTool]) -> None:
        self.gated = tools
        self.tools = frozenset(tools)

    def needs_evidence(self, call: ToolCall) -> bool:
        return _is_real_sync(call)

    async def evidence(self, call: ToolCall) -> dict[str, Any]:
        request = {k: v for k, v in call["args"].items() if k not in _APPROVAL_ARGS}
        answer = await call_for_payload(self.gated[call["name"]], {**request, "dry_run": True})
        if "error" in answer or "evidence" not in answer:
            return {"error": str(answer.get("error", "the dry run gave no evidence"))[:400]}
        return answer

    def asks(self, call: ToolCall, record: dict[str, Any]) -> bool:
        """Ask a person only about a real change whose dry run Pilothouse computed itself."""
        return "evidence" in record

    def describe(self, tool_call: Any, state: Any, runtime: Any) -> str:
        return _describe_sync(tool_call, state, runtime)

    def unapproved(self, call: ToolCall) -> dict[str, Any]:
        args = {k: v for k, v in call["args"].items() if k != "expected_evidence"}
        return {**args, "approved": False}

    def approved(self, call: ToolCall, record: dict[str, Any]) -> dict[str, Any]:
        return {**self.unapproved(call), "approved": True, "expected_evidence": record["evidence"]}

    def unrecorded(self, call: ToolCall, record: dict[str, Any]) -> dict[str, str]:
        return {"error": f"{_NOTHING[call['name']]}: Pilothouse could not run the dry run that an "
                         f"approval must show ({record.get('error', 'none')}).",
                "suggestion": "Check the application name and Argo CD, then ask again."}


def model_facing(tool: BaseTool) -> BaseTool:
    """`tool` with the arguments the model never chooses left out of its schema."""
    schema = tool.args_schema
    if not isinstance(schema, dict):
        return tool
    properties = dict(schema.get("properties") or {})
    hidden = {*_HIDDEN_ARGS, *(("project",) if "name" in properties else ())}
    if not hidden & properties.keys():
        return tool
    kept = {k: v for k, v in properties.items() if k not in hidden}
    narrowed = {**schema, "properties": kept,
                "required": [r for r in schema.get("required") or [] if r in kept]}
    return tool.model_copy(update={"args_schema": narrowed})


def sync_gate(tools: list[BaseTool]) -> EvidenceGate:
    """(approvals, middleware outside the gate, middleware inside it) for the gated tools."""
    return evidence_gate([ArgoCDEvidence({t.name: t for t in tools if t.name in GATED_TOOLS})])


#: Tools whose view answers the question that calls them: after one, the model writes its lead
#: (`runtime.tool_choice`). Not `get_application`: a status can call for events or logs.
ANSWERING_TOOLS = frozenset({
    "list_applications", SEARCH_TOOL, "list_applicationsets", "list_clusters",
    "list_projects", "get_application_history", "diff_application", "get_application_changes",
    "get_application_resource_tree", "get_application_events", "get_application_logs"})


@asynccontextmanager
async def open_argocd_toolkit(settings: Settings) -> AsyncIterator[Toolkit]:
    """Start the Argo CD tool server for `settings` and yield the agent's toolkit."""
    async with open_mcp_tools("argocd", stdio_parameters(settings)) as served:
        tools = [model_facing(tool) for tool in served]
        approvals, evidence, approved = sync_gate(tools)
        # One reader of the names for the agent's scopes and its inventory: a word looked up
        # for one is answered for the others (`ArgoCDNames.REUSE_SECONDS`).
        names = ArgoCDNames(settings, (APPLICATION, APPLICATIONSET, PROJECT, CLUSTER))
        yield Toolkit(
            name="argocd",
            prompt=ARGOCD_SYSTEM_PROMPT,
            tools=tools,
            approvals=approvals,
            after_approval=approved,
            extra_middleware=[ToolChoiceMiddleware(ANSWERING_TOOLS),
                              OneNamedResource(names, APPLICATION, ONE_APP_TOOLS),
                              # Inside: a question naming an app and its project is the app's.
                              OneNamedResource(names, PROJECT,
                                               PROJECT_TOOLS, subject=by_project,
                                               offered_with=(SEARCH_TOOL,),
                                               adds_subject=False),
                              # Inside both: an application or a project named decides first.
                              # The search alone takes the set's name: offered the listings
                              # too, the local model listed every set, or every healthy app,
                              # for "are the <set> apps healthy?" (measured).
                              OneNamedResource(names, APPLICATIONSET, (SEARCH_TOOL,),
                                               subject=by_query),
                              GroundedArgsMiddleware(
                                  GROUNDED_IDS, GROUNDED_FILTERS, GROUNDED_NAMES,
                                  subjects={**dict.fromkeys(ONE_APP_TOOLS, "name"),
                                            SEARCH_TOOL: "query"},
                                  is_change=_is_change, preview_phrases=PREVIEW_PHRASES,
                                  filtered=("list_applications",),
                                  about_one=dict.fromkeys(ONE_APP_TOOLS, "name")),
                              *evidence],
            inventory=Inventory([names]),
        )
