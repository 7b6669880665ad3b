"""`pilothouse tui`: chat with an agent in the terminal (Textual).

The chat streams answers token by token; a status line says what is running (the model, which
tool, or an approval it waits for) and for how long; a side panel shows each tool call (a
sub-agent's nested under the supervisor's `ask_<agent>`), its result and every context action;
approvals open a modal dialog; ctrl+o switches conversations (the same list the API and web UI
show). The app takes an `open_agent` factory, so tests run it over a scripted model.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, assert_never

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Input, Label

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError
from pilothouse.interfaces.api.history import render_history
from pilothouse.interfaces.api.registry import ConversationRegistry, new_thread_id
from pilothouse.interfaces.api.runtime import describe_agent
from pilothouse.interfaces.tui.dialogs import NEW_CONVERSATION, ApprovalDialog, ConversationSwitcher
from pilothouse.interfaces.tui.widgets import ActivityPanel, ChatView, WorkingStatus, short_args
from pilothouse.models.registry import ModelSetup
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
from pilothouse.runtime.handle import AgentHandle, OpenAgent
from pilothouse.runtime.session import Conversation

CSS = """
#main { height: 1fr; }
#chat { width: 2fr; padding: 0 1; }
#side { width: 1fr; min-width: 32; border-left: solid $primary-darken-2; }
.panel-title { text-style: bold; color: $text-muted; padding: 0 1; }
#activity { padding: 0 1; }
.user { background: $boost; border-left: thick $accent; padding: 0 1; margin-top: 1; }
.assistant { margin-top: 1; }
.error { color: $error; border-left: thick $error; padding: 0 1; margin-top: 1; }
.note { color: $text-muted; margin-top: 1; }
.tool-call { color: $accent; margin-top: 1; }
.tool-result { color: $text-muted; }
.tool-error { color: $error; }
.context { color: $secondary; margin-top: 1; }
.plan { color: $success; margin-top: 1; }
.approval { color: $warning; margin-top: 1; }
#question { margin: 0 1; }
ApprovalDialog, ConversationSwitcher { align: center middle; }
#approval { width: 84; height: auto; max-height: 90%; border: thick $warning;
            background: $surface; padding: 1 2; }
#approval-title { text-style: bold; color: $warning; }
#approval-asked-by { color: $text-muted; }
#approval-body { height: auto; max-height: 60vh; }
.approval-name { text-style: bold; margin-top: 1; }
.approval-action { background: $boost; padding: 0 1; margin: 1 0; }
.nested { margin-top: 0; }
.subagent-draft { color: $text-muted; border-left: thick $secondary; padding: 0 1; }
#status { height: 1; margin: 0 1; color: $text-muted; }
#approval-buttons { height: auto; align-horizontal: right; margin-top: 1; }
#approval-buttons Button { margin-left: 2; }
#switcher { width: 76; height: auto; max-height: 80%; border: thick $accent;
            background: $surface; padding: 1 2; }
