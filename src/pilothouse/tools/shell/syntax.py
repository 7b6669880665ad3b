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
from typing import Literal

from pilothouse.tools.shell.lexer import Token, tokenize
from pilothouse.tools.shell.tree import (
    CommandList,
    Pipeline,
    Redirect,
    ShellSyntaxError,
    SimpleCommand,
    Word,
    WordPart,
)

__all__ = ["CommandList", "Pipeline", "Redirect", "ShellSyntaxError", "SimpleCommand", "Word",
           "WordPart", "parse"]

RESERVED_WORDS = frozenset({
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "time", "coproc", "{", "}", "[[", "]]", "!",
})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


def parse(text: str) -> CommandList:
    """Parse `text` into pipelines and connectors, or raise ShellSyntaxError with the reason."""
    tokens = tokenize(text)
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


def _op_text(token: Token) -> str:
    return f"{token.fd}{token.op}" if token.fd is not None else token.op


def _parse_pipeline(tokens: list[Token], pos: int, end: int) -> tuple[Pipeline, int]:
    commands: list[SimpleCommand] = []
    while True:
        command, pos = _parse_command(tokens, pos, end)
        commands.append(command)
        if pos < len(tokens) and tokens[pos].op == "|":
            pos += 1
            continue
        return Pipeline(tuple(commands)), pos


def _parse_command(tokens: list[Token], pos: int, end: int) -> tuple[SimpleCommand, int]:
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


def _parse_redirect(tokens: list[Token], pos: int, end: int) -> list[Redirect]:
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
