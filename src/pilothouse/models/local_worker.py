"""The local model in its own process: a native fault in llama.cpp ends a turn, not the agent.

`WorkerEngine` has the interface `local_turn` expects of an engine (`lock`, `generate`) and runs
`LocalEngine` in a child process. If the child dies (SIGSEGV from a bad build, SIGKILL from the
out-of-memory killer, anything), the running turn raises `LocalModelCrashedError`, and the next
call starts a fresh worker. Turns queue on `lock` for the one worker, as they did for the one
in-process model. The shared model service (`local_service`) runs its model through a
`WorkerEngine` too, so the isolation holds there; a command reaches it with `ServiceEngine`
(`local_service_client`), which `shared_engine` returns when asked for the service.

Transport: `multiprocessing` with the "spawn" start method and a `Pipe`, both standard library.
Spawn, not fork: the parent runs threads (asyncio, uvicorn, the TUI), and forking a threaded
process can deadlock the child on a lock some other thread held; a spawned child is a fresh
interpreter that shares nothing but the pipe. The pipe's `Connection` already frames messages
(length-prefixed pickles), and the process sentinel tells a dead worker from a slow one. Per
token the worker sends the text and asks whether to stop, reading the answer only once the next
token is computed, so it never waits for this process to be scheduled; `bench/local_worker.py`
measures the cost (tens of microseconds against 30-70 ms per generated token).
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import signal
import threading
from collections.abc import Callable, Generator, Sequence
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pilothouse.errors import ConfigurationError, ModelProviderError
from pilothouse.models.local_engine import ContextOverflowError, GenerationStats
from pilothouse.models.local_worker_process import ErrorPayload, GenerateRequest, serve

if TYPE_CHECKING:
    from pilothouse.models.local_service_client import ServiceEngine, ServiceOptions

# What a fatal signal usually means for the model worker.
SIGNAL_CAUSES = {
    "SIGSEGV": "a crash inside llama.cpp: a memory fault, or a CPU instruction the machine "
    "refuses, such as AMX on a cloud VM",
    "SIGBUS": "a memory fault inside llama.cpp",
    "SIGILL": "the llama.cpp build uses CPU instructions this machine does not allow",
    "SIGABRT": "llama.cpp aborted on an internal error",
    "SIGKILL": "killed from outside, most often by the out-of-memory killer",
    "SIGTERM": "stopped from outside",
}


def signal_name(exitcode: int | None) -> str | None:
    """The name of the signal that ended a process (exit code -N), or None."""
    if exitcode is None or exitcode >= 0:
        return None
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return f"signal {-exitcode}"


def describe_exit(exitcode: int | None) -> str:
    """How a process ended, in words: "was killed by SIGSEGV (a crash inside llama.cpp...)"."""
    name = signal_name(exitcode)
    if name is not None:
        return f"was killed by {name} ({SIGNAL_CAUSES.get(name, 'a fatal signal')})"
    if exitcode is None:
        return "stopped answering"
    return f"exited with code {exitcode}"


class LocalModelCrashedError(ModelProviderError):
    """The local model's worker process (or the model service relaying it) died in a turn."""

    def __init__(self, exitcode: int | None, what: str = "worker process") -> None:
        super().__init__(
            f"The local model stopped: its {what} {describe_exit(exitcode)}. "
            "The conversation is kept; the model restarts on the next question.",
            hint="Ask again. If it happens again, run `pilothouse doctor` to check the local "
            "model build.",
            retryable=True,
        )
        self.exitcode = exitcode


def rebuild_error(payload: ErrorPayload) -> Exception:
    """The exception an `ErrorPayload` from the worker (or the model service) stands for."""
    if payload.kind == "crashed":
        return LocalModelCrashedError(payload.numbers[0] if payload.numbers else None)
    if payload.kind == "overflow":
        return ContextOverflowError(*payload.numbers)
    if payload.kind == "configuration":
        return ConfigurationError(payload.message, hint=payload.hint)
    if payload.kind == "value":
        return ValueError(payload.message)
    return ModelProviderError(
        f"The local model failed: {payload.message}",
        hint=payload.hint or "Ask again; if it repeats, run `pilothouse doctor`.",
    )


class PipeRelay:
    """The generation protocol over a model pipe, shared by the worker and the service client.

    Subclasses own `_conn`, `_send` and `_receive` (each raises `LocalModelCrashedError`, with
    `_conn` set to None, when the other end is gone) and may hear errors in `_on_error`.
    """

    _conn: Connection | None

    def _send(self, message: Any) -> None:
        raise NotImplementedError

    def _receive(self) -> Any:
        raise NotImplementedError

    def _on_error(self, payload: ErrorPayload) -> None:
        """An error the other end reported (its generation is over)."""

    def _relay(self, request: GenerateRequest, stats: GenerationStats,
               should_stop: Callable[[], bool] | None) -> Generator[str, None, None]:
        """Send one generation and yield its pieces; answer its stop questions."""
        self._send(("generate", request))
        finished = False
        try:
            while True:
                kind, value = self._receive()
                if kind == "piece":
                    yield value
                elif kind == "ask":
                    self._send(bool(should_stop is not None and should_stop()))
                elif kind == "done":
                    finished = True
                    (stats.prompt_tokens, stats.completion_tokens, stats.finish_reason,
                     stats.read_tokens) = value
                    return
                else:
                    finished = True
                    self._on_error(value)
                    raise rebuild_error(value)
        finally:
            if not finished:
                self._drain()

    def _drain(self) -> None:
        """Stop a generation the caller abandoned, so the other end is ready for the next."""
        try:
            while self._conn is not None:
                kind, _ = self._receive()
                if kind == "ask":
                    self._send(True)
                elif kind in ("done", "error"):
                    return
        except LocalModelCrashedError:
            return  # already gone; the next call starts over


