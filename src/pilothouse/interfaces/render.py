"""Terminal rendering of conversation events: answer on stdout, activity on stderr.

On a terminal the answer streams token by token (then shows as Markdown when it did not
stream), with a working indicator and the elapsed time while the model or a tool works. When
stdout is not a terminal it gets the answer's plain text alone: no wrapping, no trailing
spaces, no colour, so a pipe or a file holds exactly what the agent wrote. Approvals and tool
errors are shown whole, as sentences: an approval is the call that would run (for the
supervisor, the sub-agent's real call), never a Python dict. Diffs, in an answer or in the
evidence an approval shows, are coloured by line on a terminal (`diff_text`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, assert_never

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from pilothouse.interfaces.cli_activity import WorkingIndicator, elapsed
from pilothouse.interfaces.diff_text import DIFF_STYLES, DiffMarkdown, fenced_parts, line_kinds
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

ARGS_SHOWN = 160  # characters of a tool call's arguments on its activity line
PREVIEW_SHOWN = 120  # characters of a successful result's first line


def format_args(args: Mapping[str, Any], limit: int | None = ARGS_SHOWN) -> str:
    """`name="x", page=2`: a call's arguments as they read in a call (cut at `limit`)."""
    text = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in args.items())
    return text if limit is None or len(text) <= limit else text[:limit - 3] + "..."


def plain(text: str) -> str:
    """`text` for a pipe or file: every line without trailing spaces, ending in one newline."""
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()) + "\n"


def tool_error(preview: str) -> list[str]:
    """A failed tool's result as lines to show whole: its error and what to do, from a JSON
    `{error, suggestion}` body or the rendered view ("**Error:** ...")."""
    try:
        body = json.loads(preview)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("error"):
        hint = body.get("suggestion")
        return [str(body["error"]), *([f"What to do: {hint}"] if hint else [])]
    lines = [line.replace("**", "").rstrip() for line in preview.strip().splitlines()]
    lines = [line for line in lines if line.strip()] or ["(no message)"]
    if lines[0].startswith("Error: "):
        lines[0] = lines[0][len("Error: "):]
    return lines


def _call_lines(call: Mapping[str, Any]) -> list[str]:
    name = str(call.get("name") or "action")
    description = str(call.get("description") or "").strip()
    lines = [line.rstrip() for line in description.splitlines()] or [f"Run {name}?"]
    return [*lines, f"call: {name}({format_args(call.get('args') or {}, limit=None)})"]


def approval_lines(value: Any) -> list[str]:
    """What an approval asks, as a person reads it: the description the gate wrote (the
    command and its working directory, or the sync target and its dry run), then the exact
    call. A supervisor's approval shows the sub-agent's real call, not its own `ask_<agent>`.
    """
    if not isinstance(value, Mapping):
        return [str(value)]
    agent, calls = value.get("agent"), value.get("subagent_calls") or []
    if agent and calls:
        lines = [f"The {agent} agent asks (through the supervisor):"]
        for call in calls:
            lines += ["  " + line for line in (_call_lines(call) if isinstance(call, Mapping)
                                               else [str(call)])]
        return lines
    if agent:  # a remote sub-agent: its own words are all there is
        return [line.rstrip() for line in str(value.get("description", "")).splitlines()]
    if isinstance(value.get("action_requests"), list):
        return [line for request in value["action_requests"] for line in _call_lines(request)]
    return _call_lines(value)


def styled_approval_lines(value: Any, style: str = "yellow") -> list[tuple[str, str]]:
    """`approval_lines` with a style each: sentences in `style`, the diff a change would apply
    (its ```diff fence, whose fence lines go) green, red and cyan like any diff."""
    styled: list[tuple[str, str]] = []
    for is_diff, chunk in fenced_parts("\n".join(approval_lines(value))):
        lines = chunk.splitlines()
        if not is_diff:
            styled += [(line, style) for line in lines]
            continue
        # A sub-agent's call is indented under the supervisor's line; its diff too.
        indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()),
                     default=0)
        kinds = line_kinds([line[indent:] for line in lines])
        styled += [(line, DIFF_STYLES[kind]) for line, kind in zip(lines, kinds, strict=True)]
    return styled


