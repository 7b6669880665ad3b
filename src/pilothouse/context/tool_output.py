"""Structure-aware truncation of tool outputs, and the middleware that applies it to every tool.

A JSON list keeps whole leading items plus counts and a note on how to get the rest; a JSON
object keeps its small fields and trims its largest list the same way; text keeps head and tail
around a marker; output three times over the limit becomes a "refine your query" message with a
preview, because a model handed a sliver of a huge result tends to answer from the sliver.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from pilothouse.context.events import ContextAction, report
from pilothouse.models.tokens import CHARS_PER_TOKEN_ESTIMATE

REFUSE_FACTOR = 3
#: Artifact key of a tool result whose model-facing text is shorter than what the user sees
#: (`runtime.answer_views` shows it): a result cut to fit the model's window, or a sub-agent's
#: answer fitted to the supervisor's budget, is still the person's whole view.
SHOWN_KEY: Final = "shown"


@dataclass(frozen=True)
class Truncation:
    """What the guard did to one output."""

    original_chars: int
    kept_chars: int
    kind: str  # "json_list" | "json_object" | "text" | "refused"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _fit_list(items: list[Any], budget: int) -> int:
    """How many leading items of `items` fit in `budget` characters as JSON."""
    used, count = 2, 0
    for item in items:
        used += len(_dumps(item)) + 1
        if used > budget:
            break
        count += 1
    return count


def _truncate_json(value: Any, max_chars: int) -> str | None:
    """Trim a JSON list (or an object's largest list) to fit; None if that cannot work."""
    note_room = 260
    if isinstance(value, list):
        kept = _fit_list(value, max_chars - note_room)
        return _dumps({
            "items": value[:kept],
            "truncated": {
                "shown": kept,
                "total": len(value),
                "note": f"Output cut to fit the context: {kept} of {len(value)} items shown. "
                "Ask for a smaller page or a narrower filter to see the rest.",
            },
        })
    if isinstance(value, dict):
        lists = [(k, v) for k, v in value.items() if isinstance(v, list) and v]
        if not lists:
            return None
        key, items = max(lists, key=lambda kv: len(_dumps(kv[1])))
        rest = {k: v for k, v in value.items() if k != key}
        rest_size = len(_dumps(rest))
        if rest_size + note_room >= max_chars:
            return None
        kept = _fit_list(items, max_chars - rest_size - note_room - len(key))
        rest[key] = items[:kept]
        rest["truncated"] = {
            "field": key,
            "shown": kept,
            "total": len(items),
            "note": f"Output cut to fit the context: {kept} of {len(items)} '{key}' shown. "
            "Ask for the next page or a narrower filter to see the rest.",
        }
        return _dumps(rest)
    return None


def truncate_tool_output(content: str, max_chars: int, *,
                         refuse: bool = True) -> tuple[str, Truncation | None]:
    """Hold `content` to `max_chars`, keeping structure where there is one. A fresh result
    far over the limit is refused (`refuse`), so the model asks again for less; one already
    shown to the person is only cut for the model to read."""
    size = len(content)
    if size <= max_chars:
        return content, None
    if refuse and size > REFUSE_FACTOR * max_chars:
        preview = content[: max(200, max_chars // 5)]
        text = (
            f"[Output too large: {size:,} characters, the limit is {max_chars:,}. It was not "
            "passed on. Refine the query (a filter, a search term, a smaller page_size or "
            f"fewer lines) and call the tool again.]\nPreview:\n{preview}"
        )
        return text, Truncation(size, len(text), "refused")
    stripped = content.lstrip()
    if stripped[:1] in "[{":
        try:
            parsed = json.loads(content)
        except ValueError:
            parsed = None
        if parsed is not None:
            fitted = _truncate_json(parsed, max_chars)
            if fitted is not None and len(fitted) <= max_chars:
                kind = "json_list" if isinstance(parsed, list) else "json_object"
                return fitted, Truncation(size, len(fitted), kind)
    marker = f"\n[... {{cut:,}} characters cut of {size:,}; ask for a narrower result ...]\n"
    room = max_chars - len(marker) - 12
    head, tail = (room * 2) // 3, room // 3
    cut = size - head - tail
    text = content[:head] + marker.format(cut=cut) + content[size - tail :]
    return text, Truncation(size, len(text), "text")


def tool_output_limit(max_tool_output_size: int, window_tokens: int, window_share: float) -> int:
    """The character limit for one tool output: the configured size or a share of the window."""
    share = int(window_tokens * window_share * CHARS_PER_TOKEN_ESTIMATE)
    return max(200, min(max_tool_output_size, share))


def _content_text(message: ToolMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else _dumps(content)


class ToolOutputGuardMiddleware(AgentMiddleware):
    """Holds every tool result to `max_chars` before it enters the conversation."""

    def __init__(self, max_chars: int) -> None:
        super().__init__()
        self.max_chars = max_chars

    def _guard(self, result: ToolMessage | Command) -> ToolMessage | Command:
        if not isinstance(result, ToolMessage):
            return result
        text, truncation = truncate_tool_output(_content_text(result), self.max_chars)
        if truncation is None:
            return result
        report(ContextAction(
            "refused_output" if truncation.kind == "refused" else "truncated",
            f"{result.name or 'tool'} output cut from {truncation.original_chars:,} to "
            f"{truncation.kept_chars:,} characters ({truncation.kind})",
            layer="tool_output_guard",
            numbers={"original_chars": truncation.original_chars,
                     "kept_chars": truncation.kept_chars},
        ))
        return result.model_copy(update={"content": text})

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command],
    ) -> ToolMessage | Command:
        return self._guard(handler(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]],
    ) -> ToolMessage | Command:
        return self._guard(await handler(request))
