"""Qwen2.5 prompt rendering, tool-call grammar and output parsing for the local model.

We render the conversation ourselves, following the chat template embedded in the GGUF, rather
than use llama-cpp-python's chat handlers: `chatml-function-calling` drops `role: tool` messages
and calls a tool even for "Hi!", and the generic handler does not parse calls at all. Writing the
template here also keeps every turn's prompt a strict extension of the previous one, so
llama.cpp reuses the cached prefix instead of re-reading the tool schemas at ~90 tokens/s.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import InvalidToolCall, ToolCall

DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
TOOLS_PREAMBLE = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_POSTAMBLE = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)
# Control tokens that, inside message text, would let content forge turns (we tokenize the
# prompt with special tokens enabled so our own markers become single tokens).
_SPECIAL = re.compile(r"<\|(im_start|im_end|endoftext)\|>")
# Schema keys that cost prompt tokens but tell the model nothing about what to pass.
_NOISE_KEYS = frozenset({"title", "additionalProperties", "$schema", "examples"})
MAX_PARALLEL_CALLS = 4
_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)


def _clean(text: str) -> str:
    return _SPECIAL.sub(lambda m: f"<| {m.group(1)} |>", text)


def message_text(message: BaseMessage) -> str:
    """The plain text of a message, joining text blocks of multi-part content."""
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def _strip_noise(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_noise(v) for k, v in schema.items() if k not in _NOISE_KEYS}
    if isinstance(schema, list):
        return [_strip_noise(v) for v in schema]
    return schema


def compact_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-format tool reduced to name, description and parameters, without titles."""
    fn = tool["function"]
    compact: dict[str, Any] = {"name": fn["name"]}
    if fn.get("description"):
        compact["description"] = fn["description"]
    compact["parameters"] = _strip_noise(fn.get("parameters") or {"type": "object"})
    return {"type": "function", "function": compact}


def _render_call(call: ToolCall) -> str:
    body = json.dumps({"name": call["name"], "arguments": call["args"]}, ensure_ascii=False)
    return f"<tool_call>\n{_clean(body)}\n</tool_call>"


def render_prompt(messages: list[BaseMessage], tools: list[dict[str, Any]] | None = None) -> str:
    """Render messages (and OpenAI-format tools) as a Qwen2.5 ChatML prompt ending in an
    open assistant turn, exactly as the GGUF's own chat template would."""
    system = DEFAULT_SYSTEM
    rest = messages
    if messages and isinstance(messages[0], SystemMessage):
        system = _clean(message_text(messages[0]))
        rest = messages[1:]
    out = ["<|im_start|>system\n", system]
    if tools:
        out.append(TOOLS_PREAMBLE)
        for tool in tools:
            out.append("\n" + _clean(json.dumps(compact_tool(tool), ensure_ascii=False)))
        out.append(TOOLS_POSTAMBLE)
    out.append("<|im_end|>\n")
    in_tool_turn = False
    for message in rest:
        if isinstance(message, ToolMessage):
            # Consecutive tool results share one user turn, as in the template.
            if not in_tool_turn:
                out.append("<|im_start|>user")
                in_tool_turn = True
            out.append(f"\n<tool_response>\n{_clean(message_text(message))}\n</tool_response>")
            continue
        if in_tool_turn:
            out.append("<|im_end|>\n")
            in_tool_turn = False
        text = _clean(message_text(message))
        if isinstance(message, AIMessage):
            pieces = [text] if text else []
            pieces += [_render_call(c) for c in message.tool_calls]
            out.append("<|im_start|>assistant\n" + "\n".join(pieces) + "<|im_end|>\n")
        elif isinstance(message, SystemMessage):
            out.append(f"<|im_start|>system\n{text}<|im_end|>\n")
        elif isinstance(message, HumanMessage):
            out.append(f"<|im_start|>user\n{text}<|im_end|>\n")
        else:  # ChatMessage and friends: keep the text, speak as the user
            out.append(f"<|im_start|>user\n{text}<|im_end|>\n")
    if in_tool_turn:
        out.append("<|im_end|>\n")
    out.append("<|im_start|>assistant\n")
    return "".join(out)