class EventPrinter:
    """Prints events as they arrive; the answer alone goes to stdout, so pipes get just it."""

    def __init__(self, out: Console, err: Console, *, as_json: bool = False,
                 indicator: WorkingIndicator | None = None) -> None:
        self.out = out
        self.err = err
        self.as_json = as_json
        self.indicator = indicator or WorkingIndicator(err, enabled=False)
        self._streamed = ""

    def begin(self) -> None:
        """A turn starts: the clock restarts and the indicator says the model is at work."""
        self.indicator.restart()
        self.indicator.show("thinking")

    def end(self) -> None:
        """The turn ended: the indicator goes, and a terminal learns how long it took."""
        self._end_stream()
        self.indicator.hide()
        if self.indicator.enabled:
            self.err.print(f"({elapsed(self.indicator.seconds())})", style="dim", highlight=False)

    def _end_stream(self) -> None:
        if self._streamed:
            self.out.print()
            self._streamed = ""

    def _activity(self, text: str, style: str = "") -> None:
        self.indicator.hide()
        self._end_stream()
        # Not a terminal: one line per line, however long (a log keeps commands whole).
        self.err.print(text, style=style, markup=False, highlight=False,
                       soft_wrap=not self.err.is_terminal)

    def show(self, event: Event) -> None:
        match event:
            case Token(text=text):
                if self.out.is_terminal:
                    self.indicator.hide()
                    self.out.print(text, end="", markup=False, highlight=False)
                    self._streamed += text
            case ToolCalled(name=name, args=args, agent=agent):
                indent, who = ("  ", f"{agent} ") if agent else ("", "")
                self._activity(f"{indent}→ {who}{name}({format_args(args)})", "cyan")
                self.indicator.show(f"running {name}")
            case ToolResult(name=name, status="error", preview=preview, agent=agent):
                indent = "  " if agent else ""
                first, *rest = tool_error(preview)
                self._activity(f"{indent}← {name} failed: {first}", "red")
                for line in rest:  # the suggestion is the useful part: never cut
                    self._activity(f"{indent}  {line}", "yellow")
                self.indicator.show("thinking")
            case ToolResult(name=name, chars=chars, preview=preview, agent=agent):
                first = preview.strip().splitlines()[0].strip() if preview.strip() else ""
                if len(first) > PREVIEW_SHOWN:
                    first = first[:PREVIEW_SHOWN - 3] + "..."
                self._activity(f"{'  ' if agent else ''}← {name}: {chars:,} chars  {first}"
                               .rstrip(), "dim")
                self.indicator.show("thinking")
            case ToolProgress(name=name, message=message, agent=agent):
                if self.indicator.enabled:  # a terminal: the status line says how far it is
                    self.indicator.show(f"{name}: {message}")
                else:
                    self._activity(f"{'  ' if agent else ''}… {name}: {message}", "dim")
            case ContextNote(action=action):
                self._activity(f"⚙ context: {action.detail}", "magenta")
            case PlanUpdate():
                pass  # the plan's steps show as the tool calls that carry them out
            case ApprovalRequest(value=value):
                self._activity("Approval needed:", "bold yellow")
                for line, style in styled_approval_lines(value):
                    self._activity(f"  {line}", style)
            case TurnFailed(message=message, suggestion=hint):
                self._activity(f"Error: {message}", "bold red")
                if hint:
                    self._activity(f"What to do: {hint}", "yellow")
            case Answer(text=text):
                self._answer(text)
            case ModelWaiting(ahead=ahead):
                if ahead and not self.indicator.enabled:  # a pipe or log: one line per change
                    self._activity(event.text, "dim")
                self.indicator.show(event.text if ahead else "thinking")
            case _:
                assert_never(event)

    def _answer(self, text: str) -> None:
        self.indicator.hide()
        streamed, self._streamed = self._streamed, ""
        if not self.out.is_terminal:
            self.out.file.write(plain(text))
            self.out.file.flush()
        elif streamed.strip() and streamed.strip() == text.strip():
            self.out.print()
        else:
            if streamed:  # what streamed was not the final answer (a layer changed it)
                self.out.print()
                self.err.print("[dim](the final answer:)[/]")
            self.out.print(DiffMarkdown(text))


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
