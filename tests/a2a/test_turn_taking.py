"""One turn at a time per conversation: the shared turn locks.

A sub-agent's parallel calls taking turns is in the `SubAgent` conformance suite
(test_subagent_conformance.py), for the in-process and the remote sub-agent alike.
"""

from __future__ import annotations

import asyncio

import pytest

from pilothouse.runtime.turn_locks import ConversationBusy, TurnLocks


async def test_a_claimed_thread_is_busy_until_released_and_other_threads_are_free() -> None:
    locks = TurnLocks()
    lease = await locks.claim("t-1")
    with pytest.raises(ConversationBusy) as busy:
        await locks.claim("t-1")
    assert "Retry" in (busy.value.hint or "")
    assert locks.try_claim("t-1") is None
    other = await locks.claim("t-2")
    lease.release()
    lease.release()  # idempotent: never frees a later claim
    again = await locks.claim("t-1")
    lease.release()
    assert locks.busy("t-1")
    again.release()
    other.release()
    assert not locks.busy("t-1") and not locks.busy("t-2")


async def test_a_claim_waits_for_a_turn_whose_client_left() -> None:
    locks = TurnLocks()
    leaving = await locks.claim("t-1")
    leaving.client_left()
    waiting = asyncio.create_task(locks.claim("t-1"))
    await asyncio.sleep(0)
    assert not waiting.done()
    leaving.release()
    (await waiting).release()
