"""The evaluation's model recorder: one handler, each run's usage its own."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.config import Settings
from pilothouse.evals.recorder import ModelRecorder, Usage
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.events import Answer
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import tool_call

RUNS = 6


def status_tool(first_calls: asyncio.Barrier) -> BaseTool:
    @tool
    async def get_application(name: str) -> str:
        """One application's status."""
        if name.endswith("-0"):  # every run's first call waits for the others: they overlap
            await first_calls.wait()
        return json.dumps({"name": name, "health": "Healthy"})

    return get_application


def step(messages: list[BaseMessage]) -> AIMessage | str:
    """Run n asks for n applications, one call at a time, then answers."""
    start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    found = re.search(r"run (\d+)", str(messages[start].content))
    assert found is not None
    number = int(found.group(1))
    done = sum(isinstance(m, ToolMessage) for m in messages[start:])
    if done < number:
        return tool_call("get_application", name=f"app-{number}-{done}")
    return f"run {number}: {done} applications checked"


async def test_concurrent_runs_each_record_only_their_own_model_calls(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    setup = scripted_setup([], default=step)
    graph = build_agent(make_settings(), setup, tools=[status_tool(asyncio.Barrier(RUNS))],
                        system_prompt="Check applications.", checkpointer=InMemorySaver())
    recorder = ModelRecorder(setup.counter)
    recorder.attach(setup.chat_model)

    async def run(number: int) -> Usage:
        conversation = Conversation(graph, f"recorded-{number}")
        with recorder.recording() as usage:
            answers = [e.text async for e in conversation.ask(f"run {number}: check them")
                       if isinstance(e, Answer)]
        # The lead is the run's own (the tools' views follow it: runtime.answer_views).
        assert [a.split("\n\n", 1)[0] for a in answers] == [
            f"run {number}: {number} applications checked"]
        return usage

    try:
        async with asyncio.timeout(60):  # a guard against a hang, not a timing check
            # Run n makes n tool calls, so each run's figures differ from every other's.
            usages = await asyncio.gather(*(run(n) for n in range(1, RUNS + 1)))
        outside = [e async for e in Conversation(graph, "unrecorded").ask("run 0: nothing")]
    finally:
        recorder.detach(setup.chat_model)

    assert outside[-1].text == "run 0: 0 applications checked"
    for number, usage in enumerate(usages, start=1):
        assert usage.model_calls == number + 1
        assert [step.tools for step in usage.steps] == [("get_application",)] * number + [()]
        assert usage.prompt_tokens > 0 and usage.peak_prompt_tokens <= usage.prompt_tokens
        assert usage.completion_tokens == 10 * (number + 1)
