"""The TUI's panels: the chat transcript, the side panel of tool and context activity, and the
status line that says what the agent is doing and for how long."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, assert_never

from textual.containers import VerticalScroll
from textual.widgets import Static

from pilothouse.interfaces.approval_view import approval_view
from pilothouse.interfaces.tui.diff_view import AnswerMarkdown
from pilothouse.runtime.events import (
    Answer,
    ApprovalRequest,
    ContextNote,
    Event,
    ModelWaiting,
    PlanUpdate,
    Token,
    ToolCalled,
    ToolProgress,
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


def elapsed(seconds: float) -> str:
    """`7s`, `2m 05s`: how long a turn has run."""
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m {whole % 60:02d}s"


class WorkingStatus(Static):
    """One line under the chat: what the agent is doing now and how long the turn has taken.

    A local model can take minutes per answer; a spinner and a clock that keep moving say the
    work goes on, and the phase says whether the model or which tool is busy.
    """

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)
        self.phase = ""
        self.waiting = False
        self._started: float | None = None
        self._frame = 0
        self._open_tools: dict[str, str] = {}

    def on_mount(self) -> None:
        self.set_interval(0.25, self._tick)

    def start(self) -> None:
        """A turn began: the model is thinking."""
        self._started = time.monotonic()
        self._open_tools.clear()
        self.set_phase("thinking")

    def set_phase(self, phase: str, *, waiting: bool = False) -> None:
        self.phase, self.waiting = phase, waiting
        self._show_line()

    def follow(self, event: Event) -> None:
        """Move the phase along with the turn's events."""
        match event:
            case Token(agent=agent) if agent:
                self.set_phase(f"{agent} agent: writing its answer")
            case Token():
                if not self._open_tools:
                    self.set_phase("writing the answer")
            case ToolCalled(id=call_id, name=name, agent=agent):
                # While an ask_<agent> call runs, its agent's model works between its calls.
                label = (f"{agent} agent: running {name}" if agent
                         else f"{name[4:]} agent working" if name.startswith("ask_")
                         else f"running {name}")
                self._open_tools[call_id or name] = label
                self.set_phase(label)
            case ToolResult(id=call_id):
                self._open_tools.pop(call_id, None)
                self.set_phase(next(reversed(self._open_tools.values()), "thinking"))
            case ApprovalRequest(value=value):
                self.waiting_for(value)
            case ToolProgress(name=name, message=message, agent=agent):
                self.set_phase(f"{agent} agent: {name}: {message}" if agent
                               else f"{name}: {message}")
            case ModelWaiting(ahead=ahead):
                self.set_phase(event.text if ahead else "thinking", waiting=bool(ahead))
            case ContextNote() | PlanUpdate() | Answer() | TurnFailed():
                pass
            case _:
                assert_never(event)

    def waiting_for(self, value: Any) -> None:
        """The run stopped for an approval: a state of its own, not "running"."""
        if self._started is None:  # an approval found pending when a conversation opened
            self._started = time.monotonic()
        names = ", ".join(a.name for a in approval_view(value).actions)
        self.set_phase(f"waiting for your approval: {names}", waiting=True)

    def stop(self) -> None:
        """The turn ended: say how long it took."""
        took = f"answered in {elapsed(time.monotonic() - self._started)}" if self._started else ""
        self._started = None
        self._open_tools.clear()
        self.phase, self.waiting = "", False
        self.update(took)

    def _tick(self) -> None:
        if self._started is not None:
            self._frame = (self._frame + 1) % len(self.FRAMES)
            self._show_line()

    def _show_line(self) -> None:
        if self._started is None:
            return
        mark = "‖" if self.waiting else self.FRAMES[self._frame]
        self.update(f"{mark} {self.phase} · {elapsed(time.monotonic() - self._started)}")


class ChatView(VerticalScroll):
    """The conversation: questions, streamed answers (markdown once complete) and errors."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._streaming: Static | None = None
        self._raw = ""
        #: Sub-agents' answers as they are written, by the supervisor's ask_<agent> call id.
        self._drafts: dict[str, tuple[Static, str]] = {}

    async def clear(self) -> None:
        self._streaming = None
        self._raw = ""
        self._drafts.clear()
        await self.remove_children()

    async def add_subagent_token(self, parent_id: str, agent: str, text: str) -> None:
        """A piece of a sub-agent's answer: shown as its draft until the supervisor answers."""
        widget, raw = self._drafts.get(parent_id, (None, ""))
        if widget is None:
            widget = Static("", classes="assistant streaming subagent-draft", markup=False)
            await self.mount(widget)
        raw += text
        self._drafts[parent_id] = (widget, raw)
        widget.update(f"{agent} agent ▸ {raw}")
        self.scroll_end(animate=False)

    async def drop_drafts(self, parent_id: str | None = None) -> None:
        """Remove one sub-agent's draft (its call returned) or all (the answer is here)."""
        for key in [parent_id] if parent_id is not None else list(self._drafts):
            widget, _ = self._drafts.pop(key, (None, ""))
            if widget is not None:
                await widget.remove()

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
            await self.mount(AnswerMarkdown(text, classes="assistant"))
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
            case ToolCalled(name=name, args=args, agent=agent):
                # A sub-agent's call sits under the supervisor's ask_<agent> line.
                lead = f"  ↳ {agent}: " if agent else ""
                await self.add(f"{lead}→ {name}({short_args(args)})",
                               "tool-call nested" if agent else "tool-call")
            case ToolResult(name=name, status=status, chars=chars, preview=preview, agent=agent):
                failed = status == "error"
                lead = f"  ↳ {agent}: " if agent else ""
                kind = "tool-error" if failed else "tool-result"
                await self.add(f"{lead}{'✘' if failed else '←'} {name}: {chars:,} chars  "
                               f"{first_line(preview)}", f"{kind} nested" if agent else kind)
            case ContextNote(action=action):
                await self.add(f"⚙ context: {action.detail}", "context")
            case PlanUpdate(action="approved", plan=plan):
                await self.add(f"📋 plan approved: {plan.get('goal', '')}".strip(), "plan")
            case PlanUpdate(step=step, status=status, note=note):
                await self.add(f"📋 step {step} {status} {note}".strip(), "plan")
            case ApprovalRequest(value=value):
                view = approval_view(value)
                who = f" ({view.asked_by[0].lower()}{view.asked_by[1:]})" if view.asked_by else ""
                await self.add(f"‖ waiting for approval: "
                               f"{', '.join(a.name for a in view.actions)}{who}", "approval")
            case Token() | Answer() | TurnFailed() | ModelWaiting() | ToolProgress():
                pass  # the chat view shows these, the status line where the model or tool is
            case _:
                assert_never(event)
