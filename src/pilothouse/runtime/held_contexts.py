"""Enter several async context managers at once, each held open by a task of its own.

The supervisor opens one context per specialist, and each starts tool servers: new processes
that take most of a second to import and answer `initialize`. Entered one after another, a
command waited for each in turn (measured: the supervisor's first model call 2.8 s after the
first tool server was ready, with two more to start). They cannot simply be entered from
several tasks and left from one: an MCP session holds an anyio task group, which must be left
in the task that entered it. So each context gets a task that enters it, hands its value over,
waits until the caller is done, and leaves it, in that same task.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Generic, TypeVar

import anyio

T = TypeVar("T")


class Opening(Generic[T]):
    """A context being entered by a task of its own: its value once entered, or the exception
    that kept it from opening."""

    def __init__(self, *, on_demand: bool = False) -> None:
        self._ready = anyio.Event()
        self._outcome: T | Exception | None = None
        #: Set when someone awaits the outcome; an on-demand context is entered only then.
        self.wanted = anyio.Event()
        if not on_demand:
            self.wanted.set()

    def settle(self, outcome: T | Exception) -> None:
        self._outcome = outcome
        self._ready.set()

    async def outcome(self) -> T | Exception:
        """Its value, or why it did not open; waits until it has opened or failed."""
        self.wanted.set()
        await self._ready.wait()
        assert self._outcome is not None
        return self._outcome


@asynccontextmanager
async def held_open(
    openers: Mapping[str, Callable[[], AbstractAsyncContextManager[T]]], *,
    on_demand: bool = False,
) -> AsyncIterator[dict[str, Opening[T]]]:
    """Enter each opener's context in a task of its own: at once, or (`on_demand`) when its
    outcome is first awaited. Yields at once, before any has opened; all are left when this
    context ends."""
    openings: dict[str, Opening[T]] = {name: Opening(on_demand=on_demand) for name in openers}
    done = anyio.Event()

    async def hold(opener: Callable[[], AbstractAsyncContextManager[T]],
                   opening: Opening[T]) -> None:
        async with anyio.create_task_group() as waiting:  # wanted, or no longer needed
            async def stop_when_done() -> None:
                await done.wait()
                waiting.cancel_scope.cancel()

            waiting.start_soon(stop_when_done)
            await opening.wanted.wait()
            waiting.cancel_scope.cancel()
        if done.is_set():  # closed before anyone needed it
            opening.settle(RuntimeError("closed before it was needed"))
            return
        try:
            context = opener()
            value = await context.__aenter__()
        except Exception as error:  # reported to whoever awaits it, who decides what it means
            opening.settle(error)
            return
        opening.settle(value)
        try:
            await done.wait()
        except BaseException as error:
            if not await context.__aexit__(type(error), error, error.__traceback__):
                raise
            return
        await context.__aexit__(None, None, None)

    failed: Exception | None = None
    async with anyio.create_task_group() as group:
        for name, opener in openers.items():
            group.start_soon(hold, opener, openings[name])
        try:
            yield openings
        except Exception as error:  # raised again below as itself, not in an ExceptionGroup
            failed = error
        finally:
            done.set()
    if failed is not None:
        raise failed


@asynccontextmanager
async def entered_together(
    openers: Mapping[str, Callable[[], AbstractAsyncContextManager[T]]],
) -> AsyncIterator[dict[str, T | Exception]]:
    """Each opener's context entered concurrently: name -> its value, or the exception that
    kept it from opening (the others open regardless). All are left when this context ends.
    """
    async with held_open(openers) as openings:
        yield {name: await opening.outcome() for name, opening in openings.items()}
