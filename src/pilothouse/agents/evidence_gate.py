"""Evidence-bound approvals: one gate for every change a person approves.

A gated call (an Argo CD sync, rollback or resource action; a shell command that needs
approval) is approved on evidence code computed, never on what the model wrote. After every
model turn, `EvidenceMiddleware` asks the call's `EvidenceSource` for the evidence (a dry run;
the digests of the files a command names) and records it, with its fingerprint, in the graph
state. An `after_model` hook is a graph step of its own, so the record is saved before the
approval pause and read back unchanged by the prompt and by the check after approval, even
after a resume or a restart. The prompt shows the record; after approval,
`ApprovedCallMiddleware` (inside the human-in-the-loop gate) hands the recorded evidence to the
tool, which computes it again just before acting and refuses if it differs: nothing runs and
the person is asked again. A change with no recorded evidence was never shown to anyone, so it
does not run.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Annotated, Any, NamedTuple, NotRequired, Protocol

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

#: The state key of the records, by tool call id.
EVIDENCE_KEY = "approval_evidence"


class EvidenceState(AgentState[Any]):
    """State of the gate: the evidence computed for each gated call, by call id."""

    approval_evidence: NotRequired[Annotated[dict[str, dict[str, Any]], PrivateStateAttr]]


class EvidenceSource(Protocol):
    """One kind of gated change: which calls need evidence, what it is, how it is sent."""

    @property
    def tools(self) -> Collection[str]:
        """The tools this source gates."""

    def needs_evidence(self, call: ToolCall) -> bool:
        """Whether `call` would change something (and so needs a person and evidence)."""

    async def evidence(self, call: ToolCall) -> dict[str, Any]:
        """The record a person is shown: `evidence` (the fingerprint) and more; or `error`."""

    def asks(self, call: ToolCall, record: dict[str, Any]) -> bool:
        """Whether to stop for a person, given what was recorded for `call`."""

    def describe(self, tool_call: Any, state: Any, runtime: Any) -> str:
        """The approval prompt (`recorded(state, tool_call)` is what it shows)."""

    def approved(self, call: ToolCall, record: dict[str, Any]) -> dict[str, Any]:
        """The arguments of an approved call: the model's, plus the approved evidence."""

    def unapproved(self, call: ToolCall) -> dict[str, Any]:
        """The arguments of a call nobody approved: whatever approval the model wrote, removed."""

    def unrecorded(self, call: ToolCall, record: dict[str, Any]) -> dict[str, str]:
        """`error` and `suggestion` for a change that has no evidence, so it never runs."""


def recorded(state: Any, tool_call: Any) -> dict[str, Any]:
    """The record of `tool_call` in `state` (empty when there is none)."""
    records = (state or {}).get(EVIDENCE_KEY) or {}
    return dict(records.get(tool_call.get("id") or "", {}))


def _source_of(sources: Sequence[EvidenceSource], name: str) -> EvidenceSource | None:
    return next((s for s in sources if name in s.tools), None)


def interrupt_config(source: EvidenceSource) -> InterruptOnConfig:
    """The human-in-the-loop configuration of `source`'s tools."""

    def when(request: ToolCallRequest) -> bool:
        call = request.tool_call
        return source.needs_evidence(call) and source.asks(call, recorded(request.state, call))

    return InterruptOnConfig(allowed_decisions=["approve", "reject"],
                             description=source.describe, when=when)


class EvidenceMiddleware(AgentMiddleware[EvidenceState, Any, Any]):
    """Computes and records the evidence of every gated call, before anyone is asked."""

    state_schema = EvidenceState

    def __init__(self, sources: Sequence[EvidenceSource]) -> None:
        super().__init__()
        self.sources = list(sources)

    async def _evidence(self, source: EvidenceSource, call: ToolCall) -> dict[str, Any]:
        try:
            return await source.evidence(call)
        except Exception as exc:  # a dead tool server: its error says what went wrong
            return {"error": str(exc)[:400]}

    async def aafter_model(self, state: EvidenceState,
                           runtime: Runtime[Any]) -> dict[str, Any] | None:
        last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
        records: dict[str, dict[str, Any]] = {}
        for call in last.tool_calls if last else []:
            source = _source_of(self.sources, call["name"])
            if source is not None and call.get("id") and source.needs_evidence(call):
                records[str(call["id"])] = await self._evidence(source, call)
        return {EVIDENCE_KEY: records} if records else None


class ApprovedCallMiddleware(AgentMiddleware):
    """Sets the approval arguments of gated calls from the record, never from the model.

    It sits inside the human-in-the-loop gate, so a change reaches it only after a person
    approved the recorded evidence; whatever approval the model wrote is replaced.
    """

    def __init__(self, sources: Sequence[EvidenceSource]) -> None:
        super().__init__()
        self.sources = list(sources)

    def _mark(self, request: ToolCallRequest) -> ToolCallRequest | ToolMessage:
        call = request.tool_call
        source = _source_of(self.sources, call["name"])
        if source is None:
            return request
        if not source.needs_evidence(call):
            return request.override(tool_call={**call, "args": source.unapproved(call)})
        record = recorded(request.state, call)
        if "evidence" not in record:
            refusal = source.unrecorded(call, record)
            return ToolMessage(content=json.dumps({**refusal, "kind": "ApprovalRequired"}),
                               name=call["name"], tool_call_id=call["id"], status="error")
        return request.override(tool_call={**call, "args": source.approved(call, record)})

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


class EvidenceGate(NamedTuple):
    """What a toolkit needs: approvals, middleware outside the gate, middleware inside it."""

    approvals: dict[str, InterruptOnConfig]
    outside: list[AgentMiddleware[Any, Any, Any]]
    inside: list[AgentMiddleware[Any, Any, Any]]


def evidence_gate(sources: Sequence[EvidenceSource]) -> EvidenceGate:
    """The gate over `sources` (empty when no source has a tool: nothing to approve)."""
    sources = [s for s in sources if s.tools]
    if not sources:
        return EvidenceGate({}, [], [])
    approvals = {name: interrupt_config(s) for s in sources for name in s.tools}
    return EvidenceGate(approvals, [EvidenceMiddleware(sources)],
                        [ApprovedCallMiddleware(sources)])
