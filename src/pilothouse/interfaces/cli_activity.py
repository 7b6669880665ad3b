"""A working indicator for the terminal: what runs now and for how long, while nothing streams.

On the local model an answer can take minutes; without this the screen is still between tool
lines. The indicator is one transient line on stderr (a spinner, what the model or tool is
doing, the elapsed time), hidden whenever anything else prints and never shown when stdout or
stderr is not a terminal, so pipes and logs get no control characters.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.status import Status
from rich.text import Text


def elapsed(seconds: float) -> str:
    """`7s`, `2m 05s`: short enough for a status line."""
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m {whole % 60:02d}s"


class _Label:
    """The indicator's text, re-rendered at every refresh so the time keeps moving."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.doing = "working"

    def __rich__(self) -> Text:
        return Text(f"{self.doing} · {elapsed(time.monotonic() - self.started)}", style="dim")


class WorkingIndicator:
    """`show(what)` while the model or a tool works; `hide()` before anything else prints."""

    def __init__(self, console: Console, *, enabled: bool) -> None:
        self.console = console
        self.enabled = enabled
        self.started = time.monotonic()
        self._label = _Label(self.started)
        self._status: Status | None = None

    def restart(self) -> None:
        """A new turn: the clock starts again."""
        self.started = self._label.started = time.monotonic()

    def show(self, doing: str) -> None:
        if not self.enabled:
            return
        self._label.doing = doing
        if self._status is None:
            self._status = Status(self._label, console=self.console, spinner="dots")
            self._status.start()

    def hide(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def seconds(self) -> float:
        return time.monotonic() - self.started
