"""Fit a tool answer into `MAX_TOOL_OUTPUT_SIZE` by shortening its largest list.

The agent has its own tool-output guard, but these servers are also used on their own (any MCP
client), so they never emit more than the configured size: the answer's biggest list is cut to
what fits, whole items only, and a `truncated` note says how many were shown and how to see the
rest. Lists of log lines keep their tail (the newest lines matter); every other list its head.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pilothouse.tools.mcp_support import dumps

#: (kept, keeps_tail) -> how to ask for the rest, e.g. "ask with page_size=12".
Advice = Callable[[int, bool], str]


def fit_largest_list(answer: dict[str, Any], max_chars: int, *, advice: Advice,
                     tail_fields: frozenset[str] = frozenset(),
                     note_room: int = 240) -> dict[str, Any]:
    """`answer`, with its largest list shortened if the JSON would exceed `max_chars`."""
    if len(dumps(answer)) <= max_chars:
        return answer
    lists = [(key, value) for key, value in answer.items() if isinstance(value, list) and value]
    if not lists:
        return answer
    key, items = max(lists, key=lambda kv: len(dumps(kv[1])))
    rest = {k: v for k, v in answer.items() if k != key}
    budget = max_chars - len(dumps(rest)) - len(key) - note_room
    tail = key in tail_fields
    kept, used = 0, 2
    for item in reversed(items) if tail else items:
        used += len(dumps(item)) + 1
        if used > budget:
            break
        kept += 1
    rest[key] = (items[len(items) - kept:] if kept else []) if tail else items[:kept]
    rest["truncated"] = {
        "field": key, "shown": kept, "total": len(items),
        "note": f"Cut to fit MAX_TOOL_OUTPUT_SIZE: {kept} of {len(items)} {key} shown; "
                f"{advice(kept, tail)}.",
    }
    return rest
