"""The TUI's panels: the chat transcript and the side panel of tool and context activity."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, assert_never

from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from pilothouse.runtime.events import (
    Answer,
    ApprovalRequest,
    ContextNote,
    Event,
    PlanUpdate,
    Token,
    ToolCalled,
    ToolResult,
    TurnFailed,
)


def short_args(args: Mapping[str, Any], limit: int = 70) -> str:
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
        match event:
            case ToolCalled(name=name, args=args):
                await self.add(f"→ {name}({short_args(args)})", "tool-call")
            case ToolResult(name=name, status=status, chars=chars, preview=preview):
                failed = status == "error"
                await self.add(f"{'✘' if failed else '←'} {name}: {chars:,} chars  "
                               f"{first_line(preview)}", "tool-error" if failed else "tool-result")
            case ContextNote(action=action):
                await self.add(f"⚙ context: {action.detail}", "context")
            case PlanUpdate(action="approved", plan=plan):
                await self.add(f"📋 plan approved: {plan.get('goal', '')}".strip(), "plan")
            case PlanUpdate(step=step, status=status, note=note):
                await self.add(f"📋 step {step} {status} {note}".strip(), "plan")
            case ApprovalRequest(value=value):
                name = (value or {}).get("name", "action")
                await self.add(f"… waiting for approval: {name}", "approval")
            case Token() | Answer() | TurnFailed():
                pass  # the chat view shows these
            case _:
                assert_never(event)
