"""Qwen2.5 ChatML prompt rendering for the local model.

We render the conversation ourselves, following the chat template embedded in the GGUF, rather
than use llama-cpp-python's chat handlers: `chatml-function-calling` drops `role: tool` messages
and calls a tool even for "Hi!", and the generic handler does not parse calls at all. Writing the
template here also keeps every turn's prompt a strict extension of the previous one, so
llama.cpp reuses the cached prefix instead of re-reading the tool schemas at ~90 tokens/s.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import ToolCall

from pilothouse.models.tokens import turn_start

DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
TOOLS_PREAMBLE = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_POSTAMBLE = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    # Double braces: the template writes them inside a Jinja string, so the model saw them.
    '{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call>'
)
# Our one addition to the template. Without it, Qwen-Coder-1.5B answered "Hi!" with a call to
# an invented `greet` tool; with it, 15/16 routing and chit-chat prompts came out right.
PLAIN_ANSWER_HINT = "\n\nIf the message needs no function, reply in plain text."
# Control tokens that, inside message text, would let content forge turns (we tokenize the
# prompt with special tokens enabled so our own markers become single tokens).
_SPECIAL = re.compile(r"<\|(im_start|im_end|endoftext)\|>")
# Schema keys that cost prompt tokens but tell the model nothing about what to pass.
_NOISE_KEYS = frozenset({"title", "additionalProperties", "$schema", "examples"})


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


def compact_schema(node: Any) -> Any:
    """A JSON schema without titles and other keys that cost tokens but guide no argument.

    Walks only schema positions, so a property that is itself named "title" survives.
    """
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NOISE_KEYS:
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            out[key] = [compact_schema(sub) for sub in value]
        elif key in ("items", "not"):
            out[key] = compact_schema(value)
        else:
            out[key] = value
    return out


def compact_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-format tool reduced to name, description and parameters, without titles."""
    fn = tool["function"]
    compact: dict[str, Any] = {"name": fn["name"]}
    if fn.get("description"):
        compact["description"] = fn["description"]
    compact["parameters"] = compact_schema(fn.get("parameters") or {"type": "object"})
    return {"type": "function", "function": compact}


def _render_call(call: ToolCall) -> str:
    body = json.dumps({"name": call["name"], "arguments": call["args"]}, ensure_ascii=False)
    return f"<tool_call>\n{_clean(body)}\n</tool_call>"


def _system_head(messages: list[BaseMessage]) -> tuple[str, list[BaseMessage]]:
    if messages and isinstance(messages[0], SystemMessage):
        return _clean(message_text(messages[0])), messages[1:]
    return DEFAULT_SYSTEM, messages


def _render_turns(messages: list[BaseMessage]) -> str:
    out: list[str] = []
    in_tool_turn = False
    for message in messages:
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
        else:  # Human, and ChatMessage and friends: keep the text, speak as the user
            out.append(f"<|im_start|>user\n{text}<|im_end|>\n")
    if in_tool_turn:
        out.append("<|im_end|>\n")
    return "".join(out)


def render_prompt(messages: list[BaseMessage], tools: list[dict[str, Any]] | None = None) -> str:
    """Render messages and OpenAI-format tools as a Qwen2.5 ChatML prompt that ends in an
    open assistant turn, as the GGUF's own chat template would."""
    system, rest = _system_head(messages)
    out = ["<|im_start|>system\n", system]
    if tools:
        out.append(TOOLS_PREAMBLE)
        for tool in tools:
            out.append("\n" + _clean(json.dumps(compact_tool(tool), ensure_ascii=False)))
        out.append(TOOLS_POSTAMBLE + PLAIN_ANSWER_HINT)
    out.append("<|im_end|>\n")
    out.append(_render_turns(rest))
    out.append("<|im_start|>assistant\n")
    return "".join(out)


def digest(text: str, chars: int | None) -> str:
    """`text` whole, or its first lines within `chars` and a line saying how many more."""
    if chars is None or len(text) <= chars:
        return text
    kept = text[:chars]
    kept = kept[:kept.rfind("\n")] if "\n" in kept else kept
    more = text[len(kept):].strip().count("\n") + 1
    return f"{kept.rstrip()}\n[... {more} more lines, shown to the user below your answer]"


def render_answer_prompt(messages: list[BaseMessage], result_chars: int | None = None, *,
                         history: bool = True) -> str:
    """Render a conversation that ends in tool results as a question with its results.

    `history=False` leaves out the turns before the question, for a lead: it comments on this
    turn's results, and the turn's first call has read the conversation already, with the
    tools in its system prompt, so none of that prefix is cached for this prompt. Measured in
    a long conversation of `pilothouse eval` on two cores: the supervisor re-read 3,107 of
    3,403 tokens (74 s) to write a one-token lead over its agent's answer.

    `result_chars` holds each result to its first lines: when the answer layer shows the
    results' views whole below the answer, the model writes only a lead, which their header
    lines (page line, counts, first rows) are enough for, and every token here is read again
    after the routing step read it in the tools prompt (~35 tokens/s on two cores).

    Measured on this model: with the tool schemas in the prompt it answers a tool result by
    calling the tool again or by explaining how to call it; without them, in Qwen's
    `<tool_response>` turns, it ignores a second result. Restated as one user turn, "question +
    results + answer the question", it answered all three test conversations correctly (one
    status result; a status then a log result; an application list).
    """
    system, rest = _system_head(messages)
    last_human = turn_start(rest)
    earlier, current = rest[: max(last_human, 0)], rest[last_human + 1 :]
    question = _clean(message_text(rest[last_human])) if last_human >= 0 else ""
    calls = {c["id"]: c for m in current if isinstance(m, AIMessage) for c in m.tool_calls}
    results = []
    for message in current:
        if isinstance(message, ToolMessage):
            call = calls.get(message.tool_call_id)
            head = (
                f"{call['name']}({json.dumps(call['args'], ensure_ascii=False)}) returned:\n"
                if call
                else ""
            )
            body = _clean(digest(message_text(message), result_chars))
            results.append(f"<tool_response>\n{_clean(head)}{body}\n</tool_response>")
    ask = (
        f"{question}\n\nResults of the functions called to answer this:\n"
        + "\n".join(results)
        + "\n\nAnswer the question using these results."
    )
    return (
        f"<|im_start|>system\n{system}<|im_end|>\n"
        + (_render_turns(earlier) if history else "")
        + f"<|im_start|>user\n{ask.lstrip()}<|im_end|>\n<|im_start|>assistant\n"
    )
