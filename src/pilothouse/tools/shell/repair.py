"""Suggest fixes for unbalanced quotes, and say when exactly one fix is plausible.

Models often write `grep it's notes.txt` or forget a closing quote. We never guess silently:
a repair is offered as `repaired` only when it is unambiguous (an apostrophe between two
letters is a letter, not a quote; or only one place to close the quote yields a command), and
the caller still runs it through the full policy before anything executes.
"""

from __future__ import annotations

import re

from pilothouse.tools.shell.syntax import ShellSyntaxError, parse

MAX_SUGGESTIONS = 3
_SHELL_SPECIAL = re.compile(r'["$`\\]')


def _parses(command: str) -> bool:
    try:
        parse(command)
    except ShellSyntaxError:
        return False
    return True


def _segment(command: str, position: int) -> tuple[int, int]:
    """Bounds of the whitespace-delimited piece of `command` around `position`."""
    start = position
    while start > 0 and not command[start - 1].isspace():
        start -= 1
    end = position
    while end < len(command) and not command[end].isspace():
        end += 1
    return start, end


def _literal(segment: str) -> str:
    if not _SHELL_SPECIAL.search(segment):
        return f'"{segment}"'
    return "'" + segment.replace("'", "'\"'\"'") + "'"


def quoting_repairs(command: str, error: ShellSyntaxError) -> list[str]:
    """Commands that fix the unbalanced quote in `command`, at most MAX_SUGGESTIONS."""
    quote = error.unbalanced_quote
    if quote is None:
        return []
    position = error.position
    start, end = _segment(command, position)
    segment = command[start:end]
    offset = position - start
    is_apostrophe = (
        quote == "'"
        and segment.count("'") == 1
        and 0 < offset < len(segment) - 1
        and segment[offset - 1].isalnum()
        and segment[offset + 1].isalnum()
    )
    if is_apostrophe:
        candidate = command[:start] + _literal(segment) + command[end:]
        return [candidate] if _parses(candidate) else []
    # Otherwise close the quote at the end of one of the following words.
    boundaries = [m.start() for m in re.finditer(r"(?<=\S)\s", command[position:])]
    cuts = [position + b for b in boundaries] + [len(command.rstrip())]
    candidates: list[str] = []
    for cut in dict.fromkeys(cuts):
        candidate = command[:cut] + quote + command[cut:]
        if _parses(candidate) and candidate not in candidates:
            candidates.append(candidate)
    return candidates[:MAX_SUGGESTIONS]


def describe_repairs(candidates: list[str]) -> str | None:
    """One sentence telling the caller which quoted form(s) to send instead."""
    if not candidates:
        return None
    if len(candidates) == 1:
        return f"Quote the argument and send: {candidates[0]}"
    return "The quote can close in several places; send one of: " + " | ".join(
        f"`{c}`" for c in candidates
    )
