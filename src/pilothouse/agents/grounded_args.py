"""Grounded arguments: an id the model chose must come from the conversation, or it is dropped.

The answer layer removes numbers no tool or person gave (`context.grounding`); this does the same
for the ids a model puts in a call, where a made-up one does harm before anyone reads an answer.
Measured on the local model: asked "Roll back catalog-indexer-dev", it filled the optional
`history_id` with 1 (no such deploy: the tool refused, nothing was planned) because the grammar
let it write every optional argument. An id argument whose value occurs nowhere in the
conversation (the question, earlier turns, tool results) is removed from the call, so the tool
takes its default (for a rollback, the previous deploy), and the turn reports it. It runs on the
model's response, before the evidence gate computes what a person approves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from pilothouse.context.events import ContextAction, report
from pilothouse.context.rewrite import RequestRewriteMiddleware, final_message, with_final
from pilothouse.models.tokens import message_text


def mentioned(value: object, messages: Sequence[BaseMessage]) -> bool:
    """Whether `value` occurs as a whole word in a person's message or a tool result."""
    # A whole number: not the 1 of "eu-west-1" or "v1.2", yet "deploy 52." at a sentence's end.
    pattern = re.compile(rf"(?<![\w.-]){re.escape(str(value))}(?![\w-])(?!\.\d)")
    return any(pattern.search(message_text(m)) for m in messages
               if isinstance(m, HumanMessage | ToolMessage))


class GroundedIdsMiddleware(RequestRewriteMiddleware):
    """Drops the id arguments (`ids`: tool -> argument names) no message of the turn supports."""

    def __init__(self, ids: Mapping[str, Sequence[str]]) -> None:
        super().__init__()
        self.ids = {tool: tuple(names) for tool, names in ids.items()}

    def revise(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        final = final_message(response)
        if final is None or not final.tool_calls:
            return response
        dropped: list[str] = []
        calls = []
        for call in final.tool_calls:
            unsupported = [name for name in self.ids.get(call["name"], ())
                           if call["args"].get(name) is not None
                           and not mentioned(call["args"][name], request.messages)]
            dropped += [f"{name}={call['args'][name]}" for name in unsupported]
            calls.append({**call, "args": {k: v for k, v in call["args"].items()
                                           if k not in unsupported}})
        if not dropped:
            return response
        report(ContextAction("grounding", f"dropped {', '.join(dropped)} from a tool call: "
                             "nobody gave that id", "grounded_ids", {"arguments": len(dropped)}))
        return with_final(response, tool_calls=calls)
