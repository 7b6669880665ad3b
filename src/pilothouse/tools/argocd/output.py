"""Render tool answers as compact JSON that fits `MAX_TOOL_OUTPUT_SIZE`.

The agent has its own tool-output guard, but this server is also used on its own (any MCP
client), so it never emits more than the configured size: the answer's biggest list is cut to
what fits, whole items only, and a `truncated` note says how to see the rest. Log lines keep
their tail (the newest lines matter); every other list keeps its head.
"""

from __future__ import annotations

from typing import Any

from pilothouse.tools.mcp_support import dumps

_TAIL_KEEPING = frozenset({"lines"})
_NOTE_ROOM = 220


def fit(answer: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """`answer`, with its largest list shortened if the JSON would exceed `max_chars`."""
    if len(dumps(answer)) <= max_chars:
        return answer
    lists = [(key, value) for key, value in answer.items() if isinstance(value, list) and value]
    if not lists:
        return answer
    key, items = max(lists, key=lambda kv: len(dumps(kv[1])))
    rest = {k: v for k, v in answer.items() if k != key}
    budget = max_chars - len(dumps(rest)) - len(key) - _NOTE_ROOM
    tail = key in _TAIL_KEEPING
    kept, used = 0, 2
    for item in reversed(items) if tail else items:
        used += len(dumps(item)) + 1
        if used > budget:
            break
        kept += 1
    shown = (items[len(items) - kept:] if kept else []) if tail else items[:kept]
    advice = ("ask for fewer tail_lines" if tail else
              f"ask with page_size={max(1, kept)} (or a narrower filter)")
    rest[key] = shown
    rest["truncated"] = {
        "field": key, "shown": kept, "total": len(items),
        "note": f"Cut to fit MAX_TOOL_OUTPUT_SIZE: {kept} of {len(items)} {key} shown; {advice}.",
    }
    return rest
