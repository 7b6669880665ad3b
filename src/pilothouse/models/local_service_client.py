"""A command's side of the local model service: find or start it, queue, and relay turns.

`ServiceEngine` is the engine `local_turn` drives (`lock`, `generate`), like
`local_worker.WorkerEngine`, but the model runs in the home's model service (`local_service`),
so it stays loaded, with its prompts' KV state, from one command to the next.

- Starting: a command that finds no service starts one (`local_service_control`), which
  outlives the command. A socket whose service died is stale: connecting fails, and the new
  service replaces it.
- Another version, model file or setting: a service whose identity differs from this
  command's is never shared. If it is idle it is stopped and replaced (an upgrade or a changed
  setting takes effect on the next command); if it is busy with another command's turn, this
  command runs a worker of its own, as it did before the service existed, and says so in the
  log. `pilothouse model status` shows what the service runs.
- A service that dies under a turn fails that turn with `LocalModelCrashedError`; a turn still
  waiting in its queue starts a new service and goes on.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pilothouse.errors import ModelProviderError
from pilothouse.models.local_engine import GenerationStats
from pilothouse.models.local_service_control import start_service, stop_service
from pilothouse.models.local_service_files import ServiceIdentity, ServicePaths, connect
from pilothouse.models.local_turn_queue import TurnLock, WaitReporter, report_waiting
from pilothouse.models.local_worker import (
    LocalModelCrashedError,
    PipeRelay,
    WorkerEngine,
    rebuild_error,
)
from pilothouse.models.local_worker_process import ErrorPayload, GenerateRequest

log = logging.getLogger("pilothouse.models.service")
#: How often a turn waiting in the service's line checks whether its caller gave up.
_STOP_CHECK_SECONDS = 0.2


class TurnAbandoned(Exception):
    """The caller stopped the turn while it waited for the model."""


@dataclass(frozen=True)
class ServiceOptions:
    """Where the shared service lives and how long it stays after its last turn."""

    folder: Path
    idle_seconds: float


class ServiceEngine(PipeRelay):
    """Turns on the home's model service, queued fairly; same interface as `WorkerEngine`."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int | None, prefix_store: str | None,
                 options: ServiceOptions, report: Callable[[int], None] = report_waiting) -> None:
        self.identity = ServiceIdentity.of(path, n_ctx, n_threads, prefix_store)
        self.paths = ServicePaths(options.folder)
        self.idle_seconds = options.idle_seconds
        # Held by a caller for a whole turn; `report` hears how many turns are ahead.
        self.lock = TurnLock(on_release=self._end_turn, report=report)
        self._conn: Connection | None = None
        self._worker_pid: int | None = None
        self._service_pid: int | None = None
        self._started: subprocess.Popen[bytes] | None = None
        self._private: WorkerEngine | None = None
        self._own_worker = False  # this turn runs on `_private`

    @property
    def pid(self) -> int | None:
        """The process that runs this engine's turns: the service's worker, or our own."""
        if self._own_worker and self._private is not None:
            return self._private.pid
        return self._worker_pid

    @property
    def service_pid(self) -> int | None:
        """The service of the last turn on it (None before the first)."""
        return self._service_pid

    @property
    def private(self) -> bool:
        """Whether this turn runs on a worker of this process's own (another service is busy)."""
        return self._own_worker

    def begin(self, should_stop: Callable[[], bool] = lambda: False) -> None:
        """Take this turn's place on the model: wait in the service's queue, starting the
        service if none runs. Call it holding `lock`; `generate` does when it has not been.

        Raises `TurnAbandoned` if `should_stop()` turns true while the turn waits.
        """
        if self._conn is None and not self._own_worker:
            self._own_worker = not self._open_turn(self.lock.reporter, should_stop)
            self.lock.reporter.done()

    # -- a turn's session with the service -------------------------------------------------

    def _config(self) -> dict[str, Any]:
        return {"model": self.identity.model, "n_ctx": self.identity.n_ctx,
                "n_threads": self.identity.n_threads, "prefix_store": self.identity.prefix_store,
                "idle_seconds": self.idle_seconds}

    def _connection(self) -> Connection:
        try:
            return connect(self.paths)
        except OSError:  # none listens, or its socket is stale: start one
            process = start_service(self.paths, self._config())
            self._started = process or self._started
            return connect(self.paths)

    def _open_turn(self, reporter: WaitReporter, should_stop: Callable[[], bool]) -> bool:
        """Join the service's queue and wait for the model; False: run our own worker.

        Raises `TurnAbandoned` if `should_stop()` says so while the turn waits in line.
        """
        for _ in range(3):
            conn = self._connection()
            try:
                conn.send(("turn", self.identity.as_json()))
                while True:
                    while not conn.poll(_STOP_CHECK_SECONDS):  # a cancelled turn leaves the line
                        if should_stop():
                            conn.close()
                            raise TurnAbandoned
                    kind, value = conn.recv()
                    if kind == "queued":
                        reporter(value)
                    elif kind == "running":
                        self._conn, (self._worker_pid, self._service_pid) = conn, value
                        return True
                    elif kind == "other":
                        conn.close()
                        if not self._replace(value):
                            return False
                        break
                    else:
                        raise rebuild_error(value)
            except (EOFError, OSError):  # it exited before our turn began: start another
                conn.close()
            except BaseException:
                conn.close()
                raise
        raise ModelProviderError(
            "The local model service keeps closing before a turn can start.",
            hint=f"Run `pilothouse model stop`, then ask again; its log is {self.paths.log}.")

    def _replace(self, info: dict[str, Any]) -> bool:
        """Another service: stop it if idle (True), or leave it to its turns (False)."""
        differences = "; ".join(self.identity.differences(info["identity"]))
        if info.get("busy"):
            log.warning("The local model service (pid %s) runs another model or version (%s) "
                        "and is busy: this command runs its own model process. `pilothouse "
                        "model stop` replaces it.", info.get("pid"), differences)
            return False
        log.warning("Replacing the idle local model service (pid %s): it runs another model or "
                    "version (%s).", info.get("pid"), differences)
        stop_service(self.paths)
        return True

    def _end_turn(self) -> None:
        """The lock is released: the turn ends (the service serves the next one)."""
        conn, self._conn = self._conn, None
        self._own_worker = False
        if conn is not None:
            conn.close()

    def _service_gone(self) -> LocalModelCrashedError:
        pid, self._worker_pid = self._service_pid, None
        self._end_turn()
        exitcode = None
        if self._started is not None and self._started.pid == pid:
            with contextlib.suppress(subprocess.TimeoutExpired):
                exitcode = self._started.wait(5)
        return LocalModelCrashedError(exitcode, f"model service (pid {pid})")

    def _send(self, message: Any) -> None:
        assert self._conn is not None
        try:
            self._conn.send(message)
        except OSError:
            raise self._service_gone() from None

    def _receive(self) -> Any:
        assert self._conn is not None
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            raise self._service_gone() from None

    # -- generation ------------------------------------------------------------------------

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
    ) -> Iterator[str]:
        """`LocalEngine.generate`, run by the service; the caller must hold `self.lock`.

        Raises `LocalModelCrashedError` if the worker or the service dies before the answer is
        complete.
        """
        try:
            self.begin(should_stop or (lambda: False))
        except TurnAbandoned:
            stats.finish_reason = "stop"  # stopped before it began: nothing generated
            return
        if self._own_worker:
            if self._private is None:
                self._private = WorkerEngine(Path(self.identity.model), self.identity.n_ctx,
                                             self.identity.n_threads, self.identity.prefix_store)
            yield from self._private.generate(prompt, stats=stats, max_tokens=max_tokens,
                                              temperature=temperature, grammar=grammar,
                                              stop=stop, should_stop=should_stop)
            return
        yield from self._relay(GenerateRequest(prompt, max_tokens, temperature, grammar,
                                               tuple(stop)), stats, should_stop)

    def _on_error(self, payload: ErrorPayload) -> None:
        if payload.kind == "crashed":
            self._worker_pid = None  # the service starts a new one next time

    def close(self) -> None:
        """End this process's turn, if any, and its own worker; the service stays."""
        self._end_turn()
        if self._private is not None:
            self._private.close()
