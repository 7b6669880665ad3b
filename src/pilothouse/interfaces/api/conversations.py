"""Conversation endpoints: create, list, read, delete, ask (SSE) and answer approvals (SSE)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BaseModel, Field

from pilothouse.agents.registry import SPECIALISTS
from pilothouse.interfaces.api.errors import ApiError
from pilothouse.interfaces.api.history import render_history
from pilothouse.interfaces.api.identity import Identity
from pilothouse.interfaces.api.limits import Limits
from pilothouse.interfaces.api.runtime import ApiRuntime, get_runtime
from pilothouse.interfaces.api.security import current_identity
from pilothouse.interfaces.api.streaming import EventStreamResponse
from pilothouse.runtime.events import ApprovalRequest
from pilothouse.runtime.input_limits import MAX_ID_CHARS, MAX_MESSAGE_CHARS
from pilothouse.runtime.session import ApprovalDecision
from pilothouse.runtime.subagent import subagent_thread

Runtime = Annotated[ApiRuntime, Depends(get_runtime)]
Caller = Annotated[Identity, Depends(current_identity)]
router = APIRouter(prefix="/conversations", tags=["conversations"])

SSE_RESPONSE: dict[int | str, dict[str, Any]] = {200: {
    "description": "Server-sent events, one per line pair `event: <kind>` / `data: {kind, "
                   "text, data}`: token, tool_call, tool_result, context, plan, interrupt "
                   "(an approval request), answer, error; the last one is `done`.",
    "content": {"text/event-stream": {}},
}}


class NewConversation(BaseModel):
    """Body of `POST /conversations`."""

    title: str = Field("", max_length=200, description="Shown in lists; defaults to the "
                                                         "first question.")


class Question(BaseModel):
    """Body of `POST /conversations/{id}/ask`."""

    question: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)


class Decision(BaseModel):
    """Body of `POST /conversations/{id}/approvals`."""

    decision: Literal["approve", "reject"]
    message: str | None = Field(None, max_length=4_000,
                                description="Why it was rejected; the agent reads it.")
    interrupt_id: str | None = Field(None, max_length=MAX_ID_CHARS,
                                     description="Answer this approval only (default: every "
                                                 "pending one).")


class ConversationOut(BaseModel):
    """A conversation as listed; `owner` is the identity that started it."""

    id: str
    title: str
    owner: str
    created_at: str
    updated_at: str


class ConversationPage(BaseModel):
    """One page of conversations, most recently used first."""

    conversations: list[ConversationOut]
    total: int
    limit: int
    offset: int


class PendingApproval(BaseModel):
    """An approval the conversation waits for; `value` says what would run."""

    id: str
    value: dict[str, Any]


class PendingOut(BaseModel):
    pending: list[PendingApproval]


class ConversationDetail(ConversationOut):
    """A conversation with its messages (tool results trimmed) and pending approvals."""

    messages: list[dict[str, Any]]
    pending: list[PendingApproval]


def _pending(events: list[ApprovalRequest]) -> list[PendingApproval]:
    return [PendingApproval(id=e.id, value=dict(e.value)) for e in events]


@router.post("", status_code=201, response_model=ConversationOut)
async def create_conversation(runtime: Runtime, caller: Caller, limits: Limits,
                              body: NewConversation | None = None) -> dict[str, Any]:
    limits.count_new_conversation(caller)  # 429 past PILOTHOUSE_NEW_CONVERSATIONS_PER_MINUTE
    record = await runtime.registry.create(body.title if body else "", owner=caller.name)
    return record.as_json()


# SQLite integers are 64-bit: a larger offset (e.g. 1e30) would fail in the driver, not here.
MAX_OFFSET = 1_000_000_000


@router.get("", response_model=ConversationPage)
async def list_conversations(runtime: Runtime, caller: Caller,
                             limit: Annotated[int, Query(ge=1, le=200)] = 50,
                             offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
                             ) -> dict[str, Any]:
    """The caller's conversations (an admin's list holds everyone's)."""
    owner = None if caller.admin else caller.name
    records, total = await runtime.registry.list(limit, offset, owner=owner)
    return {"conversations": [r.as_json() for r in records], "total": total,
            "limit": limit, "offset": offset}