def _literal(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is also a valid GBNF literal


def _arguments_rules(converter: Any, schema: dict[str, Any], name: str) -> str:
    """Add GBNF rules for one tool's arguments; fall back to any JSON object if the schema
    uses features llama.cpp's converter does not handle (the tool validates args anyway)."""
    from llama_cpp.llama_grammar import PRIMITIVE_RULES

    try:
        resolved = converter.resolve_refs(_strip_noise(schema), name)
        return str(converter.visit(resolved, name))
    except Exception:
        return str(converter._add_primitive("object", PRIMITIVE_RULES["object"]))


def build_grammar(tools: list[dict[str, Any]], choice: str | None) -> str | None:
    """A GBNF grammar for one turn, or None when the output is unconstrained.

    `choice` is "auto" (tool calls or a plain-text answer), "required" (at least one call of
    any tool), a tool name (a call of that tool), or "none". Calls take Qwen's trained form
    `<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>`; the model decides between
    calling and answering from its first token, and plain text streams as it is generated.
    """
    if not tools or choice == "none":
        return None
    from llama_cpp.llama_grammar import SchemaConverter

    converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    alternatives = []
    for i, tool in enumerate(tools):
        fn = tool["function"]
        if choice not in ("auto", "required") and fn["name"] != choice:
            continue
        args = _arguments_rules(converter, fn.get("parameters") or {}, f"call{i}-args")
        head = _literal('{"name": ' + json.dumps(fn["name"]) + ', "arguments": ')
        alternatives.append(f'{head} {args} "}}"')
    if not alternatives:
        raise ValueError(f"tool_choice names {choice!r}, which is not among the bound tools")
    rules = dict(converter._rules)
    rules["call"] = '"<tool_call>\\n" ( ' + " | ".join(alternatives) + ' ) "\\n</tool_call>"'
    rules["calls"] = f'call ( "\\n" call ){{0,{MAX_PARALLEL_CALLS - 1}}}'
    if choice == "auto":
        # Free text may not open with "<" or "{": those would be a malformed call.
        rules["answer"] = "[^<{ \\t\\n] [^\\x00]*"
        rules["root"] = "calls | answer"
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


def _as_call(raw: str) -> ToolCall | InvalidToolCall:
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise ValueError("a tool call needs a string 'name'")
        args = data.get("arguments", data.get("parameters", {}))
        if isinstance(args, str):  # some fine-tunes double-encode arguments
            args = json.loads(args)
        if not isinstance(args, dict):
            raise ValueError("tool call arguments must be a JSON object")
    except ValueError as exc:
        return InvalidToolCall(
            type="invalid_tool_call", name=None, args=raw, id=new_call_id(), error=str(exc)
        )
    return ToolCall(type="tool_call", name=data["name"], args=args, id=new_call_id())


def parse_output(text: str) -> ParsedOutput:
    """Split generated text into answer text and `<tool_call>` blocks.

    A bare `{"name": ..., "arguments": ...}` with no tags also counts as a call: without a
    grammar (tool_choice "none" or a model file of our choosing) Qwen sometimes drops the tags.
    """
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for raw in _CALL_BLOCK.findall(text):
        parsed = _as_call(raw)
        if parsed.get("type") == "tool_call":
            calls.append(parsed)  # type: ignore[arg-type]
        else:
            invalid.append(parsed)  # type: ignore[arg-type]
    content = _CALL_BLOCK.sub("", text).strip()
    if not calls and not invalid and content.startswith("{") and '"name"' in content:
        parsed = _as_call(content)
        if parsed.get("type") == "tool_call":
            return ParsedOutput(content="", tool_calls=[parsed])  # type: ignore[list-item]
    return ParsedOutput(content=content, tool_calls=calls, invalid_tool_calls=invalid)
