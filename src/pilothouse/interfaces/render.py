"""Terminal rendering of conversation events: answer on stdout, activity on stderr."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from pilothouse.runtime.session import Event


def _args(args: dict[str, Any]) -> str:
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
        if event.kind == "token":
            if self.out.is_terminal:
                self.out.print(event.text, end="", markup=False, highlight=False)
                self._streaming = True
            return
        if self._streaming and event.kind != "answer":
            self.out.print()
            self._streaming = False
        if event.kind == "tool_call":
            self.err.print(f"[cyan]→ {event.text}[/]({_args(event.data.get('args', {}))})",
                           highlight=False)
        elif event.kind == "tool_result":
            status = event.data.get("status")
            colour = "red" if status == "error" else "dim"
            chars = event.data.get("chars", 0)
            first = event.text.splitlines()[0][:120] if event.text else ""
            self.err.print(f"[{colour}]← {event.data.get('name')}: {chars:,} chars  {first}[/]",
                           markup=True, highlight=False)
        elif event.kind == "context":
            self.err.print(f"[magenta]⚙ context: {event.text}[/]", highlight=False)
        elif event.kind == "interrupt":
            self.err.print(f"[yellow]approval needed:[/] {event.data.get('value')}")
        elif event.kind == "error":
            self.err.print(f"[bold red]Error:[/] {event.text}", highlight=False)
            hint = event.data.get("suggestion")
            if hint:
                self.err.print(f"[yellow]What to do:[/] {hint}", highlight=False)
        elif event.kind == "answer":
            if self._streaming:
                self.out.print()
                self._streaming = False
            elif self.out.is_terminal:
                self.out.print(Markdown(event.text))
            else:
                self.out.print(event.text, markup=False, highlight=False)


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
