"""Terminal rendering of conversation events: answer on stdout, activity on stderr."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, assert_never

from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

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


def _args(args: Mapping[str, Any]) -> str:
    text = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in args.items())
    return text if len(text) <= 160 else text[:157] + "..."


class EventPrinter:
    """Prints events as they arrive; the answer alone goes to stdout, so pipes get just it."""

    def __init__(self, out: Console, err: Console, *, as_json: bool) -> None:
        self.out = out
        self.err = err
        self.as_json = as_json
        self._streaming = False

    def show(self, event: Event) -> None:
        if isinstance(event, Token):
            if self.out.is_terminal:
                self.out.print(event.text, end="", markup=False, highlight=False)
                self._streaming = True
            return
        if self._streaming and not isinstance(event, Answer):
            self.out.print()
            self._streaming = False
        match event:
            case ToolCalled(name=name, args=args):
                self.err.print(f"[cyan]→ {name}[/]({_args(args)})", highlight=False)
            case ToolResult(name=name, status=status, chars=chars, preview=preview):
                colour = "red" if status == "error" else "dim"
                first = preview.splitlines()[0][:120] if preview else ""
                self.err.print(f"[{colour}]← {name}: {chars:,} chars  {first}[/]",
                               markup=True, highlight=False)
            case ContextNote(action=action):
                self.err.print(f"[magenta]⚙ context: {action.detail}[/]", highlight=False)
            case PlanUpdate():
                pass  # the plan's steps show as the tool calls that carry them out
            case ApprovalRequest(value=value):
                self.err.print(f"[yellow]approval needed:[/] {value}")
            case TurnFailed(message=message, suggestion=hint):
                self.err.print(f"[bold red]Error:[/] {message}", highlight=False)
                if hint:
                    self.err.print(f"[yellow]What to do:[/] {hint}", highlight=False)
            case Answer(text=text):
                if self._streaming:
                    self.out.print()
                    self._streaming = False
                elif self.out.is_terminal:
                    self.out.print(Markdown(text))
                else:
                    self.out.print(text, markup=False, highlight=False)
            case _:
                assert_never(event)


@contextmanager
def progress_bar(console: Console) -> Iterator[Any]:
    """A callback `(label, done, total)` that shows a progress bar while work is reported."""
    progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                        TimeRemainingColumn(), console=console, transient=True)
    tasks: dict[str, Any] = {}

    def update(label: str, done: int, total: int) -> None:
        if label not in tasks:
            if not tasks:
                progress.start()
            tasks[label] = progress.add_task(label, total=total)
        progress.update(tasks[label], completed=done, total=total)

    try:
        yield update
    finally:
        if tasks:
            progress.stop()
