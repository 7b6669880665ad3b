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
from typing import TypeVar

import anyio

T = TypeVar("T")


@asynccontextmanager
async def entered_together(
    openers: Mapping[str, Callable[[], AbstractAsyncContextManager[T]]],
) -> AsyncIterator[dict[str, T | Exception]]:
    """Each opener's context entered concurrently: name -> its value, or the exception that
    kept it from opening (the others open regardless). All are left when this context ends.
    """
    results: dict[str, T | Exception] = {}
    done = anyio.Event()

    async def hold(name: str, opener: Callable[[], AbstractAsyncContextManager[T]],
                   ready: anyio.Event) -> None:
        try:
            context = opener()
            value = await context.__aenter__()
        except Exception as error:  # reported to the caller, who decides what it means
            results[name] = error
            ready.set()
            return
        results[name] = value
        ready.set()
        try:
            await done.wait()
        except BaseException as error:
            if not await context.__aexit__(type(error), error, error.__traceback__):
                raise
            return
        await context.__aexit__(None, None, None)

    failed: Exception | None = None
    async with anyio.create_task_group() as group:
        ready = {name: anyio.Event() for name in openers}
        for name, opener in openers.items():
            group.start_soon(hold, name, opener, ready[name])
        for event in ready.values():
            await event.wait()
        try:
            yield {name: results[name] for name in openers}
        except Exception as error:  # raised again below as itself, not in an ExceptionGroup
            failed = error
        finally:
            done.set()
    if failed is not None:
        raise failed
