"""The TUI's modal dialogs: approve or reject an action, and switch conversations."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from pilothouse.interfaces.api.registry import ConversationRecord
from pilothouse.interfaces.approval_view import approval_view
from pilothouse.interfaces.tui.diff_view import evidence_content
from pilothouse.runtime.session import ApprovalDecision

NEW_CONVERSATION = "__new__"


class ApprovalDialog(ModalScreen[ApprovalDecision]):
    """Asks the person to approve or reject the calls of one approval; dismisses with the
    decision. The real calls are shown (a sub-agent's, not the supervisor's question), and a
    dialog about a change opens on Reject, so a stray Enter never syncs a cluster."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "reject", "Reject")]

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value
        self.view = approval_view(value)

    def compose(self) -> ComposeResult:
        with Vertical(id="approval"):
            yield Label(self.view.title, id="approval-title", markup=False)
            if self.view.asked_by:
                yield Static(self.view.asked_by, id="approval-asked-by", markup=False)
            # A long dry run scrolls; the reason field and the buttons stay on screen.
            with VerticalScroll(id="approval-body"):
                for number, action in enumerate(self.view.actions):
                    if len(self.view.actions) > 1:
                        yield Label(action.name, classes="approval-name", markup=False)
                    if action.description:  # its diff (the evidence) coloured by line
                        yield Static(evidence_content(action.description),
                                     classes="approval-description",
                                     id="approval-description" if number == 0 else None,
                                     markup=False)
                    yield Static(action.shown, classes="approval-action",
                                 id="approval-action" if number == 0 else None, markup=False)
            yield Input(placeholder="Reason or requested change (for Reject)", id="reason")
            with Horizontal(id="approval-buttons"):
                yield Button("Approve", variant="success", id="approve")
                yield Button("Reject", variant="error", id="reject")

    def on_mount(self) -> None:
        default = "#reject" if self.view.changes_something else "#approve"
        self.query_one(default, Button).focus()

    @on(Button.Pressed, "#approve")
    def approve(self) -> None:
        self.dismiss({"type": "approve"})

    @on(Button.Pressed, "#reject")
    def action_reject(self) -> None:
        reason = self.query_one("#reason", Input).value.strip()
        self.dismiss({"type": "reject", "message": reason or "The user rejected this action."})


class ConversationSwitcher(ModalScreen[str | None]):
    """Lists conversations (most recent first); dismisses with a thread id, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Close")]

    def __init__(self, conversations: list[ConversationRecord], current: str) -> None:
        super().__init__()
        self.conversations = conversations
        self.current = current

    def compose(self) -> ComposeResult:
        options = [Option("+ New conversation", id=NEW_CONVERSATION)]
        for record in self.conversations:
            marker = "● " if record.id == self.current else "  "
            # Text, not a str: a title may contain "[...]", which Textual would read as markup.
            options.append(Option(Text(f"{marker}{record.title or '(untitled)'}  ({record.id})"),
                                  id=record.id))
        with Vertical(id="switcher"):
            yield Label("Conversations", id="switcher-title")
            yield OptionList(*options, id="conversation-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def choose(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
