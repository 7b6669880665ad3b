"""Parse the small, safe subset of POSIX shell that `run_command` accepts.

We wrote this tokenizer instead of using bashlex or tree-sitter-bash on purpose. A full bash
parser accepts everything and leaves us to find every dangerous node it can produce (command
and process substitution hide in words, arithmetic, parameter expansion operators, here-docs,
coprocesses...). An allow-list grammar does the opposite: it understands simple commands,
pipelines, `&&`, `||`, `;`, quoting, `$NAME` and the common redirections, and refuses
everything else with a reason. What we cannot parse we never run, so the subset can stay small.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

PartKind = Literal["literal", "quoted", "var"]
RESERVED_WORDS = frozenset(
    "if then else elif fi for while until do done case esac function select time coproc "
    "{ } [[ ]] !".split()
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")


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


# Longest operators first, so `>>` wins over `>` and `&&` over `&`.
_OPERATORS = (
    "<<<", "&>>", "&&", "||", ";;", "<<", ">>", "<>", ">|", "&>", ">&", "<&", "|&", "<(", ">(",
    "|", "&", ";", "<", ">", "(", ")", "\n",
)
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
class _Token:
    kind: Literal["word", "op"]
    position: int
    word: Word | None = None
    op: str = ""
    fd: int | None = None


class _Lexer:
    """Split a command string into words (with quoting kept) and operators."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.tokens: list[_Token] = []

    def run(self) -> list[_Token]:
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
        self.tokens.append(_Token("op", self.i, op=";" if op == "\n" else op, fd=fd))
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
        self.tokens.append(_Token("word", start, word=word))

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
            what = "arithmetic expansion $((...))" if text.startswith("((", at + 1) else (
                "command substitution $(...)"
            )
            raise ShellSyntaxError(f"{what} is refused; run the inner command separately", at)
        if nxt == "{":
            end = text.find("}", at + 2)
            name = text[at + 2 : end] if end > 0 else ""
            if end < 0 or not _NAME.fullmatch(name):
                raise ShellSyntaxError(
                    "parameter expansion beyond ${NAME} is not supported", at
                )
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


def parse(text: str) -> CommandList:
    """Parse `text` into pipelines and connectors, or raise ShellSyntaxError with the reason."""
    tokens = _Lexer(text).run()
    items: list[tuple[str, Pipeline]] = []
    connector = ""
    pos = 0
    while pos < len(tokens):
        pipeline, pos = _parse_pipeline(tokens, pos, len(text))
        items.append((connector, pipeline))
        if pos < len(tokens):
            connector = tokens[pos].op
            pos += 1
            if connector == ";" and pos == len(tokens):
                break  # a trailing `;` (or newline) ends the list
            if pos == len(tokens):
                raise ShellSyntaxError(f"'{connector}' must be followed by a command", len(text))
    if not items:
        raise ShellSyntaxError("the command is empty", 0)
    while tokens and tokens[-1].kind == "op" and tokens[-1].op == ";":
        tokens.pop()
    normalized = " ".join(t.word.raw if t.word else _op_text(t) for t in tokens)
    return CommandList(tuple(items), normalized)


def _op_text(token: _Token) -> str:
    return f"{token.fd}{token.op}" if token.fd is not None else token.op


def _parse_pipeline(tokens: list[_Token], pos: int, end: int) -> tuple[Pipeline, int]:
    commands: list[SimpleCommand] = []
    while True:
        command, pos = _parse_command(tokens, pos, end)
        commands.append(command)
        if pos < len(tokens) and tokens[pos].op == "|":
            pos += 1
            continue
        return Pipeline(tuple(commands)), pos


def _parse_command(tokens: list[_Token], pos: int, end: int) -> tuple[SimpleCommand, int]:
    words: list[Word] = []
    redirects: list[Redirect] = []
    start = tokens[pos].position if pos < len(tokens) else end
    while pos < len(tokens):
        tok = tokens[pos]
        if tok.kind == "word":
            assert tok.word is not None
            words.append(tok.word)
            pos += 1
        elif tok.op in {">", ">>", "<", ">|", "&>", "&>>", ">&"}:
            redirects.extend(_parse_redirect(tokens, pos, end))
            pos += 2
        else:
            break
    if not words:
        where = tokens[pos].position if pos < len(tokens) else end
        raise ShellSyntaxError("expected a command here", where if redirects else start)
    first = words[0]
    if first.raw in RESERVED_WORDS:
        raise ShellSyntaxError(
            f"shell keyword '{first.raw}' is not supported; run simple commands one at a time",
            first.position,
        )
    if _ASSIGNMENT.match(first.raw):
        raise ShellSyntaxError(
            "variable assignments (NAME=value cmd) are not supported", first.position
        )
    return SimpleCommand(tuple(words), tuple(redirects)), pos


def _parse_redirect(tokens: list[_Token], pos: int, end: int) -> list[Redirect]:
    tok = tokens[pos]
    target_tok = tokens[pos + 1] if pos + 1 < len(tokens) else None
    if target_tok is None or target_tok.word is None:
        raise ShellSyntaxError(f"redirection '{tok.op}' needs a target", tok.position)
    target = target_tok.word
    fd = tok.fd
    if fd is not None and fd > 2:
        raise ShellSyntaxError("only descriptors 0, 1 and 2 can be redirected", tok.position)
    if tok.op == ">&":
        if not target.raw.isdigit() or int(target.raw) > 2:
            raise ShellSyntaxError(">& must name descriptor 0, 1 or 2 (e.g. 2>&1)", tok.position)
        return [Redirect(1 if fd is None else fd, ">&", int(target.raw))]
    if tok.op in {"&>", "&>>"}:
        op: Literal[">", ">>"] = ">" if tok.op == "&>" else ">>"
        return [Redirect(1, op, target), Redirect(2, ">&", 1)]
    if tok.op == "<":
        return [Redirect(0 if fd is None else fd, "<", target)]
    return [Redirect(1 if fd is None else fd, ">>" if tok.op == ">>" else ">", target)]
