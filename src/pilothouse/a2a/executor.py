"""Run an agent graph for A2A tasks: one `Conversation` per context, events mapped to A2A.

Context id = conversation, of the caller who sent it: thread `a2a:<caller>:<agent>:<context
id>` (see `namespaces`), so agents sharing one checkpointer never mix threads, two callers never
share one, and no caller reaches a supervisor's internal sub-agent threads. One turn runs at a
time per conversation: a second message while a turn runs is refused with "busy" (the turn
lock of `runtime.turn_locks`, the same one the REST API uses). A turn maps its events: answer
text -> the `answer` artifact (streamed chunks, then the whole answer), tool calls, results,
context and plan actions -> `working` status updates, an approval -> `input-required` (the
next message, "approve" or "reject: reason", answers it), an error -> `failed` with the message
and what to do.

Cancelling a task (a cancel request, a client that went away, a closed queue) cancels the run:
the graph stops, so no further model calls are made, and any tool call the run left open gets
its synthetic result in the stored conversation at once, not only at the next load.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, assert_never

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.types.a2a_pb2 import Message, TaskState
from a2a.utils.errors import UnsupportedOperationError
from langgraph.graph.state import CompiledStateGraph

from pilothouse.a2a.decisions import REPLY_HINT, parse_decision
from pilothouse.a2a.namespaces import a2a_thread, caller_name
from pilothouse.a2a.publisher import TaskPublisher
from pilothouse.observability.tracing import a2a_span
from pilothouse.runtime.answer_budget import BUDGET_METADATA_KEY, with_answer_budget
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
    to_wire,
)
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.subagent import describe_interrupt, resolve_open_tool_calls
from pilothouse.runtime.turn_locks import ConversationBusy, TurnLease, TurnLocks

log = logging.getLogger("pilothouse.a2a")

#: Where the request handler leaves the turn lease it claimed for the executor to adopt.
LEASE_KEY = "pilothouse.turn_lease"


def busy_error(context_id: str) -> UnsupportedOperationError:
    return UnsupportedOperationError(
        message=f"Conversation {context_id} is busy with another turn; retry after the "
                "current turn ends.")


class ConversationExecutor(AgentExecutor):
    """The A2A side of one agent graph; `runs` holds the turns in flight by task id."""

    def __init__(self, graph: CompiledStateGraph[Any, Any, Any, Any], *, agent: str,
                 locks: TurnLocks | None = None) -> None:
        self.graph = graph
        self.agent = agent
        self.locks = locks or TurnLocks()
        self.runs: dict[str, asyncio.Task[None]] = {}

    def thread(self, caller: str, context_id: str) -> str:
        return a2a_thread(caller, self.agent, context_id)

    def conversation(self, context_id: str, caller: str | None = None) -> Conversation:
        """The conversation of `caller`'s (default: the anonymous local caller's) context."""
        return Conversation(self.graph, self.thread(caller or caller_name(None), context_id),
                            agent=self.agent)

    async def starts_conversation(self, message: Message, call: ServerCallContext) -> bool:
        """True when `message` would start a conversation of its caller: it names no task, and
        its context is new (none given: the SDK assigns a random one) or has no checkpoint in
        the caller's namespace. Another caller's use of the same context id does not count."""
        if message.task_id:
            return False  # continues a task (the SDK refuses one that is not the caller's)
        if not message.context_id:
            return True
        checkpointer = self.graph.checkpointer
        if checkpointer is None or isinstance(checkpointer, bool):
            return False  # nothing is kept, so nothing accumulates
        config = {"configurable": {"thread_id": self.thread(caller_name(call),
                                                            message.context_id)}}
        return await checkpointer.aget_tuple(config) is None  # type: ignore[arg-type]

    async def claim(self, message: Message, call: ServerCallContext) -> TurnLease | None:
        """Claim the conversation `message` continues, before the SDK starts a task for it.

        Raises the A2A "busy" error while another turn of it runs; None for a message that
        names no context (a new conversation, or one known only by its task id: `execute`
        claims those). The lease is left in the call's state for `execute` to adopt.
        """
        if not message.context_id:
            return None
        try:
            lease = await self.locks.claim(self.thread(caller_name(call), message.context_id))
        except ConversationBusy:
            raise busy_error(message.context_id) from None
        call.state[LEASE_KEY] = lease
        return lease

    async def _adopt(self, context: RequestContext, thread: str) -> TurnLease | None:
        call = context.call_context
        lease = call.state.get(LEASE_KEY) if call is not None else None
        if isinstance(lease, TurnLease) and lease.thread_id == thread \
                and not lease.released.is_set():
            lease.adopt()
            return lease
        lease = await self.locks.try_claim_everywhere(thread)
        if lease is not None:
            lease.adopt()
        return lease

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run one turn of the task's conversation and publish it."""
        task_id, context_id = str(context.task_id), str(context.context_id)
        caller = caller_name(context.call_context)
        publisher = TaskPublisher(event_queue, task_id, context_id, agent=self.agent)
        lease = await self._adopt(context, self.thread(caller, context_id))
        if lease is None:
            if context.current_task is not None:
                raise busy_error(context_id)  # the SDK answers the caller with it
            if context.message is not None:
                await publisher.open_task(context.message)
            await publisher.status(TaskState.TASK_STATE_FAILED, busy_error(context_id).message)
            return
        try:
            if context.current_task is None and context.message is not None:
                await publisher.open_task(context.message)
            await publisher.status(TaskState.TASK_STATE_WORKING)
            turn = Turn(self.conversation(context_id, caller), context.get_user_input(),
                        _budget(context.metadata.get(BUDGET_METADATA_KEY)))
            run = asyncio.create_task(self._run(turn, publisher, _trace_headers(context), caller),
                                      name=f"a2a-{self.agent}-{task_id}")
            # Once the turn has published its end, a follow-up (an approval) may arrive
            # before this frame releases the lease: it waits for the release, not "busy".
            run.add_done_callback(lambda _: lease.client_left())
            self.runs[task_id] = run
            try:
                await run
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # execute itself was cancelled (server shutdown): the run went too
                # Only the run was cancelled: `cancel()` publishes the final status itself.
            finally:
                self.runs.pop(task_id, None)
        finally:
            lease.release()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Stop the task's run, then mark it canceled (the queue is still open here)."""
        task_id, context_id = str(context.task_id), str(context.context_id)
        run = self.runs.get(task_id)
        if run is not None and not run.done():
            run.cancel()
            await asyncio.wait([run])
            log.info("Cancelled the run of task %s (%s agent).", task_id, self.agent)
        elif run is not None and not run.cancelled():
            return  # the turn ended on its own and published its final status
        publisher = TaskPublisher(event_queue, task_id, context_id, agent=self.agent)
        await publisher.status(TaskState.TASK_STATE_CANCELED, "The task was cancelled.")

    async def _run(self, turn: Turn, publisher: TaskPublisher, headers: Mapping[str, str],
                   caller: str) -> None:
        # The served end of the caller's A2A hop: the turn's spans continue the caller's trace.
        with a2a_span(self.agent, role="server", carrier=headers, task_id=publisher.task_id,
                      context_id=publisher.context_id, caller=caller):
            try:
                await self._publish(turn, publisher)
            except asyncio.CancelledError:
                # Shielded: a second cancellation must not leave the calls open.
                added = await asyncio.shield(resolve_open_tool_calls(turn.conversation))
                if added:
                    log.info("Resolved %d open tool call(s) of cancelled task %s.", added,
                             publisher.task_id)
                raise
            if publisher.closed:
                await asyncio.shield(resolve_open_tool_calls(turn.conversation))

    async def _publish(self, turn: Turn, publisher: TaskPublisher) -> None:
        answer, error, approvals = "", None, []
        async for event in turn.events():
            match event:
                case Token(text=text):
                    await publisher.token(text)
                case Answer(text=text):
                    answer = text
                case ApprovalRequest(value=value):
                    approvals.append(value)
                case TurnFailed():
                    error = event
                case ToolCalled() | ToolResult() | ContextNote() | PlanUpdate() | ModelWaiting() \
                        | ToolProgress():
                    await publisher.status(TaskState.TASK_STATE_WORKING, _progress_text(event),
                                           _progress_data(event))
                case _:
                    assert_never(event)
            if publisher.closed:
                return  # nobody can hear the rest: leaving the loop closes the graph's stream
        if error is not None:
            await publisher.status(TaskState.TASK_STATE_FAILED, _error_text(error),
                                   dict(error.payload))
        elif approvals:
            if answer:
                await publisher.answer(answer)
            text = "\n".join(describe_interrupt(v) for v in approvals) + "\n" + REPLY_HINT
            await publisher.status(TaskState.TASK_STATE_INPUT_REQUIRED, text,
                                   {"kind": "approval", "requests": approvals})
        else:
            await publisher.answer(answer)
            await publisher.status(TaskState.TASK_STATE_COMPLETED)


