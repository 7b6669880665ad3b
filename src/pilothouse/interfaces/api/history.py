"""A thread's stored messages as plain JSON rows for the API, the web UI and the TUI."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from pilothouse.context.compression import is_summary

#: Tool results can be 10,000 characters; a history view needs the gist, not the payload.
RESULT_LIMIT = 2_000


def message_text(message: BaseMessage) -> str:
    """The text of a message whose content may be a list of parts."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        part.get("text", "") if isinstance(part, dict) else str(part) for part in content
    )


def trim(text: str, limit: int = RESULT_LIMIT) -> str:
    """`text` cut to `limit` characters with a note of how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit:,} more characters]"


def render_message(message: BaseMessage, *, result_limit: int = RESULT_LIMIT) -> dict[str, Any]:
    """One message as `{role, text, ...}`: role is user, assistant, tool, summary or system."""
    text = message_text(message)
    if isinstance(message, HumanMessage):
        return {"role": "summary" if is_summary(message) else "user", "text": text}
    if isinstance(message, AIMessage):
        return {
            "role": "assistant",
            "text": text,
            "tool_calls": [{"id": c["id"], "name": c["name"], "args": c["args"]}
                           for c in message.tool_calls],
        }
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "name": message.name,
            "tool_call_id": message.tool_call_id,
            "status": message.status,
            "chars": len(text),
            "text": trim(text, result_limit),
        }
    if isinstance(message, SystemMessage):
        return {"role": "system", "text": text}
    return {"role": message.type, "text": text}


def render_history(messages: list[BaseMessage], *,
                   result_limit: int = RESULT_LIMIT) -> list[dict[str, Any]]:
    """Every message of a thread, oldest first."""
    return [render_message(m, result_limit=result_limit) for m in messages]
