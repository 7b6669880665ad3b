"""The TUI's modal dialogs: approve or reject an action, and switch conversations."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from pilothouse.interfaces.api.registry import ConversationRecord
from pilothouse.runtime.session import ApprovalDecision

NEW_CONVERSATION = "__new__"


def describe_action(value: dict[str, Any]) -> str:
    """What would run: the command, the plan's steps, or the arguments as JSON."""
    args = value.get("args") or {}
    if value.get("name") == "propose_plan":
        steps = [f"{n}. {s.get('title', '')}" for n, s in enumerate(args.get("steps", []), 1)]
        return "\n".join([str(args.get("goal", "")), *steps])
    if isinstance(args.get("command"), str):
        return str(args["command"])
    return json.dumps(args, indent=2, default=str)


class ApprovalDialog(ModalScreen[ApprovalDecision]):
    """Asks the person to approve or reject one action; dismisses with the decision."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "reject", "Reject")]

    def __init__(self, value: dict[str, Any]) -> None:
        super().__init__()
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="approval"):
            yield Label(f"Approval needed: {self.value.get('name', 'action')}",
                        id="approval-title", markup=False)
            if self.value.get("description"):
                yield Static(str(self.value["description"]), id="approval-description",
                             markup=False)
            yield Static(describe_action(self.value), id="approval-action", markup=False)
            yield Input(placeholder="Reason or requested change (for Reject)", id="reason")
            with Horizontal(id="approval-buttons"):
                yield Button("Approve", variant="success", id="approve")
                yield Button("Reject", variant="error", id="reject")

    def on_mount(self) -> None:
        self.query_one("#approve", Button).focus()

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
