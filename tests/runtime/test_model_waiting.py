"""A turn waiting for the local model is a typed event, from the model's queue to the screen.

The model's turn lock (`TurnLock`, the engine's) reports its place in line to the run's custom
stream; the conversation turns that into `ModelWaiting`, which the CLI shows as "waiting for
the model (1 ahead)". A real LangGraph run: its model node takes the lock the test holds.
"""

from __future__ import annotations

import io
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from rich.console import Console

from pilothouse.interfaces.cli_activity import WorkingIndicator
from pilothouse.interfaces.render import EventPrinter
from pilothouse.models.local_turn_queue import TurnLock
from pilothouse.runtime.events import Answer, Event, ModelWaiting, to_wire
from pilothouse.runtime.session import Conversation


def graph_on(lock: TurnLock) -> Any:
    def model(state: MessagesState) -> dict[str, Any]:
        with lock:  # as `local_turn.run_turn` holds the engine's lock
            lock.reporter.done()  # as the engine does once the model is its
            return {"messages": [AIMessage("answered")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    return builder.compile(checkpointer=InMemorySaver())


async def test_a_turn_behind_another_is_told_its_place_and_when_it_has_the_model() -> None:
    lock = TurnLock()
    assert lock.acquire()  # another turn has the model
    events: list[Event] = []
    async for event in Conversation(graph_on(lock), "queued").ask("hi"):
        events.append(event)
        if event == ModelWaiting(1):
            lock.release()  # the other turn ends: this one goes next
    assert [e for e in events if isinstance(e, ModelWaiting)] == [ModelWaiting(1),
                                                                  ModelWaiting(0)]
    assert isinstance(events[-1], Answer) and events[-1].text == "answered"


async def test_a_turn_with_the_model_free_reports_nothing() -> None:
    events = [e async for e in Conversation(graph_on(TurnLock()), "free").ask("hi")]
    assert not [e for e in events if isinstance(e, ModelWaiting)]


def test_the_cli_says_how_many_turns_are_ahead() -> None:
    out, err = io.StringIO(), io.StringIO()
    printer = EventPrinter(Console(file=out), Console(file=err),
                           indicator=WorkingIndicator(Console(file=err), enabled=False))
    printer.show(ModelWaiting(2))
    printer.show(ModelWaiting(1))
    printer.show(ModelWaiting(0))
    assert err.getvalue().splitlines() == ["waiting for the model (2 ahead)",
                                           "waiting for the model (1 ahead)"]
    assert out.getvalue() == ""  # stdout holds the answer alone
    assert to_wire(ModelWaiting(1))["data"] == {"ahead": 1}
