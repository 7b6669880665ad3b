"""Render Argo CD tool answers as compact JSON that fits `MAX_TOOL_OUTPUT_SIZE`.

The largest list is cut (`http_api.output`); log lines keep their tail, and the note says to
ask for a smaller page or fewer lines.
"""

from __future__ import annotations

from typing import Any

from pilothouse.tools.http_api.output import fit_largest_list

_TAIL_KEEPING = frozenset({"lines"})


def _advice(kept: int, tail: bool) -> str:
    if tail:
        return "ask for fewer tail_lines"
    return f"ask with page_size={max(1, kept)} (or a narrower filter)"


def fit(answer: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """`answer`, with its largest list shortened if the JSON would exceed `max_chars`."""
    return fit_largest_list(answer, max_chars, advice=_advice, tail_fields=_TAIL_KEEPING,
                            note_room=220)
