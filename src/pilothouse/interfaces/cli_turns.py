"""One CLI turn: its events to the screen or as JSON lines, and what the exit code says about it.

Exit codes are a contract for scripts (documented in `--help` and the README):
0 answered, 1 error, 2 usage, 3 waiting for approval, 4 every tool call of the turn failed
(the answer then only explains a failure, e.g. Argo CD unreachable).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from pilothouse.interfaces.cli_common import ExitCode
from pilothouse.interfaces.cli_threads import command_line
from pilothouse.runtime.events import (
    ApprovalRequest,
    Event,
    ToolCalled,
    ToolResult,
    TurnFailed,
    done_wire,
    event_as_json,
)


class EventSink(Protocol):
    """Where a turn's events go: the screen (`EventPrinter`) or JSON lines."""

    def begin(self) -> None: ...

    def show(self, event: Event) -> None: ...

    def end(self) -> None: ...


class JsonLines:
    """One JSON object per line on stdout, written as is: never wrapped, whatever the width."""

    def begin(self) -> None:
        return None

    def show(self, event: Event) -> None:
        self._write(event_as_json(event))

    def end(self) -> None:
        return None

    def done(self, thread_id: str) -> None:
        """The last line: the thread to continue (the same frame that ends the API's SSE)."""
        self._write(json.dumps(done_wire(thread_id)))

    @staticmethod
    def _write(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def approval_call_ids(value: Any) -> set[str]:
    """The tool calls an approval is about (its own, and a supervisor's sub-agent calls)."""
    ids: set[str] = set()
    if isinstance(value, dict):
        for item in [value, *(value.get("subagent_calls") or [])]:
            if isinstance(item, dict) and item.get("tool_call_id"):
                ids.add(str(item["tool_call_id"]))
    return ids


@dataclass
class TurnOutcome:
    """What a turn came to, from its events: failed, waiting, or whether its tools all failed.

    A call that ran sub-agent calls (the supervisor's `ask_<agent>`) is judged by those: an
    `ask_argocd` that returned Argo CD's error as its answer succeeded, its calls did not.
    Calls a person rejected (`rejected`) are not failures.
    """

    rejected: set[str] = field(default_factory=set)
    failed: bool = False
    waiting: list[ApprovalRequest] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)  # call id -> status
    parents: set[str] = field(default_factory=set)

    def record(self, event: Event) -> None:
        if isinstance(event, TurnFailed):
            self.failed = True
        elif isinstance(event, ApprovalRequest):
            self.waiting.append(event)
        elif isinstance(event, ToolCalled | ToolResult) and event.parent_id:
            self.parents.add(event.parent_id)
        if isinstance(event, ToolResult):
            self.results[event.id] = event.status

    def tools_all_failed(self) -> bool:
        leaves = [status for call, status in self.results.items()
                  if call not in self.parents and call not in self.rejected]
        return bool(leaves) and all(status == "error" for status in leaves)

    def exit_code(self, still_waiting: bool) -> ExitCode:
        if still_waiting:
            return ExitCode.WAITING_FOR_APPROVAL
        if self.failed:
            return ExitCode.ERROR
        return ExitCode.TOOLS_FAILED if self.tools_all_failed() else ExitCode.ANSWERED


async def play(events: AsyncIterator[Event], sink: EventSink, outcome: TurnOutcome) -> None:
    """Show every event of a turn and record what it came to."""
    sink.begin()
    try:
        async for event in events:
            outcome.record(event)
            sink.show(event)
    finally:
        sink.end()


def approval_hints(thread_id: str) -> list[str]:
    """The commands that answer a pending approval in `thread_id`, ready to paste."""
    approve = command_line("ask", "--thread", thread_id, "--approve")
    reject = command_line("ask", "--thread", thread_id, "--reject", "--message", "why not")
    chat = command_line("chat", "--thread", thread_id)
    return [f"approve: {approve}", f"reject:  {reject}", f"or answer it in a chat: {chat}"]


def continue_hint(thread_id: str) -> str:
    again = command_line("ask", "--thread", thread_id, "QUESTION")
    return f"thread: {thread_id}  (continue with {again})"
