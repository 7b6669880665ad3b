"""One turn at a time per conversation: the shared turn locks, and a sub-agent's parallel calls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.subagent import InProcessSubAgent, subagent_thread
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


def echo(messages: Sequence[BaseMessage]) -> str:
    return f"answer to {messages[-1].content}"


async def test_parallel_calls_to_one_sub_agent_take_turns_in_its_conversation(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings()
    graph = build_agent(settings, scripted_setup([], default=echo), name="argocd",
                        checkpointer=InMemorySaver())
    agent = InProcessSubAgent("argocd", "Argo CD.", graph)

    replies = await asyncio.gather(*(agent.ask(f"question {n}", "s-1") for n in range(3)))

    assert sorted(r.text for r in replies) == [f"answer to question {n}" for n in range(3)]
    history = await Conversation(graph, subagent_thread("argocd", "s-1")).history()
    pairs = list(zip(history[::2], history[1::2], strict=True))
    assert len(pairs) == 3
    for question, answer in pairs:  # each answer right after its own question
        assert isinstance(question, HumanMessage) and isinstance(answer, AIMessage)
        assert answer.content == f"answer to {question.content}"
