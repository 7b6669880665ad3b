"""`pilothouse ask` and `pilothouse chat`: one turn for scripts, a conversation for people.

Both answer approvals wherever the conversation is: `ask --thread ID --approve|--reject` for
scripts, and `chat --thread ID`, which shows the pending approval before anything else. A
question to a thread that waits for an approval is not asked (the pending call would be
abandoned); the commands that answer the approval are printed instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Literal

from rich.console import Console

from pilothouse.agents.factory import ProgressCallback, check_choice, open_agent_factory
from pilothouse.agents.registry import Topology
from pilothouse.config import Settings
from pilothouse.interfaces.cli_activity import WorkingIndicator
from pilothouse.interfaces.cli_threads import (
    CommandLineMisuse,
    claim_thread,
    command_line,
    note_question,
)
from pilothouse.interfaces.cli_turns import (
    ExitCode,
    JsonLines,
    TurnOutcome,
    approval_call_ids,
    approval_hints,
    continue_hint,
    play,
)
from pilothouse.interfaces.render import EventPrinter, progress_bar, styled_approval_lines
from pilothouse.runtime.events import ApprovalRequest
from pilothouse.runtime.handle import AgentHandle
from pilothouse.runtime.session import ApprovalDecision, Conversation

Verdict = Literal["approve", "reject"]
DECLINED = "The user declined."


@dataclass(frozen=True)
class AskRequest:
    """What `pilothouse ask` was asked to do (checked: a question or a verdict, not both)."""

    question: str | None
    thread: str | None
    agent: str | None  # `chosen_agent(--agent)`: None when not given
    as_json: bool = False
    verdict: Verdict | None = None
    message: str | None = None

    @staticmethod
    def checked(question: str | None, thread: str | None, agent: str | None, *,
                as_json: bool, approve: bool, reject: bool,
                message: str | None) -> AskRequest:
        if approve and reject:
            raise CommandLineMisuse("--approve and --reject cannot both be given.",
                                    hint="Give one of them.")
        verdict: Verdict | None = "approve" if approve else "reject" if reject else None
        if verdict and question:
            raise CommandLineMisuse(
                f"--{verdict} answers the pending approval; it takes no question.",
                hint=f"Run `{command_line('ask', '--thread', thread or 'ID', '--' + verdict)}`"
                     ", then ask your question.")
        if verdict and not thread:
            example = command_line("ask", "--thread", "ID", "--" + verdict)
            raise CommandLineMisuse(f"--{verdict} needs the conversation it answers.",
                                    hint=f"Add the thread id it printed: `{example}`.")
        if message is not None and verdict != "reject":
            raise CommandLineMisuse("--message is the reason for --reject.",
                                    hint="Use it with --reject, or leave it out.")
        if not verdict and not (question or "").strip():
            raise CommandLineMisuse("Nothing to ask.",
                                    hint='Give a question: `pilothouse ask "Which apps are '
                                         'degraded?"`, or --approve/--reject with --thread.')
        return AskRequest(question, thread, agent, as_json, verdict, message)

    def decision(self) -> ApprovalDecision:
        if self.verdict == "approve":
            return {"type": "approve"}
        return {"type": "reject", "message": self.message or DECLINED}


@asynccontextmanager
async def open_cli_agent(settings: Settings, agent: str,
                         progress: ProgressCallback) -> AsyncIterator[AgentHandle]:
    """The agent a CLI command talks to. Here the supervisor includes the DevOps agent on
    PILOTHOUSE_WORKSPACE or the current directory (the person's own shell, where they ran
    the command; a server starts it only when the workspace is set)."""
    check_choice(agent)  # before the model loads
    topology = Topology.from_settings(settings)
    topology = dataclasses.replace(topology, configured=topology.configured | {"devops"})
    async with open_agent_factory(settings, topology=topology, progress=progress) as factory:
        factory.warm_examples()
        factory.specialists_on_demand = True
        async with factory.open_agent(agent) as handle:
            yield handle


def terminal_printer(out: Console, err: Console) -> EventPrinter:
    """The screen printer, with the working indicator when both streams are terminals."""
    live = out.is_terminal and err.is_terminal
    return EventPrinter(out, err, indicator=WorkingIndicator(err, enabled=live))


def show_pending(pending: list[ApprovalRequest], thread_id: str, err: Console) -> None:
    """A pending approval, whole, and the commands that answer it."""
    for request in pending:
        err.print("Waiting for your approval:", style="bold yellow", highlight=False)
        for line, style in styled_approval_lines(request.value, style=""):
            err.print(f"  {line}", style=style, markup=False, highlight=False, soft_wrap=True)
    _print_lines(err, approval_hints(thread_id))


async def run_ask(settings: Settings, request: AskRequest, out: Console, err: Console) -> int:
    """One question (or one verdict on a pending approval); the exit code says how it ended."""
    rest = [f"--{request.verdict}"] if request.verdict else [request.question or ""]
    thread_id, agent = await claim_thread(settings, request.thread, request.agent,
                                          command="ask", rest=rest,
                                          question=request.question or "")
    json_lines = JsonLines() if request.as_json else None
    sink = json_lines or terminal_printer(out, err)
    with progress_bar(err) as progress:
        async with open_cli_agent(settings, agent, progress) as assistant:
            conversation = Conversation(assistant.graph, thread_id, assistant.name)
            pending = await conversation.pending() if request.thread else []
            if request.verdict and not pending:
                raise CommandLineMisuse(
                    f"Nothing in thread {thread_id} is waiting for approval.",
                    hint="Ask a question instead: "
                         f"`{command_line('ask', '--thread', thread_id, 'QUESTION')}`.")
            if pending and not request.verdict:
                if json_lines:
                    for item in pending:
                        json_lines.show(item)
                    json_lines.done(thread_id)
                err.print(f"Thread {thread_id} is waiting for your approval; answer it "
                          "before asking more.", style="yellow", highlight=False, soft_wrap=True)
                show_pending(pending, thread_id, err)
                return ExitCode.WAITING_FOR_APPROVAL
            if request.verdict:
                rejected = (approval_call_ids(pending[0].value)
                            if request.verdict == "reject" else set())
                outcome = TurnOutcome(rejected=rejected)
                events = conversation.decide(request.decision(), pending[0].id)
            else:
                outcome = TurnOutcome()
                events = conversation.ask(request.question or "")
            await play(events, sink, outcome)
            still = await conversation.pending()
    if json_lines:
        json_lines.done(thread_id)
    if still:
        _print_lines(err, approval_hints(thread_id))
    elif not json_lines:
        err.print(continue_hint(thread_id), style="dim", markup=False, highlight=False,
                  soft_wrap=True)
    return outcome.exit_code(bool(still))


def parse_verdict(answer: str) -> ApprovalDecision:
    """A person's answer at the approval prompt: y approves; n or Enter rejects; any other
    text rejects with that text as the reason (the agent reads it)."""
    text = answer.strip()
    if text.lower() in {"y", "yes", "a", "approve"}:
        return {"type": "approve"}
    if text.lower() in {"", "n", "no", "r", "reject"}:
        return {"type": "reject", "message": DECLINED}
    return {"type": "reject", "message": text}


async def _read(err: Console, prompt: str) -> str:
    # The prompt goes to stderr: stdout carries answers only, even in a chat.
    return await asyncio.to_thread(partial(err.input, prompt, markup=False))


async def _answer_approvals(conversation: Conversation, printer: EventPrinter,
                            err: Console, shown: TurnOutcome | None = None) -> ExitCode | None:
    """Ask about each pending approval and continue the run; None when none is left.

    An approval the last turn (`shown`) already printed is not printed again.
    """
    code: ExitCode | None = None
    seen = {request.id for request in shown.waiting} if shown else set()
    while pending := await conversation.pending():
        if pending[0].id not in seen:
            printer.show(pending[0])
        try:
            answer = await _read(err, "Approve? [y = approve / n = reject / or type why you "
                                      "reject it] ")
        except EOFError:
            return ExitCode.WAITING_FOR_APPROVAL
        decision = parse_verdict(answer)
        outcome = TurnOutcome(rejected=approval_call_ids(pending[0].value)
                              if decision["type"] == "reject" else set())
        await play(conversation.decide(decision, pending[0].id), printer, outcome)
        code = outcome.exit_code(False)
        seen = {request.id for request in outcome.waiting}
    return code


async def run_chat(settings: Settings, thread: str | None, agent: str | None,
                   out: Console, err: Console) -> int:
    """Chat until /exit or end of input; a pending approval comes first."""
    thread_id, agent_name = await claim_thread(settings, thread, agent, command="chat")
    printer = terminal_printer(out, err)
    code: ExitCode | None = ExitCode.ANSWERED
    with progress_bar(err) as progress:
        async with open_cli_agent(settings, agent_name, progress) as assistant:
            conversation = Conversation(assistant.graph, thread_id, assistant.name)
            err.print(f"[bold]Pilothouse[/] {assistant.name} ({assistant.model.name}, window "
                      f"{assistant.model.window.tokens:,} tokens, {len(assistant.tools)} tools)"
                      f", thread {thread_id}. Type /exit to leave.", highlight=False)
            code = await _answer_approvals(conversation, printer, err)
            while code != ExitCode.WAITING_FOR_APPROVAL:
                try:
                    question = (await _read(err, "you> ")).strip()
                except EOFError:
                    break
                if question in {"/exit", "/quit"}:
                    break
                if not question:
                    continue
                await note_question(settings, thread_id, question, agent_name)
                outcome = TurnOutcome()
                await play(conversation.ask(question), printer, outcome)
                code = (await _answer_approvals(conversation, printer, err, outcome)
                        or outcome.exit_code(False))
    if code == ExitCode.WAITING_FOR_APPROVAL:
        _print_lines(err, approval_hints(thread_id))
        return ExitCode.WAITING_FOR_APPROVAL
    again = command_line("chat", "--thread", thread_id)
    err.print(f"thread: {thread_id}  (continue with {again})", style="dim", markup=False,
              highlight=False, soft_wrap=True)
    return ExitCode.ANSWERED


def _print_lines(err: Console, lines: list[str]) -> None:
    for line in lines:
        err.print(line, markup=False, highlight=False, soft_wrap=True)
