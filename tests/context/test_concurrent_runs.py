"""Twenty conversations at once through one graph: each run's counts and budgets are its own.

One compiled graph (one set of middleware instances) serves every conversation, as under
`pilothouse serve`. The conversations differ in history (some long enough to be summarized
before their first model call, most short) and in the tool they call (one returns an output
the guard must cut). Every tool waits until all twenty runs have reached it, so the runs are
truly interleaved while they report their context actions.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.config import Settings
from pilothouse.context.events import ActionCounts, counting_actions
from pilothouse.context.summarizer import Summarizer
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.events import Answer, ContextNote, Event, TurnFailed
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import ScriptedChatModel, tool_call

RUNS = 20
WINDOW = 8192
PROMPT = "You answer questions about applications, pipelines and files."
SUMMARY = "Earlier: the user asked about several services."
MARKER = re.compile(r"conv-\d\d")


def marker(number: int) -> str:
    return f"conv-{number:02d}"


def is_long(number: int) -> bool:
    """Every third conversation has a history over the pre-flight trigger."""
    return number % 3 == 0


def seeded_history(number: int) -> list[BaseMessage]:
    exchanges = 40 if is_long(number) else 1 + number % 7
    filler = "The payments service was checked and its pods were listed in detail. " * 8
    messages: list[BaseMessage] = []
    for turn in range(exchanges):
        messages += [HumanMessage(content=f"{marker(number)} earlier question {turn}: {filler}"),
                     AIMessage(content=f"{marker(number)} earlier answer {turn}: {filler}")]
    return messages


def rendezvous_tools(barrier: asyncio.Barrier) -> list[BaseTool]:
    """Four tools; each waits for every run to arrive, then answers for its conversation."""

    @tool
    async def application_status(conversation: str) -> str:
        """Health and sync status of the conversation's application."""
        await barrier.wait()
        return json.dumps({"conversation": conversation, "health": "Healthy"})

    @tool
    async def pipeline_runs(conversation: str) -> str:
        """Recent CI runs."""
        await barrier.wait()
        return json.dumps({"conversation": conversation, "runs": ["passed", "failed"]})

    @tool
    async def read_file(conversation: str) -> str:
        """A file of the workspace."""
        await barrier.wait()
        return json.dumps({"conversation": conversation, "text": "replicas: 3"})

    @tool
    async def dump_inventory(conversation: str) -> str:
        """Every resource at once (far more than the output guard lets through)."""
        await barrier.wait()
        return json.dumps({"conversation": conversation,
                           "items": [{"name": f"app-{i}", "project": "payments" * 4}
                                     for i in range(200)]})

    return [application_status, pipeline_runs, read_file, dump_inventory]


def tool_of(number: int, tools: list[BaseTool]) -> str:
    return tools[number % len(tools)].name


def agent_step(tools: list[BaseTool]) -> Callable[[list[BaseMessage]], AIMessage | str]:
    """Call the conversation's own tool for its question, then answer from the result."""

    def step(messages: list[BaseMessage]) -> AIMessage | str:
        start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        found = MARKER.search(str(messages[start].content))
        assert found is not None, "every question names its conversation"
        number = int(found.group()[5:])
        results = [m for m in messages[start:] if isinstance(m, ToolMessage)]
        if not results:
            return tool_call(tool_of(number, tools), conversation=marker(number))
        return f"{marker(number)} answered from {results[-1].name}"

    return step


def expected_counts(number: int, tools: list[BaseTool]) -> dict[str, int]:
    counts = {"summarized": 1} if is_long(number) else {}
    if tool_of(number, tools) == "dump_inventory":
        counts["truncated"] = 1
    return counts


async def run_one(graph: Any, number: int) -> tuple[list[Event], ActionCounts]:
    conversation = Conversation(graph, f"thread-{number}")
    await graph.aupdate_state(conversation.config, {"messages": seeded_history(number)},
                              as_node="model")
    with counting_actions() as counts:
        events = [e async for e in conversation.ask(f"{marker(number)}: how is it going?")]
    return events, counts