@dataclass
class Turn:
    """One message to a conversation: a question, or the answer to a pending approval."""

    conversation: Conversation
    text: str
    budget: int | None

    async def events(self) -> AsyncIterator[Event]:
        pending = await self.conversation.pending()
        if not pending:
            async for event in self.conversation.ask(with_answer_budget(self.text, self.budget)):
                yield event
            return
        decision = parse_decision(self.text)
        if decision is None:
            # Still waiting: ask again rather than drop the approval.
            for item in pending:
                yield item
            return
        async for event in self.conversation.decide(decision):
            yield event


def _trace_headers(context: RequestContext) -> Mapping[str, str]:
    """The request's HTTP headers (the SDK keeps them in the call state): `traceparent`."""
    call = context.call_context
    headers = call.state.get("headers") if call is not None else None
    return headers if isinstance(headers, Mapping) else {}


def _budget(value: Any) -> int | None:
    try:
        return int(value) if value else None
    except (TypeError, ValueError):
        return None


def _progress_text(
    event: ToolCalled | ToolResult | ContextNote | PlanUpdate | ModelWaiting | ToolProgress,
) -> str:
    match event:
        case ToolCalled(name=name):
            return f"Calling {name}"
        case ToolResult(name=name, status=status, chars=chars):
            return f"{name} {'failed' if status == 'error' else 'returned'} ({chars:,} chars)"
        case ContextNote(action=action):
            return f"context: {action.detail}"
        case PlanUpdate(action=action):
            return f"plan: {action}"
        case ModelWaiting():
            return event.text
        case ToolProgress(name=name, message=message):
            return f"{name}: {message}"
        case _:
            assert_never(event)


def _progress_data(event: Event) -> dict[str, Any]:
    """A `working` update's data: the event's wire form, flat (`kind` first, as A2A sends it)."""
    wire = to_wire(event)
    data: dict[str, Any] = {"kind": wire["kind"], **wire["data"]}
    if isinstance(event, ToolResult):
        data["preview"] = event.preview[:200]
    return data


def _error_text(event: TurnFailed) -> str:
    hint = event.suggestion
    return f"{event.message} What to do: {hint}" if hint else event.message
