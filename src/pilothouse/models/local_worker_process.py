"""The model worker's side of the pipe: a loop that runs `LocalEngine` requests one at a time.

Messages are tuples, sent with `multiprocessing.connection.Connection` (length-prefixed
pickles). The parent sends `("generate", GenerateRequest)` and then, for every token, answers
the worker's `("ask", None)` with True (stop now) or False. The worker reads that answer only
when the next token is ready (`LocalEngine`'s `deferred_stop`), so decoding never waits on the
parent, yet the parent's `should_stop` keeps its in-process meaning: evaluated after every
token, with the text so far already seen, and no token after a "stop" is used. The worker
sends `("piece", text)`, `("ask", None)`, and finally `("done", (prompt_tokens,
completion_tokens, finish_reason))` or `("error", ErrorPayload)`. `None` from the parent, or
the parent's end closing, ends the loop.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pilothouse.errors import ConfigurationError, PilothouseError
from pilothouse.models.local_engine import ContextOverflowError, GenerationStats, open_engine


@dataclass(frozen=True)
class GenerateRequest:
    """The arguments of one `LocalEngine.generate` call."""

    prompt: str
    max_tokens: int
    temperature: float
    grammar: str | None
    stop: tuple[str, ...]


@dataclass(frozen=True)
class ErrorPayload:
    """An exception raised in the worker, in a form that pickles whatever its class.

    Pilothouse errors have keyword-only hints and extra fields, which `pickle` cannot rebuild
    from `args`, so the parent rebuilds them from this.
    """

    kind: str  # overflow | configuration | value | model | crashed (the service's worker)
    message: str
    hint: str | None = None
    numbers: tuple[int, ...] = ()


def error_payload(error: Exception) -> ErrorPayload:
    """`error` as a payload the other side of a pipe or socket rebuilds (`local_worker`)."""
    if isinstance(error, ContextOverflowError):
        numbers = (error.prompt_tokens, error.context_tokens, error.reserved)
        return ErrorPayload("overflow", error.message, error.hint, numbers)
    if isinstance(error, ConfigurationError):
        return ErrorPayload("configuration", error.message, error.hint)
    if isinstance(error, PilothouseError):
        return ErrorPayload("model", error.message, error.hint)
    if isinstance(error, ValueError):
        return ErrorPayload("value", str(error))
    return ErrorPayload("model", f"{type(error).__name__}: {error}"[:400])


class ParentStop:
    """The parent's `should_stop`, asked after each token and read before the next is used."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def ask(self) -> None:
        self.conn.send(("ask", None))

    def answer(self) -> bool:
        return bool(self.conn.recv())


def serve(conn: Connection, model_path: str, n_ctx: int, n_threads: int | None,
          prefix_store: str | None = None) -> None:
    """The worker's main loop (the target of the spawned process)."""
    # Ctrl-C reaches the whole terminal process group; the parent decides what it stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    engine = open_engine(model_path, n_ctx, n_threads,
                         Path(prefix_store) if prefix_store else None)
    parent = ParentStop(conn)

    while True:
        try:
            message: Any = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if message is None:
            return
        kind, request = message
        if kind != "generate":
            conn.send(("error", ErrorPayload("model", f"unknown request {kind!r}")))
            continue
        stats = GenerationStats()
        try:
            for piece in engine.generate(
                request.prompt,
                stats=stats,
                max_tokens=request.max_tokens,
                temperature=request.temperature,
                grammar=request.grammar,
                stop=request.stop,
                deferred_stop=parent,
            ):
                conn.send(("piece", piece))
        except (EOFError, OSError):
            return
        except Exception as error:  # reported to the parent, which raises it for the turn
            conn.send(("error", error_payload(error)))
            continue
        conn.send(("done", (stats.prompt_tokens, stats.completion_tokens, stats.finish_reason,
                            stats.read_tokens)))
