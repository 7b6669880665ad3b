"""The TUI's panels: the chat transcript and the side panel of tool and context activity."""

from __future__ import annotations

import json
from typing import Any

from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from pilothouse.runtime.session import Event


def short_args(args: dict[str, Any], limit: int = 70) -> str:
    """`key="value", ...` cut to `limit` characters."""
    text = ", ".join(f"{key}={json.dumps(value, default=str)}" for key, value in args.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


class ChatView(VerticalScroll):
    """The conversation: questions, streamed answers (markdown once complete) and errors."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._streaming: Static | None = None
        self._raw = ""

    async def clear(self) -> None:
        self._streaming = None
        self._raw = ""
        await self.remove_children()

    async def add_question(self, text: str) -> None:
        await self.mount(Static(text, classes="user", markup=False))
        self.scroll_end(animate=False)

    async def add_token(self, text: str) -> None:
        self._raw += text
        if self._streaming is None:
            self._streaming = Static("", classes="assistant streaming", markup=False)
            await self.mount(self._streaming)
        self._streaming.update(self._raw)
        self.scroll_end(animate=False)

    async def add_answer(self, text: str) -> None:
        """Show a complete answer as markdown, replacing its streamed draft."""
        text = text or self._raw
        if self._streaming is not None:
            await self._streaming.remove()
            self._streaming = None
        self._raw = ""
        if text:
            await self.mount(Markdown(text, classes="assistant"))
            self.scroll_end(animate=False)

    async def finish_draft(self) -> None:
        """Keep a streamed draft that no answer followed (a tool call came next)."""
        if self._streaming is not None:
            await self.add_answer(self._raw)

    async def add_error(self, text: str, suggestion: str | None) -> None:
        hint = f"\nWhat to do: {suggestion}" if suggestion else ""
        await self.mount(Static(f"Error: {text}{hint}", classes="error", markup=False))
        self.scroll_end(animate=False)

    async def add_note(self, text: str) -> None:
        await self.mount(Static(text, classes="note", markup=False))
        self.scroll_end(animate=False)


class ActivityPanel(VerticalScroll):
    """What the agent did: tool calls and results, context actions, plan progress."""

    async def clear(self) -> None:
        await self.remove_children()

    async def add(self, text: str, kind: str) -> None:
        await self.mount(Static(text, classes=f"activity {kind}", markup=False))
        self.scroll_end(animate=False)

    async def show(self, event: Event) -> None:
        """Add the activity line for `event`, if it is activity."""
        data = event.data
        if event.kind == "tool_call":
            await self.add(f"→ {data.get('name')}({short_args(data.get('args') or {})})",
                           "tool-call")
        elif event.kind == "tool_result":
            failed = data.get("status") == "error"
            await self.add(f"{'✘' if failed else '←'} {data.get('name')}: "
                           f"{data.get('chars', 0):,} chars  {first_line(event.text)}",
                           "tool-error" if failed else "tool-result")
        elif event.kind == "context":
            await self.add(f"⚙ context: {event.text}", "context")
        elif event.kind == "plan":
            plan = data.get("plan") or {}
            if data.get("action") == "approved":
                text = f"📋 plan approved: {plan.get('goal', '')}"
            else:
                text = f"📋 step {data.get('step')} {data.get('status')} {data.get('note', '')}"
            await self.add(text.strip(), "plan")
        elif event.kind == "interrupt":
            value = data.get("value") or {}
            await self.add(f"… waiting for approval: {value.get('name', 'action')}", "approval")