@router.get("/{thread_id}", response_model=ConversationDetail)
async def read_conversation(thread_id: str, runtime: Runtime,
                            caller: Caller) -> dict[str, Any]:
    record = await runtime.find(thread_id, caller, read=True)
    conversation = runtime.conversation(thread_id)
    return {**record.as_json(), "messages": render_history(await conversation.history()),
            "pending": _pending(await conversation.pending())}


@router.delete("/{thread_id}", status_code=204)
async def delete_conversation(thread_id: str, runtime: Runtime,
                              caller: Caller) -> Response:
    await runtime.find(thread_id, caller)
    lease = await runtime.claim(thread_id)  # never delete under a running answer
    try:
        checkpointer = runtime.graph.checkpointer
        if checkpointer not in (None, True, False):
            # The supervisor's threads with its in-process agents go with the conversation.
            for thread in (thread_id, *(subagent_thread(n, thread_id) for n in SPECIALISTS)):
                await checkpointer.adelete_thread(thread)  # type: ignore[union-attr]
        await runtime.registry.delete(thread_id)
    finally:
        lease.release()
    return Response(status_code=204)


@router.get("/{thread_id}/pending", response_model=PendingOut)
async def pending_approvals(thread_id: str, runtime: Runtime,
                            caller: Caller) -> dict[str, Any]:
    await runtime.find(thread_id, caller, read=True)
    return {"pending": _pending(await runtime.conversation(thread_id).pending())}


@router.post("/{thread_id}/ask", response_class=EventStreamResponse, responses=SSE_RESPONSE,
             status_code=200)
async def ask(thread_id: str, body: Question, runtime: Runtime,
              caller: Caller) -> EventStreamResponse:
    """Ask in the caller's conversation `thread_id`, created by `POST /conversations`.

    An id that is not the caller's conversation, whether it exists or not, is the same 404
    before anything else (it could otherwise look busy): asking never creates a conversation,
    so ids are neither probed nor claimed this way (and `POST /conversations` holds the quota).
    """
    await runtime.find(thread_id, caller)
    conversation = runtime.conversation(thread_id)
    lease = await runtime.claim(thread_id)
    try:
        await runtime.find(thread_id, caller)  # again: it may have been started meanwhile
        if await conversation.pending():
            raise ApiError(409, f"Conversation {thread_id} is waiting for an approval.",
                           f"Approve or reject it first: POST /conversations/{thread_id}/"
                           "approvals, or start a new conversation.")
        await runtime.registry.touch(thread_id, body.question, owner=caller.name)
    except BaseException:
        lease.release()
        raise
    return EventStreamResponse(conversation.ask(body.question), thread_id=thread_id,
                               on_close=lease.release, on_cancel=lease.client_left,
                               observer=runtime.observer)


@router.post("/{thread_id}/approvals", response_class=EventStreamResponse, status_code=200,
             responses=SSE_RESPONSE)
async def decide(thread_id: str, body: Decision, runtime: Runtime,
                 caller: Caller) -> EventStreamResponse:
    """Answer an approval: only the identity that owns the conversation may."""
    await runtime.find(thread_id, caller)  # another's or none: the same 404
    conversation = runtime.conversation(thread_id)
    lease = await runtime.claim(thread_id)
    try:
        await runtime.find(thread_id, caller)
        waiting = [e.id for e in await conversation.pending()]
        if not waiting:
            raise ApiError(409, f"Conversation {thread_id} is not waiting for an approval.",
                           "Approvals appear as `interrupt` events; see GET .../pending.")
        if body.interrupt_id is not None and body.interrupt_id not in waiting:
            raise ApiError(404, f"Approval {body.interrupt_id} is not pending.",
                           f"Pending approvals: {', '.join(waiting)}.")
        await runtime.registry.touch(thread_id, owner=caller.name)
    except BaseException:
        lease.release()
        raise
    decision: ApprovalDecision = {"type": "approve"}
    if body.decision == "reject":
        decision = {"type": "reject", "message": body.message or "The user rejected this action."}
    return EventStreamResponse(conversation.decide(decision, body.interrupt_id),
                               thread_id=thread_id, on_close=lease.release,
                               on_cancel=lease.client_left,
                               observer=runtime.observer)
