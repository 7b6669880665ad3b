"""A sub-agent at an A2A URL, through the a2a-sdk client: the remote half of `SubAgent`.

The card is fetched on first use and again after `card_ttl_seconds` or any connection failure,
so an agent that was down when the supervisor started (or restarted since) is picked up on the
next call. A call is bounded by `timeout_seconds`; a timed-out task, or one whose caller was
cancelled, is cancelled on the remote side before the call returns. Parallel calls of one thread
take turns here (the agent would refuse the second as busy). Replies are read from the
structured parts the executor sends (approval requests, error and suggestion), so they are
word for word those of `InProcessSubAgent`. Every failure becomes a reply that names the agent
and the reason. Each call is an A2A client span whose `traceparent` the agent continues.
With an `api_key` (PILOTHOUSE_AGENTS_<NAME>_KEY) every request carries `Authorization: Bearer
<key>`, as the agent's card asks; the remote agent files the supervisor's tasks under that
key's identity.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any

import httpx
from a2a.client import A2ACardResolver, Client, ClientCallContext, ClientConfig, ClientFactory
from a2a.helpers import get_data_parts
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskState,
)
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import A2AError

from pilothouse.a2a.card import rebase_card
from pilothouse.a2a.decisions import format_decision
from pilothouse.observability.tracing import a2a_span
from pilothouse.runtime.answer_budget import BUDGET_METADATA_KEY
from pilothouse.runtime.session import ApprovalDecision
from pilothouse.runtime.subagent import (
    SubAgentReply,
    describe_interrupt,
    not_waiting,
    run_failed,
    unavailable,
)
from pilothouse.runtime.turn_locks import TurnLocks

log = logging.getLogger("pilothouse.a2a")


def context_id(thread_id: str) -> str:
    """The A2A context id of a supervisor thread: stable, and 36 characters like the SDK's
    task table expects (a longer id would not fit its PostgreSQL column)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"pilothouse:thread:{thread_id}"))


def _text(parts: Any) -> str:
    return "\n".join(p.text for p in parts if p.HasField("text"))


def _data(parts: Any) -> dict[str, Any]:
    """The structured part of a status message (the executor sends at most one)."""
    found = [d for d in get_data_parts(parts) if isinstance(d, dict)]
    return found[0] if found else {}


def _approval_text(data: dict[str, Any]) -> str:
    """The pending approvals of an `input-required` status, rendered as in process (from the
    interrupt values the executor sends, not its text, which adds a hint for people)."""
    requests = data.get("requests") if data.get("kind") == "approval" else None
    return "\n".join(describe_interrupt(v) for v in requests) if requests else ""


class _Reading:
    """What one streamed task said so far: its id, state, answer and last status message."""

    def __init__(self) -> None:
        self.task_id = ""
        self.state = TaskState.TASK_STATE_UNSPECIFIED
        self.answer = ""
        self.status_text = ""
        self.status_data: dict[str, Any] = {}
        #: The message went out (a call still waiting for its turn has no task to cancel).
        self.sent = False

    def take(self, response: StreamResponse) -> None:
        if response.HasField("task"):
            self.task_id = response.task.id
            self.state = response.task.status.state
            self.answer = "".join(_text(a.parts) for a in response.task.artifacts) or self.answer
        elif response.HasField("status_update"):
            self.task_id = self.task_id or response.status_update.task_id
            self.state = response.status_update.status.state
            if response.status_update.status.HasField("message"):
                self.status_text = _text(response.status_update.status.message.parts)
                self.status_data = _data(response.status_update.status.message.parts)
        elif response.HasField("artifact_update"):
            update = response.artifact_update
            self.task_id = self.task_id or update.task_id
            chunk = _text(update.artifact.parts)
            self.answer = self.answer + chunk if update.append else chunk
        elif response.HasField("message"):
            self.state = TaskState.TASK_STATE_COMPLETED
            self.answer = _text(response.message.parts)