#switcher-title { text-style: bold; margin-bottom: 1; }
"""


class PilothouseApp(App[None]):
    """Chat with the agent `open_agent()` yields (an object with `.graph`)."""

    TITLE = "Pilothouse"
    CSS = CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+n", "new_conversation", "New conversation"),
        Binding("ctrl+o", "switch_conversation", "Conversations"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, open_agent: OpenAgent, *, registry_path: Path,
                 thread_id: str | None = None) -> None:
        super().__init__()
        self.open_agent = open_agent
        self.registry_path = registry_path
        self.thread_id = thread_id or new_thread_id()
        self.agent: AgentHandle | None = None
        self.registry: ConversationRegistry | None = None
        self.conversation: Conversation | None = None
        self.agent_label = ""
        self.busy = False
        self.ready = asyncio.Event()
        self._release_agent = asyncio.Event()
        # Held, not queried: a turn's last update may come while a dialog is on top.
        self.status = WorkingStatus(id="status")

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            yield ChatView(id="chat")
            with Vertical(id="side"):
                yield Label("Activity: tools and context", classes="panel-title")
                yield ActivityPanel(id="activity")
        yield self.status
        yield Input(placeholder="Opening the agent…", id="question", disabled=True)
        yield Footer()

    @property
    def chat(self) -> ChatView:
        return self.query_one("#chat", ChatView)

    @property
    def activity(self) -> ActivityPanel:
        return self.query_one("#activity", ActivityPanel)


    def on_mount(self) -> None:
        self.sub_title = "opening the agent…"
        self.hold_agent()

    @work(group="agent")
    async def hold_agent(self) -> None:
        """Open the agent and keep it open, in one task: MCP sessions must close where opened."""
        async with AsyncExitStack() as stack:
            try:
                self.agent = await stack.enter_async_context(self.open_agent())
                self.registry = await stack.enter_async_context(
                    ConversationRegistry.open(self.registry_path))
            except PilothouseError as error:
                self.sub_title = "the agent could not start"
                await self.chat.add_error(error.message, error.hint)
                return
            info = describe_agent(self.agent)
            window = f" · {info['window']:,} tokens" if info["window"] else ""
            self.agent_label = (f"{info['name']} · {info['model'] or 'model'}{window} · "
                                f"{len(info['tools'])} tools")
            question = self.query_one("#question", Input)
            question.placeholder = "Ask a question or give a task (Enter to send)"
            question.disabled = False
            question.focus()
            await self.load(self.thread_id)
            self.ready.set()
            await self._release_agent.wait()

    async def on_unmount(self) -> None:
        self._release_agent.set()

    # ---- conversations ------------------------------------------------------------------

    async def load(self, thread_id: str) -> None:
        """Show `thread_id`'s history; ask about approvals it still waits for."""
        assert self.agent is not None, "load() runs once the agent is open"
        self.thread_id = thread_id
        self.conversation = Conversation(self.agent.graph, thread_id, subagent_tokens=True)
        self.sub_title = f"{self.agent_label} · thread {thread_id}"
        await self.chat.clear()
        await self.activity.clear()
        for row in render_history(await self.conversation.history()):
            if row["role"] == "user":
                await self.chat.add_question(row["text"])
            elif row["role"] == "summary":
                await self.chat.add_note("⚙ earlier messages were summarized")
            elif row["role"] == "assistant":
                await self.chat.add_answer(row["text"])
                for call in row["tool_calls"]:
                    await self.activity.add(f"→ {call['name']}({short_args(call['args'])})",
                                            "tool-call")
            elif row["role"] == "tool":
                await self.activity.add(f"← {row['name']}: {row['chars']:,} chars",
                                        "tool-error" if row["status"] == "error"
                                        else "tool-result")
        if await self.conversation.pending():
            self.settle_pending()

    @work(exclusive=True, group="turn")
    async def settle_pending(self) -> None:
        await self._guarded(self.settle_approvals())

    def action_new_conversation(self) -> None:
        if self.busy or not self.ready.is_set():
            self.notify("Wait for the current answer to finish.", severity="warning")
            return
        self.run_worker(self.load(new_thread_id()), group="turn", exclusive=True)

    @work(exclusive=True, group="switch")
    async def action_switch_conversation(self) -> None:
        if self.busy or self.registry is None or self.agent is None:
            self.notify("Wait for the current answer to finish.", severity="warning")
            return
        records, _ = await self.registry.list(100)
        # One thread is one agent's: another agent's threads are not offered here (a thread
        # with no agent recorded yet is, and becomes this agent's when it is used).
        records = [r for r in records if r.agent in ("", self.agent.name)]
        choice = await self.push_screen_wait(ConversationSwitcher(records, self.thread_id))
        if choice == NEW_CONVERSATION:
            await self.load(new_thread_id())
        elif choice:
            await self.load(choice)

    # ---- turns --------------------------------------------------------------------------

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text or not self.ready.is_set():
            return
        if self.busy:
            self.notify("Still answering; wait for it to finish.", severity="warning")
            return
        event.input.value = ""
        self.run_turn(text)

    @work(exclusive=True, group="turn")
    async def run_turn(self, question: str) -> None:
        assert self.conversation is not None and self.registry is not None
        await self.chat.add_question(question)
        await self.registry.touch(self.thread_id, question,
                                  agent=self.agent.name if self.agent else "")
        await self._guarded(self._ask(question))

    async def _ask(self, question: str) -> None:
        assert self.conversation is not None
        await self.consume(self.conversation.ask(question))
        await self.settle_approvals()

    async def _guarded(self, work: Any) -> None:
        self.busy = True
        self.status.start()
        try:
            await work
        finally:
            self.busy = False
            self.status.stop()

    async def settle_approvals(self) -> None:
        """Ask about each pending approval in a dialog and continue the run with the answer."""
        assert self.conversation is not None
        while pending := await self.conversation.pending():
            item = pending[0]
            dialog = ApprovalDialog(item.value)
            self.status.waiting_for(item.value)
            decision = await self.push_screen_wait(dialog)
            self.status.set_phase("thinking")
            name = ", ".join(action.name for action in dialog.view.actions)
            if decision["type"] == "reject":
                reason = decision.get("message", "")
                await self.activity.add(f"✘ rejected {name}: {reason}", "approval")
            else:
                await self.activity.add(f"✔ approved {name}", "approval")
            await self.consume(self.conversation.decide(decision, item.id))

    async def consume(self, events: AsyncIterator[Event]) -> None:
        async for event in events:
            await self.show(event)
        await self.chat.finish_draft()

    async def show(self, event: Event) -> None:
        self.status.follow(event)
        match event:
            case Token(text=text, parent_id=parent_id, agent=agent) if parent_id:
                await self.chat.add_subagent_token(parent_id, agent or "sub", text)
            case Token(text=text):
                await self.chat.add_token(text)
            case Answer(text=text):
                await self.chat.drop_drafts()
                await self.chat.add_answer(text)
            case TurnFailed(message=message, suggestion=suggestion):
                await self.chat.drop_drafts()
                await self.chat.finish_draft()
                await self.chat.add_error(message, suggestion)
            case ToolCalled():
                await self.chat.finish_draft()
                await self.activity.show(event)
            case ToolResult(id=call_id, parent_id=None):
                await self.chat.drop_drafts(call_id)  # an ask_<agent> call returned
                await self.activity.show(event)
            case ToolResult() | ContextNote() | PlanUpdate() | ApprovalRequest() | ModelWaiting() \
                    | ToolProgress():
                await self.activity.show(event)
            case _:
                assert_never(event)


def tui_app(settings: Settings, *, thread_id: str | None = None,
            model: ModelSetup | None = None, agent: str = "auto") -> PilothouseApp:
    """The TUI over the factory's agent `agent` (`--agent`), on `model` if given."""
    from pilothouse.agents.factory import check_choice, open_configured_agent
    from pilothouse.interfaces.api.server import registry_path

    check_choice(agent)
    return PilothouseApp(partial(open_configured_agent, settings, agent=agent, model=model),
                         registry_path=registry_path(settings), thread_id=thread_id)


def run_tui(settings: Settings, thread_id: str | None = None, agent: str = "auto") -> None:
    """`pilothouse tui`: run the TUI over the configured agent until the person quits."""
    tui_app(settings, thread_id=thread_id, agent=agent).run()
