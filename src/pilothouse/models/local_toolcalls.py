"""Tool calls for the local model: the grammar that constrains a turn, and output parsing.

Qwen2.5-Coder-1.5B, given tools in its system prompt, writes calls in three ways: Qwen's
trained `<tool_call>{...}</tool_call>`, a bare `{"name": ...}` object, or (most often) a
```json block. With a grammar that allows `<tool_call>` or plain text not opening with `{`,
16 prompts with 4 tools came out 15/16 right: 7/8 tool requests called the right tool with
the right arguments (as ```json blocks, which we recognize), 8/8 greetings, questions, code
and JSON-example requests were answered as text. The miss: "Is the inventory app in sync?"
called `sync_application`. Forcing a `{"answer": ...}` JSON envelope instead answered 2/6
tool requests from thin air and called tools for 2/5 coding requests, so answers stay text.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages.tool import InvalidToolCall, ToolCall

MAX_PARALLEL_CALLS = 4


def _literal(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is also a valid GBNF literal


# One GBNF token: a string literal, a character class, a repetition count, a rule name.
_GBNF_TOKEN = re.compile(
    r'"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|\{[^}]*\}|[A-Za-z][A-Za-z0-9-]*|\s+|.',
    re.DOTALL,
)
_RULE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


def _prefixed_rules(grammar: str, prefix: str) -> dict[str, str]:
    """The rules of a grammar with every rule name, defined or referenced, given `prefix`.

    `json_schema_to_gbnf` names its rules the same for every schema ("root", "space", ...);
    prefixes let one turn's grammar hold the argument rules of several tools.
    """

    def rename(body: str) -> str:
        return "".join(
            prefix + t if _RULE_NAME.fullmatch(t) else t for t in _GBNF_TOKEN.findall(body)
        )

    rules: dict[str, str] = {}
    for line in grammar.splitlines():
        if " ::= " in line:
            name, body = line.split(" ::= ", 1)
            rules[prefix + name.strip()] = rename(body)
    return rules


#: Characters one string argument may hold under a grammar. Measured on held-out dev
#: questions: the local model wrote 1,024 tokens into one call (68 s) and was cut off there,
#: so the turn had no call at all. The longest string a tool takes (a command, a search
#: query, a step of a plan) is far shorter, and a command the person spells is run as spelled
#: without the model (`agents.shell_intent`); one that reaches the bound ends there as a call
#: the tool can answer. (The direct answer's schema bounds its one free text the same way.)
STRING_CHARS = 600
#: How llama.cpp's converter spells a string's characters: any number of them.
_UNBOUNDED_CHARS = " char* "


def _arguments_rules(schema: dict[str, Any], prefix: str,
                     string_chars: int = STRING_CHARS) -> dict[str, str]:
    """GBNF rules for one tool's arguments (the entry rule is `{prefix}root`); any JSON object
    if llama.cpp's converter does not handle the schema (the tool validates args anyway).
    Every string holds at most `string_chars` characters (GBNF's bounded repetition: the
    converter's `maxLength` nests one optional rule per character)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        grammar = json_schema_to_gbnf(json.dumps(schema))
    except Exception:
        grammar = json_schema_to_gbnf(json.dumps({"type": "object"}))
    grammar = grammar.replace(_UNBOUNDED_CHARS, f" char{{0,{string_chars}}} ")
    return _prefixed_rules(grammar, prefix)


#: The model setting (`ModelRequest.model_settings`) that asks a forced call among several
#: tools to open with a line of reasoning starting with its value (`build_grammar`).
REASON_FIRST = "reason_first"
#: Characters of the sentence a forced call may open with (`build_grammar`'s `reason_first`):
#: enough to name a command or a source, short enough to cost about a second.
REASON_CHARS = 80


def build_grammar(tools: list[dict[str, Any]], choice: str | None,
                  max_calls: int = MAX_PARALLEL_CALLS,
                  reason_first: str | None = None,
                  string_chars: int = STRING_CHARS) -> str | None:
    """A GBNF grammar for one turn, or None when the output is unconstrained.

    `choice` is "auto" (tool calls or a plain-text answer), "required" (at least one call of
    any tool), a tool name (a call of that tool), or "none". Forced calls take Qwen's trained
    form `<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>` with arguments
    constrained by each tool's schema. Under "auto" the model mostly writes ```json blocks,
    which the answer branch admits and `OutputSplitter` recognizes as calls. At most
    `max_calls` calls are allowed in one turn. `reason_first` (a forced call only) opens the
    output with one line that starts with those words, before the calls: the model says how
    the answer is found, then picks the tool that finds it. A string argument holds at most
    `string_chars` characters.
    """
    if not tools or choice == "none":
        return None
    rules: dict[str, str] = {}
    alternatives = []
    for i, tool in enumerate(tools):
        fn = tool["function"]
        if choice not in ("auto", "required") and fn["name"] != choice:
            continue
        rules.update(_arguments_rules(fn.get("parameters") or {}, f"call{i}-", string_chars))
        head = _literal('{"name": ' + json.dumps(fn["name"]) + ', "arguments": ')
        alternatives.append(f'{head} call{i}-root "}}"')
    if not alternatives:
        raise ValueError(f"tool_choice names {choice!r}, which is not among the bound tools")
    rules["call"] = '"<tool_call>\\n" ( ' + " | ".join(alternatives) + ' ) "\\n</tool_call>"'
    rules["calls"] = ("call" if max_calls <= 1
                      else f'call ( "\\n" call ){{0,{max_calls - 1}}}')
    if choice == "auto":
        # An answer may not open with "{" (given the chance, the model invents calls to tools
        # that do not exist, e.g. `greet` for "Hi!"), "<" (a malformed call) or whitespace.
        rules["answer"] = "[^<{ \\t\\n] [^\\x00]*"
        rules["root"] = "calls | answer"
    elif reason_first:
        rules["reason"] = f'{_literal(reason_first)} [^\\n<]{{1,{REASON_CHARS}}} "\\n"'
        rules["root"] = "reason calls"
    else:
        rules["root"] = "calls"
    return "\n".join(f"{name} ::= {rule}" for name, rule in rules.items())


def new_call_id() -> str:
    """An id in the OpenAI style, unique per call."""
    return f"call_{uuid.uuid4().hex}"


@dataclass
class ParsedOutput:
    """What the model said: answer text plus any tool calls it made."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    invalid_tool_calls: list[InvalidToolCall] = field(default_factory=list)


def _as_calls(raw: str, tool_names: frozenset[str]) -> list[ToolCall | InvalidToolCall] | None:
    """The calls in one JSON text, or None if it is not JSON naming bound tools."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    items = data if isinstance(data, list) else [data]
    if not items or not all(isinstance(i, dict) and i.get("name") in tool_names for i in items):
        return None
    calls: list[ToolCall | InvalidToolCall] = []
    for item in items:
        args = item.get("arguments", item.get("parameters", {}))
        if isinstance(args, str):  # some fine-tunes double-encode arguments
            with contextlib.suppress(ValueError):
                args = json.loads(args)
        if isinstance(args, dict):
            calls.append(ToolCall(type="tool_call", name=item["name"], args=args, id=new_call_id()))
        else:
            calls.append(
                InvalidToolCall(
                    type="invalid_tool_call",
                    name=item["name"],
                    args=json.dumps(args),
                    id=new_call_id(),
                    error="tool call arguments must be a JSON object",
                )
            )
    return calls


_FENCED = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_TAG = "<tool_call>"


class OutputSplitter:
    """Sorts generated text, as it arrives, into answer text to stream or tool calls.

    A reply is a call only if it *opens* with one: `<tool_call>` (Qwen's trained form, which the
    grammar allows) or a ```json block naming a bound tool, which is how this model writes
    calls on its own. The fenced form is left out of the grammar on purpose: a user asking for
    a JSON example would otherwise be forced into a tool call. Anything else is an answer and
    is released as soon as that is certain.
    """

    def __init__(self, tool_names: frozenset[str], reason_first: bool = False) -> None:
        self.tool_names = tool_names
        #: The line a `reason_first` grammar opens with: kept apart, never part of the reply.
        self.reason = ""
        self._reasoning = reason_first
        self.buffer = ""
        self.mode = "undecided"  # -> "text" | "calls"
        self.finished = False  # a call reply is complete: stop generating
        self._sent = 0

    def feed(self, piece: str) -> str:
        """Add generated text; return the answer text that can be shown now."""
        if self._reasoning:
            self.reason += piece
            if "\n" not in self.reason:
                return ""
            self.reason, piece = self.reason.split("\n", 1)
            self._reasoning = False
        self.buffer += piece
        if self.mode == "undecided":
            self._decide()
        if self.mode == "calls":
            self._check_calls_done()
            return ""
        if self.mode == "text":
            out, self._sent = self.buffer[self._sent :], len(self.buffer)
            return out
        return ""

    def _decide(self) -> None:
        s = self.buffer.lstrip()
        if not s or _TAG.startswith(s) or "```".startswith(s):
            return
        if s.startswith(_TAG):
            self.mode = "calls"
            return
        if not s.startswith("```"):
            self.mode = "text"
            return
        info = s[3:]
        if "json".startswith(info):
            return
        body = (info[4:] if info.startswith("json") else info).lstrip()
        if not body:
            return
        if body[0] not in "{[":
            self.mode = "text"
            return
        closed = _FENCED.match(s)
        if closed is not None:  # else: wait for the closing fence
            self.mode = "calls" if _as_calls(closed.group(1), self.tool_names) else "text"

    def _check_calls_done(self) -> None:
        # After the last complete call block, anything but another block is commentary.
        s = self.buffer.lstrip()
        pattern = _TAGGED if s.startswith("<tool_call>") else _FENCED
        end = 0
        while (m := pattern.match(s, end)) is not None:
            end = m.end()
            while end < len(s) and s[end].isspace():
                end += 1
        rest = s[end:]
        opener = "<tool_call>" if pattern is _TAGGED else "```"
        if end and rest and not (rest.startswith(opener) or opener.startswith(rest)):
            self.finished = True

    def finish(self) -> tuple[str, ParsedOutput]:
        """The answer text not yet released, and the parsed reply."""
        if self.mode == "calls":
            s = self.buffer.lstrip()
            tagged = s.startswith(_TAG)
            calls: list[ToolCall] = []
            invalid: list[InvalidToolCall] = []
            for block in (_TAGGED if tagged else _FENCED).findall(s):
                parsed = _as_calls(block, self.tool_names)
                if parsed is None and tagged:  # the grammar makes this rare: a cut-off call
                    parsed = [_invalid(block, "not a JSON call of a bound tool")]
                for call in parsed or []:
                    if call["type"] == "tool_call":
                        calls.append(call)
                    else:
                        invalid.append(call)
            if tagged and s.count(_TAG) > len(_TAGGED.findall(s)):
                invalid.append(_invalid(s, "the tool call was cut off by the output token limit"))
            return "", ParsedOutput(content="", tool_calls=calls, invalid_tool_calls=invalid)
        rest, self._sent = self.buffer[self._sent :], len(self.buffer)
        return rest, ParsedOutput(content=self.buffer.strip())


def _invalid(raw: str, error: str) -> InvalidToolCall:
    return InvalidToolCall(
        type="invalid_tool_call", name=None, args=raw, id=new_call_id(), error=error
    )


def parse_output(text: str, tool_names: frozenset[str] | set[str]) -> ParsedOutput:
    """Parse a complete reply the same way streaming does."""
    splitter = OutputSplitter(frozenset(tool_names))
    splitter.feed(text)
    return splitter.finish()[1]
