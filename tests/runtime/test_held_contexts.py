"""Contexts entered together: side by side, each left in the task that entered it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from pilothouse.runtime.held_contexts import entered_together, held_open


async def test_contexts_start_side_by_side_and_one_failure_leaves_the_others() -> None:
    a_started, b_started = anyio.Event(), anyio.Event()
    log: list[str] = []

    @asynccontextmanager
    async def opening(name: str, mine: anyio.Event, other: anyio.Event) -> AsyncIterator[str]:
        mine.set()
        with anyio.fail_after(5):  # one after the other, this would wait forever
            await other.wait()
        # An anyio task group entered here must be left in this same task.
        async with anyio.create_task_group():
            log.append(f"open {name}")
            yield name.upper()
            log.append(f"close {name}")

    @asynccontextmanager
    async def broken() -> AsyncIterator[str]:
        raise RuntimeError("no such server")
        yield "never"  # pragma: no cover

    async with entered_together({"a": lambda: opening("a", a_started, b_started),
                                 "b": lambda: opening("b", b_started, a_started),
                                 "c": broken}) as opened:
        assert opened["a"] == "A" and opened["b"] == "B"
        assert isinstance(opened["c"], RuntimeError)
        assert sorted(log) == ["open a", "open b"]
    assert sorted(log) == ["close a", "close b", "open a", "open b"]


async def test_an_error_in_the_body_still_closes_every_context() -> None:
    closed: list[str] = []

    @asynccontextmanager
    async def opening(name: str) -> AsyncIterator[str]:
        try:
            yield name
        finally:
            closed.append(name)

    with pytest.raises(ValueError, match="body failed"):
        async with entered_together({"x": lambda: opening("x"), "y": lambda: opening("y")}):
            raise ValueError("body failed")
    assert sorted(closed) == ["x", "y"]


async def test_on_demand_a_context_opens_when_first_needed_and_never_if_not() -> None:
    entered: list[str] = []

    @asynccontextmanager
    async def opening(name: str) -> AsyncIterator[str]:
        entered.append(name)
        yield name.upper()

    async with held_open({"asked": lambda: opening("asked"),
                          "never": lambda: opening("never")}, on_demand=True) as openings:
        await anyio.sleep(0.05)
        assert entered == []  # nothing starts before it is needed
        assert await openings["asked"].outcome() == "ASKED"
        assert entered == ["asked"]
    assert entered == ["asked"]
