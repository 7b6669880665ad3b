"""PILOTHOUSE_MODEL_TIMEOUT: a stalled model call ends the turn with a clear error, nothing lost.

The model is the scripted OpenAI-compatible server, reached by the real ChatOpenAI client over
HTTP; its first answer stalls far past the limit, the next one answers at once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.config import HOSTED_MODEL_TIMEOUT, LOCAL_MODEL_TIMEOUT, Settings
from pilothouse.models.registry import setup_model
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.events import Answer, TurnFailed
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_server import running_scripted_server

SCRIPT = {
    "rules": [
        # Stalls ten times the limit; short enough that the server's thread stops promptly.
        {"name": "stall", "when": {"last_contains": "stall"}, "reply": {"content": "late",
                                                                        "delay": 3}},
        {"name": "answer", "when": {"last_role": "user"}, "reply": {"content": "Here now."}},
    ],
    "default": {"content": "Here now."},
}


def test_defaults_are_longer_for_the_local_model(make_settings: Callable[..., Settings]) -> None:
    assert make_settings().model_timeout_seconds == HOSTED_MODEL_TIMEOUT
    assert make_settings(PILOTHOUSE_MODEL="local:qwen2.5-coder-1.5b-instruct") \
        .model_timeout_seconds == LOCAL_MODEL_TIMEOUT
    assert make_settings().with_model("local:x").model_timeout_seconds == LOCAL_MODEL_TIMEOUT
    assert make_settings(PILOTHOUSE_MODEL_TIMEOUT="7").with_model("local:x") \
        .model_timeout_seconds == 7


async def test_a_stalled_call_ends_with_a_clear_error_and_the_next_turn_works(
    home: Path,
) -> None:
    with running_scripted_server(SCRIPT) as (url, state):
        settings = Settings.from_env({
            "PILOTHOUSE_HOME": str(home), "PILOTHOUSE_MODEL": "openai-compatible:scripted",
            "OPENAI_BASE_URL": url, "PILOTHOUSE_MODEL_TIMEOUT": "0.3",
            "MAX_CONTEXT_TOKENS": "32000",
        })
        setup = setup_model(settings)
        graph = build_agent(settings, setup, checkpointer=InMemorySaver())
        conversation = Conversation(graph, "stalled")

        stalled = [e async for e in conversation.ask("please stall")]
        after = [e async for e in conversation.ask("and now?")]
        history = await conversation.history()
        # The client's pooled keep-alive connection, closed here rather than by the GC.
        await setup.chat_model.root_async_client.close()  # type: ignore[attr-defined]

    errors = [e for e in stalled if isinstance(e, TurnFailed)]
    assert len(errors) == 1 and not any(isinstance(e, Answer) for e in stalled)
    assert "did not answer within 0.3 s" in errors[0].message
    assert "PILOTHOUSE_MODEL_TIMEOUT" in (errors[0].suggestion or "")
    assert [e.text for e in after if isinstance(e, Answer)] == ["Here now."]
    contents = [str(m.content) for m in history]
    assert contents[0] == "please stall" and contents[-2:] == ["and now?", "Here now."]
    # Each stalled attempt gave up: one request plus at most the one retry the client allows.
    assert [r.rule for r in state.requests].count("stall") in (1, 2)
