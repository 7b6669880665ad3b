"""Expand parsed words into the exact argv that will run: `~`, known `$NAME`s, globs.

Expansion happens once, before the policy looks at a command, and the executor runs the
expanded argv as checked. Checking the unexpanded text would miss the classic injection where
a file named `--checkpoint-action=exec=sh x.sh` turns `tar cf a.tar *` into code execution.
"""

from __future__ import annotations

import glob
from collections.abc import Mapping
from pathlib import Path

from pilothouse.tools.shell.syntax import Word

#: Variables a command may use; anything else is refused, since its value would be a guess.
KNOWN_VARIABLES = ("HOME", "PWD", "USER", "LOGNAME", "LANG", "TERM", "WORKSPACE")
#: A glob that matches more than this is refused rather than passed as a huge argv.
MAX_GLOB_MATCHES = 5_000
_GLOB_CHARS = frozenset("*?[")


class ExpansionError(ValueError):
    """A word cannot be expanded safely (unknown variable, a glob that matches too much)."""

    def __init__(self, reason: str, word: Word) -> None:
        super().__init__(reason)
        self.reason = reason
        self.word = word


def expansion_variables(
    workspace: Path, cwd: Path, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The values of KNOWN_VARIABLES for a command running in `cwd` of `workspace`."""
    env = {} if env is None else env
    values = {
        "HOME": env.get("HOME", str(Path.home())),
        "PWD": str(cwd),
        "WORKSPACE": str(workspace),
    }
    for name in ("USER", "LOGNAME", "LANG", "TERM"):
        if name in env:
            values[name] = env[name]
    return values


def expand_word(word: Word, variables: Mapping[str, str], cwd: Path) -> list[str]:
    """Expand one word into zero or more arguments, as bash would (without word splitting)."""
    pieces: list[str] = []
    pattern: list[str] = []  # the same text with quoted glob characters escaped
    for index, part in enumerate(word.parts):
        if part.kind == "var":
            if part.text not in variables:
                raise ExpansionError(
                    f"${part.text} is not a known variable (known: "
                    + ", ".join(sorted(variables))
                    + "); write the value itself",
                    word,
                )
            value = variables[part.text]
            pieces.append(value)
            pattern.append(glob.escape(value))
            continue
        text = part.text
        if part.kind == "literal" and index == 0 and (text == "~" or text.startswith("~/")):
            text = variables.get("HOME", "~") + text[1:]
        elif part.kind == "literal" and index == 0 and text.startswith("~"):
            raise ExpansionError("~user expansion is not supported; write the path", word)
        pieces.append(text)
        pattern.append(text if part.kind == "literal" else glob.escape(text))
    value = "".join(pieces)
    if not any(p.kind == "literal" and _GLOB_CHARS & set(p.text) for p in word.parts):
        return [value]
    return _glob(word, "".join(pattern), value, cwd)


def _glob(word: Word, pattern: str, literal: str, cwd: Path) -> list[str]:
    matches: list[str] = []
    for match in glob.iglob(pattern, root_dir=cwd):
        matches.append(match)
        if len(matches) > MAX_GLOB_MATCHES:
            raise ExpansionError(
                f"{word.raw} matches more than {MAX_GLOB_MATCHES} paths; narrow the pattern",
                word,
            )
    # No match leaves the word as typed, like bash without `nullglob`.
    return sorted(matches) if matches else [literal]


def expand_words(words: tuple[Word, ...], variables: Mapping[str, str], cwd: Path) -> list[str]:
    """Expand every word of a command into its argv."""
    argv: list[str] = []
    for word in words:
        argv.extend(expand_word(word, variables, cwd))
    return argv


def expand_target(word: Word, variables: Mapping[str, str], cwd: Path) -> str:
    """Expand a redirection target, which must name exactly one file."""
    values = expand_word(word, variables, cwd)
    if len(values) != 1 or values[0] == "":
        raise ExpansionError(f"redirection target {word.raw} must name exactly one file", word)
    return values[0]
