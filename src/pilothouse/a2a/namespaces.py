"""Whose conversation a thread is: the thread ids of A2A callers and of internal sub-agents.

Agents of one process share one checkpointer, so a thread id must say who may reach it:

- `a2a:<caller>:<agent>:<context id>`: an A2A context of one caller (an API key's identity)
  with one agent. Two callers who pick the same context id get two conversations.
- `sub:<agent>:<parent thread>`: the conversation a supervisor holds with one of its
  in-process sub-agents on behalf of its own thread (`runtime.subagent.subagent_thread`).
  Nobody outside can address it.

REST conversations keep the ids they were created with; these prefixes are refused there.

No A2A answer tells whether an id exists for someone else. Tasks are stored under their
caller's name, so another caller's task id and an id nobody used give the same "task not
found" on every method (get, cancel, subscribe, a message naming it, push configs). A context
id is the caller's own name for a conversation: A2A lets a client pick one (the supervisor
derives its ids from its threads), and a message without one gets a random id from the SDK.
A picked id lands in the caller's namespace, so one another caller uses is, for this caller,
a new and empty conversation exactly like an id nobody used: picking cannot probe or claim.
New conversations count against the caller's quota either way (`handler`).
"""

from __future__ import annotations

from a2a.server.context import ServerCallContext

from pilothouse.runtime.subagent import SUBAGENT_PREFIX

A2A_PREFIX = "a2a:"
RESERVED_PREFIXES = (A2A_PREFIX, SUBAGENT_PREFIX)
#: The identity of a caller on this machine when no API key is configured.
ANONYMOUS = "local"


def a2a_thread(caller: str, agent: str, context_id: str) -> str:
    """The thread of `caller`'s A2A context `context_id` with `agent`."""
    return f"{A2A_PREFIX}{caller}:{agent}:{context_id}"


def is_reserved(thread_id: str) -> bool:
    """True for thread ids only the A2A server or the supervisor may use."""
    return thread_id.startswith(RESERVED_PREFIXES)


def caller_name(context: ServerCallContext | None) -> str:
    """The identity an A2A request was authenticated as (its tasks' owner).

    The authentication middleware of `pilothouse serve` sets it on every request; an app
    served without it (tests of the A2A layer alone) acts for the anonymous local caller.
    """
    name = context.user.user_name if context is not None else ""
    return name or ANONYMOUS
