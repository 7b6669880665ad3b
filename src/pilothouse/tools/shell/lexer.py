"""Split a command string into words and operators, refusing what we do not support.

Quoting is kept per word part, so later stages know that `'*'` is a literal star and `*` a
glob, and that `"$HOME"` is a variable. Anything that would make the shell run code we cannot
see (`$(...)`, backticks, `<(...)`, subshells, `&`) stops the lexer with a reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pilothouse.tools.shell.tree import PartKind, ShellSyntaxError, Word, WordPart

MAX_COMMAND_LENGTH = 65_536
# NUL cannot reach execve, and control or bidi characters can make the command a person is
# asked to approve read differently from the one that runs ("Trojan Source").
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069\u200e\u200f]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
# Longest operators first, so `>>` wins over `>` and `&&` over `&`.
_OPERATORS = (
    "<<<", "&>>", "&&", "||", ";;", "<<", ">>", "<>", ">|", "&>", ">&", "<&", "|&", "<(", ">(",
    "|", "&", ";", "<", ">", "(", ")", "\n",
)  # fmt: skip
_REFUSED_OPERATORS = {
    "<<<": "here-strings (<<<) are not supported; put the text in a file or pipe it with echo",
    "<<": "here-documents (<<) are not supported; write the text to a file first",
    ";;": "case statements are not supported",
    "<>": "read-write redirection (<>) is not supported",
    "<&": "input descriptor duplication (<&) is not supported",
    "|&": "|& is not supported; write 2>&1 | instead",
    "<(": "process substitution <(...) is not supported; write the output to a file first",
    ">(": "process substitution >(...) is not supported",
    "&": "background jobs (&) are not supported; commands run in the foreground with a timeout",
    "(": "subshells and functions ( ... ) are not supported; run the commands one at a time",
    ")": "subshells and functions ( ... ) are not supported; run the commands one at a time",
}


@dataclass
class Token:
    """A word (with its quoting) or an operator; `fd` is the `2` of `2>`."""

    kind: Literal["word", "op"]
    position: int
    word: Word | None = None
    op: str = ""
    fd: int | None = None


class Lexer:
    """Split a command string into words (with quoting kept) and operators."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.tokens: list[Token] = []

    def run(self) -> list[Token]:
        text = self.text
        while self.i < len(text):
            ch = text[self.i]
            if ch in " \t":
                self.i += 1
            elif ch == "#":
                raise ShellSyntaxError("comments (#) are not supported; remove them", self.i)
            elif self._operator_at(self.i):
                self._read_operator()
            else:
                self._read_word()
        return self.tokens

    def _operator_at(self, i: int) -> str | None:
        return next((op for op in _OPERATORS if self.text.startswith(op, i)), None)

    def _read_operator(self, fd: int | None = None) -> None:
        op = self._operator_at(self.i)
        assert op is not None
        if op in _REFUSED_OPERATORS:
            raise ShellSyntaxError(_REFUSED_OPERATORS[op], self.i)
        self.tokens.append(Token("op", self.i, op=";" if op == "\n" else op, fd=fd))
        self.i += len(op)

    def _read_word(self) -> None:
        text, start = self.text, self.i
        parts: list[WordPart] = []
        buf: list[str] = []

        def flush(kind: PartKind) -> None:
            if buf:
                parts.append(WordPart("".join(buf), kind))
                buf.clear()

        while self.i < len(text):
            ch = text[self.i]
            if ch in " \t" or self._operator_at(self.i):
                if ch in "<>" and not parts and buf and "".join(buf).isdigit():
                    fd = int("".join(buf))  # `2>file`: the digits are a descriptor, not a word
                    self._read_operator(fd)
                    return
                break
            if ch == "\\":
                flush("literal")
                if self.i + 1 >= len(text):
                    raise ShellSyntaxError("a trailing backslash escapes nothing", self.i)
                if text[self.i + 1] != "\n":  # backslash-newline continues the line
                    parts.append(WordPart(text[self.i + 1], "quoted"))
                self.i += 2
            elif ch == "'":
                flush("literal")
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unbalanced single quote", self.i, unbalanced_quote="'")
                parts.append(WordPart(text[self.i + 1 : end], "quoted"))
                self.i = end + 1
            elif ch == '"':
                flush("literal")
                self._read_double_quoted(parts)
            elif ch == "$":
                flush("literal")
                self._read_dollar(parts, in_quotes=False)
            elif ch == "`":
                raise ShellSyntaxError("command substitution with backticks is refused", self.i)
            else:
                buf.append(ch)
                self.i += 1
        flush("literal")
        word = Word(text[start : self.i], tuple(parts), start)
        if _BRACE_EXPANSION.search(word.unquoted_text):
            raise ShellSyntaxError("brace expansion {a,b} is not supported; list the items", start)
        self.tokens.append(Token("word", start, word=word))

    def _read_double_quoted(self, parts: list[WordPart]) -> None:
        text, open_at = self.text, self.i
        self.i += 1
        buf: list[str] = []
        while True:
            if self.i >= len(text):
                raise ShellSyntaxError("unbalanced double quote", open_at, unbalanced_quote='"')
            ch = text[self.i]
            if ch == '"':
                self.i += 1
                break
            if ch == "\\" and self.i + 1 < len(text) and text[self.i + 1] in '$`"\\\n':
                if text[self.i + 1] != "\n":
                    buf.append(text[self.i + 1])
                self.i += 2
            elif ch == "`":
                raise ShellSyntaxError("command substitution with backticks is refused", self.i)
            elif ch == "$":
                if buf:
                    parts.append(WordPart("".join(buf), "quoted"))
                    buf.clear()
                self._read_dollar(parts, in_quotes=True)
            else:
                buf.append(ch)
                self.i += 1
        # An empty "" is still a word (an empty argument), so always record it.
        parts.append(WordPart("".join(buf), "quoted"))

    def _read_dollar(self, parts: list[WordPart], *, in_quotes: bool) -> None:
        text, at = self.text, self.i
        nxt = text[at + 1] if at + 1 < len(text) else ""
        if nxt == "(":
            what = (
                "arithmetic expansion $((...))"
                if text.startswith("((", at + 1)
                else ("command substitution $(...)")
            )
            raise ShellSyntaxError(f"{what} is refused; run the inner command separately", at)
        if nxt == "{":
            end = text.find("}", at + 2)
            name = text[at + 2 : end] if end > 0 else ""
            if end < 0 or not _NAME.fullmatch(name):
                raise ShellSyntaxError("parameter expansion beyond ${NAME} is not supported", at)
            parts.append(WordPart(name, "var"))
            self.i = end + 1
            return
        match = _NAME.match(text, at + 1)
        if match:
            parts.append(WordPart(match.group(), "var"))
            self.i = match.end()
            return
        if nxt and (nxt.isdigit() or nxt in "?$!#@*-"):
            raise ShellSyntaxError(f"special parameter ${nxt} is not supported", at)
        if nxt in ("'", '"') and not in_quotes:
            raise ShellSyntaxError(f"${nxt}...{nxt} quoting is not supported", at)
        parts.append(WordPart("$", "quoted"))  # a lone `$` is literal, as in bash
        self.i += 1


def tokenize(text: str) -> list[Token]:
    """The tokens of `text`, or ShellSyntaxError."""
    if len(text) > MAX_COMMAND_LENGTH:
        raise ShellSyntaxError(
            f"the command is longer than {MAX_COMMAND_LENGTH} characters; split it up", 0
        )
    hidden = _HIDDEN.search(text)
    if hidden:
        raise ShellSyntaxError(
            f"control or bidirectional character U+{ord(hidden.group()):04X} is not allowed",
            hidden.start(),
        )
    return Lexer(text).run()
