"""A grep for plain words that matched nothing, spelled again the way code spells those words.

People and models search for words ("max replicas", "db pool size"); code writes the same
words as one identifier (`maxReplicas`, `ORDERS_DB_POOL_SIZE`, `max-replicas`). Measured on
held-out dev questions: `grep -rn 'max replicas' deploy/helm/values-production.yaml` and
`grep -rn 'db pool size' deploy/helm/ deploy/k8s/` matched no line of files that set
`maxReplicas: 12` and `ORDERS_DB_POOL_SIZE: "20"`, and the answers said the settings were not
there. A grep whose whole pattern is two or more plain words, and that matched no line, is run
once more with the words joined by an optional separator and case ignored
(`max[-_. ]?replicas`), through the same policy; when that finds lines they are the answer,
and the result says what ran instead. A pattern with any regex or option of its own is the
caller's exact search and is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pilothouse.tools.shell.arguments import TEXT_VALUE_OPTIONS
from pilothouse.tools.shell.decision import PolicyDecision

_GREPS = frozenset({"grep", "egrep"})
#: Two or more plain words (letters and digits), separated by spaces, `_` or `-`.
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[ _-]+[A-Za-z0-9]+)+")
_SEPARATOR = re.compile(r"[ _-]+")
#: Options that make the pattern something else than words to find anywhere in a line, or
#: the search a test whose "nothing" is the answer (inverted, quiet, files without a match).
_EXACT_SHORT = frozenset("efFPxwvLq")
_EXACT_LONG = ("--regexp", "--file", "--fixed-strings", "--perl-regexp", "--line-regexp",
               "--word-regexp", "--invert-match", "--files-without-match", "--quiet",
               "--silent")


def single_command(decision: PolicyDecision) -> tuple[str, ...] | None:
    """The argv of a decision that runs one command, alone, with no `cd` or redirection."""
    if len(decision.plan) != 1 or decision.plan[0].chdir is not None:
        return None
    commands = decision.plan[0].commands
    if len(commands) != 1 or commands[0].redirects:
        return None
    return commands[0].argv


def _pattern_at(args: Sequence[str]) -> int | None:
    """Where grep's pattern is among `args` (None: given by an option, or not found)."""
    valued = TEXT_VALUE_OPTIONS["grep"]
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif arg == "--":
            return i + 1 if i + 1 < len(args) else None
        elif arg.startswith("--"):
            if arg.startswith(_EXACT_LONG):
                return None
            skip = arg in valued
        elif arg.startswith("-") and arg != "-":
            if set(arg[1:]) & _EXACT_SHORT:
                return None
            skip = arg in valued
        else:
            return i
    return None


def grep_pattern(argv: Sequence[str]) -> str | None:
    """The pattern a grep (`argv`) looks for anywhere in a line; None for another command, or
    for a search with a pattern of its own kind (`-e`, `-F`, `-w`, `-v` ...)."""
    if not argv or argv[0] not in _GREPS:
        return None
    at = _pattern_at(argv[1:])
    return argv[1 + at] if at is not None else None


def respelled(argv: Sequence[str]) -> tuple[list[str], str] | None:
    """`argv` with its pattern of plain words joined as identifiers spell them, and the
    words; None when `argv` is no grep for plain words."""
    if not argv or argv[0] not in _GREPS:
        return None
    args = list(argv[1:])
    at = _pattern_at(args)
    if at is None or not _WORDS.fullmatch(args[at].strip()):
        return None
    words = args[at].strip()
    args[at] = "[-_. ]?".join(_SEPARATOR.split(words))
    return [argv[0], "-i", "-E", *args], words
