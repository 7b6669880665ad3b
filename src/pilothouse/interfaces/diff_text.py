"""Unified diffs as coloured text for the terminal interfaces (the CLI and the TUI).

Tool views carry each diff in a ```diff fence (`tools.argocd.change_views`; `-` live,
`+` desired), and approval descriptions carry the diff a change would apply the same way. On a
terminal added lines show green, removed lines red, hunk headers cyan and file headers bold;
the `+`/`-`/`@@` markers stay, so the text reads the same without colour (a pipe, a log, a
reader who does not see red and green apart). The web UI classifies lines by the same rules
(`web/static/markdown.js`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import ClassVar, Literal

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown, MarkdownElement
from rich.text import Text

LineKind = Literal["add", "del", "hunk", "file", "context"]

#: The style of each kind of diff line (Rich style names, which Textual reads too).
DIFF_STYLES: dict[LineKind, str] = {
    "add": "green", "del": "red", "hunk": "cyan", "file": "bold", "context": "",
}
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w#+.-]*)\s*$")
DIFF_LANGUAGES = frozenset({"diff", "patch", "udiff"})


def line_kinds(lines: Sequence[str]) -> list[LineKind]:
    """The kind of each line of a unified diff.

    A `--- ` line is a file header only when a `+++ ` line follows it (and that `+++ ` line
    is one too): several resources' diffs may share one block, and a removed line may itself
    start with `--`.
    """
    kinds: list[LineKind] = []
    for number, line in enumerate(lines):
        following = lines[number + 1] if number + 1 < len(lines) else ""
        opens_file = line.startswith("--- ") and following.startswith("+++ ")
        if opens_file or (line.startswith("+++ ") and kinds and kinds[-1] == "file"):
            kinds.append("file")
        elif line.startswith("@@"):
            kinds.append("hunk")
        elif line.startswith("+"):
            kinds.append("add")
        elif line.startswith("-"):
            kinds.append("del")
        else:
            kinds.append("context")
    return kinds


def diff_text(code: str) -> Text:
    """A unified diff as Rich text, each line styled by its kind."""
    lines = code.rstrip("\n").splitlines()
    text = Text()
    for number, (line, kind) in enumerate(zip(lines, line_kinds(lines), strict=True)):
        if number:
            text.append("\n")
        text.append(line, DIFF_STYLES[kind])
    return text


def fenced_parts(text: str) -> Iterator[tuple[bool, str]]:
    """(is_diff, chunk) pieces of Markdown `text`: each ```diff block's body (without its
    fence lines), and the text between them unchanged."""
    plain: list[str] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if fence and fence.group(2).lower() in DIFF_LANGUAGES:
            end = index + 1
            while end < len(lines) and not lines[end].strip().startswith(fence.group(1)):
                end += 1
            if plain:
                yield False, "\n".join(plain)
                plain = []
            yield True, "\n".join(lines[index + 1:end])
            index = end + 1
            continue
        plain.append(lines[index])
        index += 1
    if plain:
        yield False, "\n".join(plain)


def evidence_text(description: str, style: str = "") -> Text:
    """An approval's description as Rich text: its sentences in `style`, its diffs coloured."""
    text = Text()
    for number, (is_diff, chunk) in enumerate(fenced_parts(description.strip("\n"))):
        if number:
            text.append("\n")
        text.append_text(diff_text(chunk) if is_diff else Text(chunk, style))
    return text


class _DiffCodeBlock(CodeBlock):
    """A code block that shows a ```diff fence as coloured diff lines, any other as before."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.lexer_name.lower() in DIFF_LANGUAGES:
            yield diff_text(str(self.text))
        else:
            yield from super().__rich_console__(console, options)


class DiffMarkdown(Markdown):
    """Rich Markdown whose diff fences read as diffs: green `+`, red `-`, cyan `@@`."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements, "fence": _DiffCodeBlock, "code_block": _DiffCodeBlock}
