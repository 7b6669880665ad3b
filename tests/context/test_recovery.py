"""Recovery paths through a real agent graph: orphans, provider overflow errors, failing
summarizers, hanging and failing tools, model errors, and a restart on real SQLite."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, TypeVar

import anthropic
import httpx
import openai
import pytest
from botocore.exceptions import ClientError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.config import Settings
from pilothouse.context.orphans import SYNTHETIC_TAG
from pilothouse.context.summarizer import SUMMARY_REQUEST, Summarizer
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.checkpoint import open_checkpointer
from pilothouse.runtime.events import Answer, ContextNote, Event, ToolResult, TurnFailed
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import ScriptedChatModel, tool_call


@tool
def get_status(name: str) -> str:
    """Health of one application."""
    return json.dumps({"name": name, "health": "Degraded", "detail": "x" * 3000})


@tool
async def slow_tool(name: str) -> str:
    """A tool that hangs."""
    await asyncio.sleep(30)
    return "never"


@tool
def broken_tool(name: str) -> str:
    """A tool that fails."""
    raise ConnectionError("argocd.example.com:443 connection refused")


def build(settings: Settings, setup: ModelSetup, *, summarizer_model: BaseChatModel | None = None,
          **kwargs: Any) -> Any:
    summarizer = Summarizer(
        summarizer_model or ScriptedChatModel.from_steps([], default="Earlier: apps listed."),
        timeout=settings.summary_timeout_seconds, max_input_chars=10_000,
    )
    return build_agent(settings, setup, tools=[get_status, slow_tool, broken_tool],
                       system_prompt="Answer about apps.", summarizer=summarizer, **kwargs)


async def collect(stream: Any) -> list[Event]:
    return [event async for event in stream]


E = TypeVar("E", bound=Event)


def kinds(events: list[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def _openai_overflow() -> Exception:
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    body = {"error": {"message": "This model's maximum context length is 8192 tokens.",
                      "code": "context_length_exceeded", "type": "invalid_request_error"}}
    return openai.BadRequestError(
        "Error code: 400 - " + json.dumps(body),
        response=httpx.Response(400, request=request, json=body), body=body,
    )


def _anthropic_overflow() -> Exception:
    request = httpx.Request("POST", "https://api.anthropic.com/v1/messages")
    body = {"type": "error", "error": {"type": "invalid_request_error",
                                       "message": "prompt is too long: 210000 tokens > 200000"}}
    return anthropic.BadRequestError(
        "prompt is too long: 210000 tokens > 200000 maximum",
        response=httpx.Response(400, request=request, json=body), body=body,
    )


def _bedrock_overflow() -> Exception:
    return ClientError(
        {"Error": {"Code": "ValidationException",
                   "Message": "Input is too long for requested model."}},
        "Converse",
    )


PROVIDER_OVERFLOWS: dict[str, Callable[[], Exception]] = {
    "openai": _openai_overflow,
    "anthropic": _anthropic_overflow,
    "aws-bedrock": _bedrock_overflow,
    # google-genai and llama.cpp raise plain errors with these messages:
    "google-gemini": lambda: ValueError(
        "400 The input token count (1048577) exceeds the maximum number of tokens allowed "
        "(1048576)."),
    "llama.cpp-server": lambda: RuntimeError(
        "Error code: 400 - {'error': {'message': 'the request exceeds the available context "
        "size, try increasing it'}}"),
    "local": lambda: ValueError(
        "Requested tokens (9000) exceeds the context window of 8192 tokens"),
}


def history_with_turns(count: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for i in range(count):
        messages.append(HumanMessage(content=f"question {i} " + "detail " * 200, id=f"h{i}"))
        messages.append(AIMessage(content=f"answer {i} " + "words " * 200, id=f"a{i}"))
    return messages


@pytest.mark.parametrize("provider", sorted(PROVIDER_OVERFLOWS))
async def test_provider_overflow_is_recovered(
    provider: str, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(MAX_CONTEXT_TOKENS="100000")
    setup = scripted_setup([PROVIDER_OVERFLOWS[provider](), "Recovered answer."], window=100_000,
                           settings=settings)
    graph = build(settings, setup, checkpointer=InMemorySaver())
    conversation = Conversation(graph, f"overflow-{provider}")
    await graph.aupdate_state(conversation.config, {"messages": history_with_turns(20)})

    events = await collect(conversation.ask("and now?"))

    assert [e.text for e in kinds(events, Answer)] == ["Recovered answer."]
    actions = [e.action.action for e in kinds(events, ContextNote)]
    assert "overflow_recovered" in actions and "summarized" in actions
    history = await conversation.history()
    assert len(history) < 30, "the compressed history (from 42 messages) was written back"
    assert "[Summary of the" in str(history[0].content)
    assert history[-1].content == "Recovered answer."
    # The conversation stays usable: the next question goes through.
    setup.chat_model.script.steps.append("Still here.")  # type: ignore[attr-defined]
    assert [e.text for e in kinds(await collect(conversation.ask("ok?")), Answer)] == [
        "Still here."]


async def test_overflow_twice_gives_a_clear_answer(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(MAX_CONTEXT_TOKENS="100000")
    setup = scripted_setup([_openai_overflow(), _openai_overflow(), "Fine now."],
                           window=100_000, settings=settings)
    graph = build(settings, setup, checkpointer=InMemorySaver())
    conversation = Conversation(graph, "overflow-twice")
    await graph.aupdate_state(conversation.config, {"messages": history_with_turns(10)})

    answers = kinds(await collect(conversation.ask("and now?")), Answer)
    assert "too large for the model" in answers[0].text
    assert [e.text for e in kinds(await collect(conversation.ask("again")), Answer)] == [
        "Fine now."]


async def test_interrupted_tool_call_is_repaired_before_the_next_model_call(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings()
    setup = scripted_setup([tool_call("slow_tool", name="a"), "Answer after repair."])
    graph = build(settings, setup, checkpointer=InMemorySaver())
    conversation = Conversation(graph, "orphan")

    async def first_turn() -> None:
        async for _ in conversation.ask("check a"):
            pass

    task = asyncio.create_task(first_turn())
    await asyncio.sleep(0.5)  # the model has called slow_tool, which hangs
    task.cancel()  # the client goes away mid-tool
    with pytest.raises(asyncio.CancelledError):
        await task
    stored = await conversation.history()
    assert isinstance(stored[-1], AIMessage) and stored[-1].tool_calls, "an orphan is stored"

    events = await collect(conversation.ask("what happened?"))

    assert [e.text for e in kinds(events, Answer)] == ["Answer after repair."]
    assert any(e.action.action == "repaired" for e in kinds(events, ContextNote))
    sent = setup.chat_model.requests[-1].messages  # type: ignore[attr-defined]
    orphan_index = next(i for i, m in enumerate(sent) if isinstance(m, AIMessage) and m.tool_calls)
    result = sent[orphan_index + 1]
    assert isinstance(result, ToolMessage)
    assert result.additional_kwargs["pilothouse"] == SYNTHETIC_TAG
    assert result.status == "error"


async def test_hanging_tool_times_out_and_the_run_goes_on(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(PILOTHOUSE_TOOL_TIMEOUT="0.3")
    setup = scripted_setup([tool_call("slow_tool", name="a"), "The tool was too slow."])
    graph = build(settings, setup, checkpointer=InMemorySaver())

    events = await collect(Conversation(graph, "timeout").ask("check a"))

    result = kinds(events, ToolResult)[0]
    assert result.status == "error" and "did not answer within 0.3 s" in result.preview
    assert [e.text for e in kinds(events, Answer)] == ["The tool was too slow."]


async def test_failing_tool_becomes_an_error_result(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    setup = scripted_setup([tool_call("broken_tool", name="a"), "Argo CD is unreachable."])
    graph = build(make_settings(), setup, checkpointer=InMemorySaver())

    events = await collect(Conversation(graph, "broken").ask("check a"))

    assert "connection refused" in kinds(events, ToolResult)[0].preview
    assert kinds(events, Answer)[0].text == "Argo CD is unreachable."


async def test_repeated_identical_calls_are_blocked(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(PILOTHOUSE_REPEATED_CALL_LIMIT="2")
    steps: list[Any] = [tool_call("get_status", name="a") for _ in range(3)] + ["Done."]
    setup = scripted_setup(steps)
    graph = build(settings, setup, checkpointer=InMemorySaver())

    events = await collect(Conversation(graph, "repeat").ask("check a"))

    results = kinds(events, ToolResult)
    assert [r.status for r in results] == ["success", "success", "error"]
    assert "already called 2 times" in results[-1].preview


@pytest.mark.parametrize("failure", ["error", "timeout"])
async def test_summarizer_failure_falls_back_to_deletion(
    failure: str, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(MAX_CONTEXT_TOKENS="4000", PILOTHOUSE_SUMMARY_TIMEOUT="0.2")

    def hang(_: list[BaseMessage]) -> str:
        import time

        time.sleep(2)
        return "late"

    summarizer_model = ScriptedChatModel.from_steps(
        [RuntimeError("summarizer provider is down") if failure == "error" else hang])
    setup = scripted_setup(["Short answer."], window=4000, settings=settings)
    graph = build(settings, setup, summarizer_model=summarizer_model,
                  checkpointer=InMemorySaver())
    conversation = Conversation(graph, f"summary-{failure}")
    await graph.aupdate_state(conversation.config, {"messages": history_with_turns(8)})

    events = await collect(conversation.ask("latest?"))

    assert [e.text for e in kinds(events, Answer)] == ["Short answer."]
    deleted = [e for e in kinds(events, ContextNote) if e.action.action == "deleted"]
    assert deleted, "the fallback is announced"
    expected = "summarizer provider is down" if failure == "error" else "timed out"
    assert expected in deleted[0].action.detail
    history = await conversation.history()
    assert "were removed to fit the context window" in str(history[0].content)


async def test_model_error_is_reported_and_conversation_stays_usable(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    auth = openai.AuthenticationError(
        "Error code: 401 - Incorrect API key provided: sk-proj-Xy12Zw34Ab56Cd78Ef90",
        response=httpx.Response(401, request=request), body=None,
    )
    setup = scripted_setup([auth, "Working again."])
    graph = build(make_settings(), setup, checkpointer=InMemorySaver())
    conversation = Conversation(graph, "model-error")

    error = kinds(await collect(conversation.ask("hi")), TurnFailed)[0]
    assert "credentials" in error.message and "sk-proj-Xy12Zw34Ab56Cd78Ef90" not in error.message
    assert error.suggestion
    answers = kinds(await collect(conversation.ask("hi again")), Answer)
    assert [a.text for a in answers] == ["Working again."]


async def test_conversation_continues_after_a_restart(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings()
    async with open_checkpointer(settings) as saver:
        graph = build(settings, scripted_setup(["First answer."]), checkpointer=saver)
        await collect(Conversation(graph, "durable").ask("first question"))

    # A new process: new graph, new connection to the same SQLite file.
    async with open_checkpointer(settings) as saver:
        setup = scripted_setup(["Second answer."])
        graph = build(settings, setup, checkpointer=saver)
        conversation = Conversation(graph, "durable")
        events = await collect(conversation.ask("second question"))
        history = await conversation.history()

    assert [e.text for e in kinds(events, Answer)] == ["Second answer."]
    assert [m.content for m in history] == [
        "first question", "First answer.", "second question", "Second answer."]
    sent = setup.chat_model.requests[0].messages  # type: ignore[attr-defined]
    assert [m.content for m in sent][-3:] == ["first question", "First answer.", "second question"]


def test_the_summary_request_comes_after_the_transcript() -> None:
    """Ending on the assistant's last line, the local model wrote an empty summary."""
    model = ScriptedChatModel.from_steps(["The user asked about INC-48213."])
    summarizer = Summarizer(model, timeout=5, max_input_chars=4000)

    summary = summarizer.summarize([HumanMessage("Ticket INC-48213, payments-api is down."),
                                    AIMessage("Noted, looking at payments-api.")])

    assert summary == "The user asked about INC-48213."
    sent = str(model.requests[0].messages[-1].content)
    assert sent.endswith(SUMMARY_REQUEST)
    assert sent.index("INC-48213") < sent.index(SUMMARY_REQUEST)
