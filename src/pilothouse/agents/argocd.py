"""The Argo CD agent: the Argo CD MCP server's tools, the seed's prompt strategy, sync approval.

A real sync is approved on evidence computed by code, whatever the model asked: after every
model turn that calls `sync_application(dry_run=false)`, `SyncEvidenceMiddleware` runs the dry
run itself and records it (with its fingerprint) in the conversation state; the approval prompt
shows that dry run; after approval, `SyncApprovedMiddleware` sends the fingerprint with the
sync, and the tool refuses if the dry run it repeats just before syncing no longer matches.
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
from pilothouse.tools.mcp_connect import open_mcp_tools

SYNC_TOOL = "sync_application"
EVIDENCE_KEY = "sync_evidence"
_SHOWN = 20  # resources listed in a prompt; the fingerprint covers all of them


class SyncEvidenceState(AgentState[Any]):
    """State of the sync gate: the dry run computed for each real sync call, by call id."""

    sync_evidence: NotRequired[Annotated[dict[str, dict[str, Any]], PrivateStateAttr]]


def _is_real_sync(call: Any) -> bool:
    return call["name"] == SYNC_TOOL and call["args"].get("dry_run", True) is False


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
    return (f"Sync application '{name}' on the cluster?\n{describe_dry_run(evidence)}\n"
            f"Evidence {evidence.get('evidence')}: if this changes before the sync starts, "
            "nothing is synced and you are asked again.")


SYNC_APPROVAL = InterruptOnConfig(
    allowed_decisions=["approve", "reject"],
    description=_describe_sync,
    when=_real_sync,
)


def _payload(result: Any) -> dict[str, Any]:
    """The JSON object an MCP tool answered with (text, or a list of content blocks)."""
    if isinstance(result, list):
        result = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in result)
    value = json.loads(str(result))
    if not isinstance(value, dict):
        raise ValueError("the dry run did not answer with an object")
    return value


class SyncEvidenceMiddleware(AgentMiddleware[SyncEvidenceState, Any, Any]):
    """Runs the dry run of every real sync the model asks for, before anyone is asked.

    An `after_model` hook is a graph step of its own, so its record is saved before the
    approval pause and read back unchanged by the prompt and by the check after approval.
    """

    state_schema = SyncEvidenceState

    def __init__(self, sync_tool: BaseTool) -> None:
        super().__init__()
        self.sync_tool = sync_tool

    async def _dry_run(self, args: dict[str, Any]) -> dict[str, Any]:
        request = {k: v for k, v in args.items() if k not in {"approved", "expected_evidence"}}
        try:
            answer = _payload(await self.sync_tool.ainvoke({**request, "dry_run": True}))
        except Exception as exc:  # the tool's own error text says what went wrong
            return {"error": str(exc)[:400]}
        if "error" in answer or "evidence" not in answer:
            return {"error": str(answer.get("error", "the dry run gave no evidence"))[:400]}
        return answer

    async def aafter_model(self, state: SyncEvidenceState,
                           runtime: Runtime[Any]) -> dict[str, Any] | None:
        last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
        calls = [c for c in (last.tool_calls if last else []) if _is_real_sync(c)]
        if not calls:
            return None
        return {EVIDENCE_KEY: {c["id"]: await self._dry_run(dict(c["args"])) for c in calls
                               if c.get("id")}}


class SyncApprovedMiddleware(AgentMiddleware):
    """Sets `approved` and the approved evidence on sync calls, never from the model.

    It sits inside the human-in-the-loop gate, so a real sync reaches it only after a person
    approved the recorded dry run; whatever `approved` or evidence the model wrote is replaced.
    A real sync without a recorded dry run was never shown to anyone, so it does not run.
    """

    def _mark(self, request: ToolCallRequest) -> ToolCallRequest | ToolMessage:
        call = request.tool_call
        if call["name"] != SYNC_TOOL:
            return request
        args = {k: v for k, v in call["args"].items() if k != "expected_evidence"}
        args["approved"] = False
        if _is_real_sync(call):
            evidence = _evidence_of(request)
            if "evidence" not in evidence:
                return ToolMessage(
                    content=json.dumps({
                        "error": "Nothing was synced: Pilothouse could not run the dry run "
                                 f"that an approval must show ({evidence.get('error', 'none')}).",
                        "kind": "ApprovalRequired",
                        "suggestion": "Check the application name and Argo CD, then ask again.",
                    }),
                    name=SYNC_TOOL, tool_call_id=call["id"], status="error")
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
    """(approvals, middleware outside the gate, middleware inside it) for the sync tool."""
    sync_tool = next((t for t in tools if t.name == SYNC_TOOL), None)
    if sync_tool is None:  # read-only: nothing to approve
        return {}, [], []
    return ({SYNC_TOOL: SYNC_APPROVAL}, [SyncEvidenceMiddleware(sync_tool)],
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