class RemoteSubAgent:
    """A sub-agent served over A2A at `url` (its base URL, e.g. http://host:8080/a2a/argocd)."""

    def __init__(self, name: str, url: str, *, description: str = "",
                 timeout_seconds: float = 180.0, connect_timeout_seconds: float = 5.0,
                 card_ttl_seconds: float = 60.0, api_key: str | None = None) -> None:
        self.name = name
        self.url = url.rstrip("/") + "/"
        self.description = description or f"The {name} agent at {self.url}"
        self.timeout_seconds = timeout_seconds
        self.card_ttl_seconds = card_ttl_seconds
        # No read timeout: an agent may think between events; `timeout_seconds` bounds a call.
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=connect_timeout_seconds),
                                       headers=headers)
        self._client: Client | None = None
        self._fetched_at = 0.0
        # The agent refuses a second message on a busy context; parallel calls of one
        # supervisor thread wait their turn here instead, as they do in process.
        self._turns = TurnLocks()

    async def _connect(self) -> Client:
        fresh = time.monotonic() - self._fetched_at < self.card_ttl_seconds
        if self._client is not None and fresh:
            return self._client
        card = await A2ACardResolver(self._http, self.url).get_agent_card()
        config = ClientConfig(httpx_client=self._http, streaming=True,
                              supported_protocol_bindings=[TransportProtocol.JSONRPC])
        self._client = ClientFactory(config).create(rebase_card(card, self.url))
        self._fetched_at = time.monotonic()
        self.description = card.description or self.description
        return self._client

    def _forget(self) -> None:
        self._client = None  # reconnect (and re-read the card) on the next call

    async def ask(self, question: str, thread_id: str, *,
                  budget_tokens: int | None = None) -> SubAgentReply:
        return await self._send(question, thread_id, budget_tokens=budget_tokens)

    async def waiting(self, thread_id: str) -> str | None:
        task = await self._waiting_task(thread_id)
        if task is None:
            return None
        parts = task.status.message.parts
        return _approval_text(_data(parts)) or _text(parts) or "Approval needed."

    async def decide(self, thread_id: str, decision: ApprovalDecision) -> SubAgentReply:
        task = await self._waiting_task(thread_id)
        if task is None:
            return not_waiting(self.name)
        return await self._send(format_decision(decision), thread_id, task_id=task.id)

    async def _waiting_task(self, thread_id: str) -> Any:
        # Asked of the agent, not remembered here: it survives a supervisor restart.
        try:
            client = await self._connect()
            page = await client.list_tasks(ListTasksRequest(
                context_id=context_id(thread_id), status=TaskState.TASK_STATE_INPUT_REQUIRED,
                page_size=1))
        except (A2AError, httpx.HTTPError) as error:
            log.info("Could not ask %s for pending approvals: %s", self.name, error)
            self._forget()
            return None
        return page.tasks[0] if page.tasks else None

    async def _send(self, text: str, thread_id: str, *, budget_tokens: int | None = None,
                    task_id: str = "") -> SubAgentReply:
        message = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex,
                          context_id=context_id(thread_id), task_id=task_id,
                          parts=[Part(text=text)])
        request = SendMessageRequest(message=message)
        if budget_tokens:
            request.metadata.update({BUDGET_METADATA_KEY: budget_tokens})
        try:
            client = await self._connect()
        except (A2AError, httpx.HTTPError) as error:
            self._forget()
            return unavailable(self.name, f"it cannot be reached at {self.url} ({error})")
        reading = _Reading()
        try:
            async with asyncio.timeout(self.timeout_seconds), self._turns.queued(thread_id):
                try:
                    await self._stream(client, request, reading)
                except asyncio.CancelledError:
                    # Timed out, or the caller gave up (its own turn was cancelled): stop the
                    # remote run, still holding the thread's turn, and only then go on.
                    if reading.sent:
                        await asyncio.shield(self._cancel(client, reading.task_id, thread_id))
                    raise
        except TimeoutError:
            return unavailable(self.name, f"it did not answer within {self.timeout_seconds:g} s")
        except (A2AError, httpx.HTTPError) as error:
            self._forget()
            return unavailable(self.name, f"the connection was lost mid-answer ({error})")
        return self._reply(reading)

    async def _stream(self, client: Client, request: SendMessageRequest,
                      reading: _Reading) -> None:
        """Read the task's events into `reading`, the call traced as one A2A hop: the
        `traceparent` header carries the trace, so the agent's spans join the caller's."""
        headers: dict[str, str] = {}
        with a2a_span(self.name, role="client", carrier=headers,
                      context_id=request.message.context_id) as span:
            call = ClientCallContext(service_parameters=headers)
            reading.sent = True
            async for response in client.send_message(request, context=call):
                reading.take(response)
            if reading.task_id:
                span.set_attribute("pilothouse.a2a.task_id", reading.task_id)

    def _reply(self, reading: _Reading) -> SubAgentReply:
        if reading.state == TaskState.TASK_STATE_COMPLETED:
            return SubAgentReply(self.name, "completed", reading.answer)
        if reading.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            return SubAgentReply(self.name, "input_required",
                                 _approval_text(reading.status_data) or reading.status_text)
        if reading.state in (TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED):
            error, hint = reading.status_data.get("error"), reading.status_data.get("suggestion")
            if isinstance(error, str) and error:
                return run_failed(self.name, error, hint if isinstance(hint, str) else None)
            return unavailable(self.name, reading.status_text or "its run failed")
        return unavailable(self.name, "its answer stream ended before the task finished "
                                      f"(state {TaskState.Name(reading.state)})")

    async def _cancel(self, client: Client, task_id: str, thread_id: str) -> None:
        """Cancel the task of this call and wait until the agent has stopped its run.

        Cancelled before the task's first event arrived, the call knows no task id: the
        thread's unfinished task is then the one (calls of one thread take turns here).
        """
        try:
            async with asyncio.timeout(5):
                ids = [task_id] if task_id else await self._unfinished(client, thread_id)
                for task in ids:
                    await client.cancel_task(CancelTaskRequest(id=task))
        except (A2AError, httpx.HTTPError, TimeoutError) as error:
            log.info("Could not cancel %s task %s: %s", self.name, task_id or thread_id, error)

    @staticmethod
    async def _unfinished(client: Client, thread_id: str) -> list[str]:
        page = await client.list_tasks(ListTasksRequest(context_id=context_id(thread_id),
                                                        page_size=10))
        running = (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
        return [t.id for t in page.tasks if t.status.state in running]

    async def aclose(self) -> None:
        await self._http.aclose()
