"""What a data specialist's model may do at each step of a turn: call first, answer last.

1. **The first call of a turn must call a tool.** An Argo CD or GitHub agent that answers from
   memory invents applications and statuses; the small local model does so readily when its
   prompt describes the answer's format (measured: 0 of 3 demo questions called a tool with
   the choice left open, 3 of 3 sensible calls when required).
2. **After an answering tool's result, the model answers.** Some tools' results are the
   answer to the kind of question that calls them (a page of applications, a deploy history,
   a diff, a code passage): their view is shown whole, and the model is asked only for its
   lead (`runtime.answer_views`). Offering the tools again there made the local model read the
   result once to decide not to call anything and again to write the lead, about half of a
   case's time (`pilothouse eval`'s per-call steps: 10-16 s of 22-41 s). A result that is an
   error or an empty page leaves the choice open, so the model can correct its call; so does
   any other tool's result (an application's status may call for its events).
3. **A first call may say how it will find the answer.** With `reason_first`, a model that
   can (the local one: `models.local_toolcalls.REASON_FIRST`) writes one line opening with
   those words before it picks among the tools offered, and the line is dropped.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from pilothouse.context.rewrite import RequestRewriteMiddleware, first_call
from pilothouse.models.local_toolcalls import REASON_FIRST
from pilothouse.runtime.answer_views import empty_page


def answered(messages: Sequence[BaseMessage], answering: Collection[str]) -> bool:
    """Whether the newest step's results all come from answering tools, whole and non-empty."""
    calls = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if calls is None or not calls.tool_calls:
        return False
    ids = {c["id"] for c in calls.tool_calls}
    results = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id in ids]
    return len(results) == len(ids) and all(
        r.name in answering and r.status != "error" and not empty_page(r) for r in results)


class ToolChoiceMiddleware(RequestRewriteMiddleware):
    """`tool_choice="required"` on a turn's first call; `"none"` after answering tools."""

    def __init__(self, answering_tools: Collection[str] = (),
                 reason_first: str | None = None) -> None:
        super().__init__()
        self.answering_tools = frozenset(answering_tools)
        self.reason_first = reason_first

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        if not request.messages or not request.tools or request.tool_choice not in (None,
                                                                                     "auto"):
            return request
        if first_call(request):
            if self.reason_first and getattr(request.model, "reasons_before_calls", False):
                settings = {**request.model_settings, REASON_FIRST: self.reason_first}
                return request.override(tool_choice="required", model_settings=settings)
            return request.override(tool_choice="required")
        if isinstance(request.messages[-1], ToolMessage) \
                and answered(request.messages, self.answering_tools):
            return request.override(tool_choice="none")
        return request
