"""Data specialists answer from tools: the first model call of a turn must call one.

An Argo CD or GitHub agent that answers from memory invents applications and statuses; the
small local model does so readily when its prompt describes the answer's format (measured: 0 of
3 demo questions called a tool with the choice left open, 3 of 3 sensible calls when required).
After the first tool result the model is free to answer or to call more tools.
"""

from __future__ import annotations

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import HumanMessage

from pilothouse.context.rewrite import RequestRewriteMiddleware


class ToolFirstMiddleware(RequestRewriteMiddleware):
    """Sets `tool_choice="required"` on the first model call of each turn."""

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        first_call = bool(request.messages) and isinstance(request.messages[-1], HumanMessage)
        if first_call and request.tools and request.tool_choice in (None, "auto"):
            return request.override(tool_choice="required")
        return request