class WorkerEngine(PipeRelay):
    """A `LocalEngine` in a child process, started on first use and again after a crash."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int | None,
                 prefix_store: str | None = None) -> None:
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.prefix_store = prefix_store
        self.lock = threading.Lock()  # held by a caller for a whole turn
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None

    @property
    def pid(self) -> int | None:
        """The worker's process id while it runs."""
        return self._process.pid if self._process is not None else None

    def start(self) -> int | None:
        """Start the worker now, if it is not running (it loads the model at its first
        generation); its process id."""
        self._start()
        return self.pid

    def kill(self) -> None:
        """Kill the worker at once (its turn, if any, raises `LocalModelCrashedError`)."""
        process = self._process
        if process is not None and process.exitcode is None:
            process.kill()

    def _start(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._conn is not None:
            return self._conn
        self._discard()  # died while idle (e.g. the OOM killer): nobody was waiting on it
        context = multiprocessing.get_context("spawn")
        parent_end, child_end = context.Pipe(duplex=True)
        process = context.Process(
            target=serve,
            args=(child_end, str(self.path), self.n_ctx, self.n_threads, self.prefix_store),
            name="pilothouse-model-worker",
            daemon=True,  # never outlives us, even if the exit handler cannot run
        )
        process.start()
        child_end.close()  # only the child holds it now: its death reads as EOF here
        self._process, self._conn = process, parent_end
        return parent_end

    def _discard(self) -> int | None:
        """Forget the worker, reaping it; its exit code."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        if process is None:
            return None
        process.join(5)
        if process.exitcode is None:
            process.kill()
            process.join()
        return process.exitcode

    def _crashed(self) -> LocalModelCrashedError:
        return LocalModelCrashedError(self._discard())

    def _send(self, message: Any) -> None:
        assert self._conn is not None
        try:
            self._conn.send(message)
        except OSError:  # BrokenPipeError: the worker is gone
            raise self._crashed() from None

    def _receive(self) -> Any:
        conn, process = self._conn, self._process
        assert conn is not None and process is not None
        ready = wait([conn, process.sentinel])
        if conn in ready:
            try:
                return conn.recv()
            except (EOFError, OSError):
                pass
        raise self._crashed()

    def generate(
        self,
        prompt: str,
        *,
        stats: GenerationStats,
        max_tokens: int,
        temperature: float = 0.0,
        grammar: str | None = None,
        stop: Sequence[str] = (),
        should_stop: Callable[[], bool] | None = None,
    ) -> Generator[str, None, None]:
        """`LocalEngine.generate`, run by the worker; the caller must hold `self.lock`.

        Raises `LocalModelCrashedError` if the worker dies before the answer is complete.
        """
        self._start()
        yield from self._relay(GenerateRequest(prompt, max_tokens, temperature, grammar,
                                               tuple(stop)), stats, should_stop)

    def close(self) -> None:
        """Ask the worker to exit (it frees the model), or kill it if it is busy."""
        if self._process is None:
            return
        if self.lock.acquire(timeout=5):
            try:
                if self._conn is not None:
                    with contextlib.suppress(OSError):  # already gone: reaped below
                        self._conn.send(None)
            finally:
                self.lock.release()
        self._discard()


_ENGINES: dict[tuple[str, int], WorkerEngine | ServiceEngine] = {}
_ENGINES_LOCK = threading.Lock()


def shared_engine(path: Path | str, n_ctx: int, n_threads: int | None = None,
                  prefix_store: str | None = None,
                  service: ServiceOptions | None = None) -> WorkerEngine | ServiceEngine:
    """The process-wide engine for (file, context size); the model starts on the first turn.

    With `service`, turns go to the home's shared model service (`local_service_client`);
    without, to a worker process of this process's own. The first caller's choice holds.
    """
    key = (str(Path(path).resolve()), n_ctx)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None and service is not None:
            from pilothouse.models.local_service_client import ServiceEngine

            engine = ServiceEngine(Path(key[0]), n_ctx, n_threads, prefix_store, service)
        if engine is None:
            engine = WorkerEngine(Path(key[0]), n_ctx, n_threads, prefix_store)
        _ENGINES[key] = engine
        return engine


@atexit.register
def _close_all() -> None:
    for engine in list(_ENGINES.values()):
        engine.close()
