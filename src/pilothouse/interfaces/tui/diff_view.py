"""Diffs in the TUI: answers' ```diff fences and approvals' evidence, coloured by line kind.

Textual's Markdown highlights fences with Pygments through a theme that has no style for
inserted or deleted lines, so a diff would show in one colour. Here a diff fence is coloured
by the same line rules as the CLI (`interfaces.diff_text`), in the theme's own success, error
and accent colours, so it reads on dark and light themes alike.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from pilothouse.interfaces.diff_text import DIFF_LANGUAGES, LineKind, fenced_parts, line_kinds

#: Textual styles per kind of diff line (theme variables, resolved when shown).
TUI_DIFF_STYLES: dict[LineKind, str] = {
    "add": "$text-success", "del": "$text-error", "hunk": "$text-accent", "file": "bold",
    "context": "",
}


def diff_content(code: str) -> Content:
    """A unified diff as Textual content, each line styled by its kind."""
    lines = code.rstrip("\n").splitlines()
    parts: list[str | tuple[str, str]] = []
    for number, (line, kind) in enumerate(zip(lines, line_kinds(lines), strict=True)):
        if number:
            parts.append("\n")
        parts.append((line, TUI_DIFF_STYLES[kind]))
    return Content.assemble(*parts)


def evidence_content(description: str) -> Content:
    """An approval's description: its sentences as written, its diffs coloured."""
    parts: list[str | Content] = []
    for number, (is_diff, chunk) in enumerate(fenced_parts(description.strip("\n"))):
        if number:
            parts.append("\n")
        parts.append(diff_content(chunk) if is_diff else chunk)
    return Content.assemble(*parts)


class DiffFence(MarkdownFence):
    """A Markdown fence that colours a diff by line, any other language as Textual does."""

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False,
                  dark: bool = False) -> Content:
        if (language or "").lower() in DIFF_LANGUAGES:
            return diff_content(code)
        return super().highlight(code, language, ansi=ansi, dark=dark)


class AnswerMarkdown(Markdown):
    """The assistant's Markdown, with diff fences that show what is added and removed."""

    def get_block_class(self, block_name: str) -> type[MarkdownBlock]:
        if block_name in ("fence", "code_block"):
            return DiffFence
        return super().get_block_class(block_name)
