"""The parsed form of a command line: words with their quoting, redirections, pipelines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PartKind = Literal["literal", "quoted", "var"]


class ShellSyntaxError(ValueError):
    """The command is outside the supported shell subset; `position` points at the problem."""

    def __init__(self, reason: str, position: int, *, unbalanced_quote: str | None = None) -> None:
        super().__init__(f"{reason} (at character {position + 1})")
        self.reason = reason
        self.position = position
        #: The quote character left open, when that is the problem (drives quoting repair).
        self.unbalanced_quote = unbalanced_quote


@dataclass(frozen=True)
class WordPart:
    """A piece of a word: unquoted text (globs and `~` active), quoted text, or a variable."""

    text: str
    kind: PartKind


@dataclass(frozen=True)
class Word:
    """One shell word as typed (`raw`) and as quoted pieces (`parts`)."""

    raw: str
    parts: tuple[WordPart, ...]
    position: int

    @property
    def unquoted_text(self) -> str:
        return "".join(p.text for p in self.parts if p.kind == "literal")

    @property
    def has_variables(self) -> bool:
        return any(p.kind == "var" for p in self.parts)


@dataclass(frozen=True)
class Redirect:
    """`fd op target`: `>`/`>>`/`<` take a file word, `>&` duplicates another descriptor."""

    fd: int
    op: Literal[">", ">>", "<", ">&"]
    target: Word | int


@dataclass(frozen=True)
class SimpleCommand:
    """Words and redirections of one command; words[0] is the program."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]


@dataclass(frozen=True)
class Pipeline:
    """Commands joined by `|`."""

    commands: tuple[SimpleCommand, ...]


@dataclass(frozen=True)
class CommandList:
    """Pipelines joined by `;`, `&&`, `||`; the first connector is empty."""

    items: tuple[tuple[str, Pipeline], ...]
    normalized: str
