"""Render GitHub tool answers as compact JSON that fits `MAX_TOOL_OUTPUT_SIZE`.

A list answer loses whole items from its end (`http_api.output`) and says how many it kept and
which `per_page` would fit; a log answer loses the oldest lines of its tails (the newest lines
are the ones that explain a failure).
"""

from __future__ import annotations

from typing import Any

from pilothouse.tools.http_api.output import fit_largest_list
from pilothouse.tools.mcp_support import dumps

_NOTE_ROOM = 240


def _advice(kept: int, tail: bool) -> str:
    return f"ask again with per_page={max(1, kept)} to page through all of them"


def fit(answer: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """`answer`, shortened if its JSON would exceed `max_chars`."""
    if len(dumps(answer)) <= max_chars:
        return answer
    if answer.get("failing_steps") or answer.get("last_step"):
        return _fit_tails(answer, max_chars)
    return fit_largest_list(answer, max_chars, advice=_advice, note_room=_NOTE_ROOM)


def _fit_tails(answer: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """Drop the oldest tail lines, longest tail first, until the answer fits."""
    steps = [dict(s) for s in answer.get("failing_steps") or [answer["last_step"]]]
    for step in steps:
        step["tail"] = list(step["tail"])
    shaped = {**answer, **({"failing_steps": steps} if answer.get("failing_steps")
                           else {"last_step": steps[0]})}
    if "steps" in shaped and len(dumps(shaped)) > max_chars:
        shaped["steps"] = [s for s in shaped["steps"] if s.get("failed")]  # the overview goes
    excess = len(dumps(shaped)) + _NOTE_ROOM - max_chars
    dropped = 0
    while excess > 0 and any(step["tail"] for step in steps):
        longest = max(steps, key=lambda s: len(s["tail"]))
        excess -= len(dumps(longest["tail"].pop(0))) + 1
        dropped += 1
    shaped["truncated"] = {
        "field": "tail", "dropped_lines": dropped,
        "note": f"Cut to fit MAX_TOOL_OUTPUT_SIZE: the oldest {dropped} tail lines were "
                "dropped; ask for fewer tail_lines to see whole tails.",
    }
    return shaped