async def test_twenty_concurrent_conversations_keep_their_own_counts_and_budgets(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    tools = rendezvous_tools(asyncio.Barrier(RUNS))
    settings = make_settings(MAX_CONTEXT_TOKENS=str(WINDOW))
    setup = scripted_setup([], window=WINDOW, default=agent_step(tools), settings=settings)
    summarizer = Summarizer(ScriptedChatModel.from_steps([], default=SUMMARY),
                            timeout=30, max_input_chars=20_000)
    graph = build_agent(settings, setup, tools=tools, system_prompt=PROMPT,
                        checkpointer=InMemorySaver(), summarizer=summarizer)

    # A guard against a hang (a run that never reaches the rendezvous), not a timing check.
    async with asyncio.timeout(120):
        with counting_actions() as everything:
            runs = await asyncio.gather(*(run_one(graph, n) for n in range(RUNS)))

    assert sum(is_long(n) for n in range(RUNS)) >= 5
    for number, (events, counts) in enumerate(runs):
        assert [e.message for e in events if isinstance(e, TurnFailed)] == [], marker(number)
        answers = [e.text for e in events if isinstance(e, Answer)]
        # The lead is the conversation's own (its tools' views follow it).
        assert [a.split("\n\n", 1)[0] for a in answers] == [
            f"{marker(number)} answered from {tool_of(number, tools)}"]
        # The run's counts are exactly its own actions, and match what its stream showed.
        assert counts.snapshot() == expected_counts(number, tools), marker(number)
        streamed = [e.action.action for e in events if isinstance(e, ContextNote)]
        assert sorted(streamed) == sorted(a for a, n in counts.snapshot().items()
                                          for _ in range(n))
    # The enclosing count saw every run's actions once.
    total: dict[str, int] = {}
    for _, counts in runs:
        for action, n in counts.snapshot().items():
            total[action] = total.get(action, 0) + n
    assert everything.snapshot() == total

    # Each request was sized on its own conversation: no other conversation's messages in it,
    # within the window's hard limit, and compressed exactly when its own history required.
    hard_limit = WINDOW - min(settings.max_output_tokens, WINDOW // 4)
    model = setup.chat_model
    assert isinstance(model, ScriptedChatModel)
    by_run: dict[str, list[Any]] = {}
    for request in model.requests:
        names = {name for m in request.messages for name in MARKER.findall(str(m.content))}
        assert len(names) == 1, names
        by_run.setdefault(names.pop(), []).append(request)
    assert sorted(by_run) == [marker(n) for n in range(RUNS)]
    for number in range(RUNS):
        requests = by_run[marker(number)]
        assert len(requests) == 2
        assert all(r.tokens <= hard_limit for r in requests)
        first = "\n".join(str(m.content) for m in requests[0].messages)
        history = seeded_history(number)
        if is_long(number):
            assert SUMMARY in first and str(history[0].content) not in first
        else:
            assert SUMMARY not in first
            assert all(str(m.content) in first for m in history)


def test_sync_runs_in_threads_count_their_actions_through_the_executor_threads(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    @tool
    def list_everything(conversation: str) -> str:
        """Every resource at once."""
        return json.dumps({"conversation": conversation, "items": [
            {"name": f"app-{i}", "project": "payments" * 4} for i in range(200)]})

    @tool
    def ping(conversation: str) -> str:
        """A small answer."""
        return json.dumps({"conversation": conversation, "ok": True})

    tools: list[BaseTool] = [list_everything, ping]
    setup = scripted_setup([], window=WINDOW, default=agent_step(tools))
    graph = build_agent(make_settings(MAX_CONTEXT_TOKENS=str(WINDOW)), setup, tools=tools,
                        system_prompt=PROMPT, checkpointer=InMemorySaver())

    def run(number: int) -> dict[str, int]:
        # A thread starts with an empty context: it binds its own counts.
        with counting_actions() as counts:
            graph.invoke({"messages": [HumanMessage(content=f"{marker(number)}: all?")]},
                         {"configurable": {"thread_id": f"sync-{number}"}})
        return counts.snapshot()

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, range(8)))
    assert results == [{"truncated": 1} if n % 2 == 0 else {} for n in range(8)]
