"""Cross-turn correlation and dynamic context expansion, applied at each turn's first call.

Correlation tells the model which earlier tool results a follow-up refers to, so it answers
from them instead of calling the same tools again. Expansion looks up the files and symbols a
question names in the codebase index and puts those snippets in front of the model, bounded in
size, so "what does build_agent do?" starts from the code rather than a guess.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, HumanMessage

from pilothouse.context.compression import group_units
from pilothouse.context.events import ContextAction, report
from pilothouse.context.relevance import link_note
from pilothouse.context.rewrite import RequestRewriteMiddleware, add_turn_note, question_text


class Snippet(Protocol):
    """A piece of code found in the index."""

    @property
    def path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def text(self) -> str: ...


SnippetLookup = Callable[[str], Awaitable[Sequence[Snippet]]]


def _turn_start(messages: Sequence[BaseMessage]) -> bool:
    """True on the first model call of a turn (the question is the newest message)."""
    return bool(messages) and isinstance(messages[-1], HumanMessage)


class CorrelationMiddleware(RequestRewriteMiddleware):
    """Links a follow-up question to the earlier results it refers to."""

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        if not _turn_start(request.messages):
            return request
        note = link_note(question_text(request), group_units(request.messages[:-1]))
        if note is None:
            return request
        report(ContextAction("correlated", note, layer="correlation"))
        return add_turn_note(request, note)


class ExpansionMiddleware(AgentMiddleware):
    """Adds the code a question names (paths, symbols) from the index, within `max_chars`.

    The lookup is asynchronous (it asks the RAG tool server), so expansion happens in the
    async agent loop, which is how every Pilothouse interface runs agents.
    """

    def __init__(self, lookup: SnippetLookup, *, max_chars: int = 4000) -> None:
        super().__init__()
        self.lookup = lookup
        self.max_chars = max_chars

    def _apply(self, request: ModelRequest, snippets: Sequence[Snippet]) -> ModelRequest:
        if not snippets:
            return request
        blocks: list[str] = []
        used = 0
        for snippet in snippets:
            block = f"{snippet.path}:{snippet.start_line}-{snippet.end_line}\n{snippet.text}"
            block = block[: max(0, self.max_chars - used)]
            if not block:
                break
            blocks.append(block)
            used += len(block)
        paths = ", ".join(sorted({s.path for s in snippets}))
        report(ContextAction("expanded", f"added code from {paths}", layer="expansion",
                             numbers={"snippets": len(blocks), "chars": used}))
        text = "Code the question refers to (from the codebase index):\n\n" + "\n\n".join(blocks)
        return add_turn_note(request, text)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        if _turn_start(request.messages):
            found = await self.lookup(question_text(request))
            request = self._apply(request, found)
        return await handler(request)
