"""New A2A conversations count against the caller's quota, the one `POST /conversations` uses.

An agent served as `pilothouse serve` serves it (the SDK's routes behind the authentication
middleware) on 127.0.0.1, driven by the a2a-sdk client; only the model is scripted.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from a2a.types.a2a_pb2 import TaskState
from a2a.utils.errors import A2AError
from a2a_harness import a2a_client, final_state, serving, stream
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.a2a.server import a2a_app, agent_endpoint
from pilothouse.a2a.store import open_task_engine
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.interfaces.api.identity import KeyRing
from pilothouse.interfaces.api.security import AuthMiddleware
from pilothouse.models.registry import ModelSetup
from pilothouse.rate_limit import RateLimiter

ALICE = "alice-quota-key-8c2e6a0f4b9d3e7a1c5f"
BOB = "bob-quota-key-3f7b1d5a9e2c6f0a4d8b1e"


@tool
def list_apps() -> str:
    """List applications."""
    return "payments-api"


async def test_each_new_context_counts_and_continuing_one_does_not(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = make_settings()
    agent = AgentFactory(settings, scripted_setup([], default="Answered."), InMemorySaver()
                         ).build(Toolkit(name="argocd", prompt="", tools=[list_apps]),
                                 "Argo CD agent for tests.")
    limiter = RateLimiter(2, 60.0)
    async with open_task_engine(settings) as engine:

        async def build(url: str) -> object:
            endpoint = await agent_endpoint(agent, engine, url, requires_key=True,
                                            new_conversations=limiter)
            keys = KeyRing.parse([f"alice={ALICE}", f"bob={BOB}"])
            return AuthMiddleware(a2a_app([endpoint], entry="argocd"), keys)

        async with serving(build) as url:
            base = f"{url}/a2a/argocd"
            async with a2a_client(base, ALICE) as alice, a2a_client(base, BOB) as bob:
                for context in ("first", "first", "second"):  # two new, one continued
                    assert final_state(await stream(alice, "hi", context_id=context)) == \
                        TaskState.TASK_STATE_COMPLETED
                for context in ("third", None):  # any new one: named, or random (None)
                    with pytest.raises(A2AError, match="Too many new conversations: at most "
                                                       "2 a minute per caller") as refused:
                        await stream(alice, "hi", context_id=context)
                    assert "PILOTHOUSE_NEW_CONVERSATIONS_PER_MINUTE" in str(refused.value)
                # Her existing conversations go on; bob's quota is his own, and her context
                # id is a new conversation of his.
                assert final_state(await stream(alice, "again", context_id="second")) == \
                    TaskState.TASK_STATE_COMPLETED
                assert final_state(await stream(bob, "hi", context_id="first")) == \
                    TaskState.TASK_STATE_COMPLETED
    assert limiter.blocked("alice") is not None and limiter.blocked("bob") is None
