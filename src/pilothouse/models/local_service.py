"""The local model service: one warm model per user, shared by every command, like Ollama's.

Loading the 1.1 GB model and reading the agents' system prompts took each `pilothouse ask`
35-60 s on two cores; a process that keeps both in memory answers in a fraction of that. The
first command that needs the local model starts this service (`local_service_client`), which
outlives it; later `ask`, `chat`, `tui`, `eval` and `serve` processes connect to its Unix socket
in PILOTHOUSE_HOME (`local_service_files`); it exits after PILOTHOUSE_LOCAL_IDLE_SECONDS without
a turn, or on `pilothouse model stop`.

Crash isolation is as before: the service runs the model in the same worker process a command
used to start itself (`local_worker.WorkerEngine`), and relays the worker's messages. A native
crash kills the worker, not the service: the turn in flight gets `LocalModelCrashedError` with
the worker's signal, and the next turn starts a fresh worker. The service itself is plain
Python; if it is killed anyway, the turns in flight fail and the next command starts another.

Protocol: `multiprocessing.connection.Connection` over the socket (length-prefixed pickles,
peers of this user only), one connection per request. `("status", None)` is answered
with `("status", info)`; `("stop", None)` with `("stopping", pid)`. `("turn", identity)` joins the
queue if the client's `ServiceIdentity` is the service's (else `("other", info)`): the service
sends `("queued", ahead)` as the turns ahead change, then `("running", (worker_pid, pid))`;
the client then sends `("generate", GenerateRequest)` as often as the turn needs,
each answered exactly as the worker answers it (`local_worker_process`), and closes the
connection to end the turn.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import signal
import socket
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pilothouse.models.local_engine import GenerationStats
from pilothouse.models.local_service_files import (
    ServiceIdentity,
    ServicePaths,
    bind,
    peer,
    private_run_folder,
    unlock,
    wait_lock,
)
from pilothouse.models.local_turn_queue import TurnQueue
from pilothouse.models.local_worker import LocalModelCrashedError, WorkerEngine
from pilothouse.models.local_worker_process import ErrorPayload, GenerateRequest, error_payload
from pilothouse.private_files import restrict_umask

log = logging.getLogger("pilothouse.models.service")
#: How long a new service waits for an exiting one to let go of the home's service lock.
LOCK_WAIT_SECONDS = 30.0
#: How long a request from another model or version waits for a turn that is ending to end.
_ENDING_SECONDS = 2.0


class ModelService:
    """The socket's accept loop, the turn queue and the worker, with counts for `status`."""

    def __init__(self, listener: socket.socket, engine: WorkerEngine, identity: ServiceIdentity,
                 idle_seconds: float) -> None:
        self.listener = listener
        self.engine = engine
        self.identity = identity
        self.idle_seconds = idle_seconds
        self.queue = TurnQueue()
        self.started = time.time()
        self.turns = 0
        self.generations = 0
        self._last_turn = time.monotonic()
        self._stopping = threading.Event()
        self._wake_reader, self._wake_writer = socket.socketpair()

    # -- what `status` shows ---------------------------------------------------------------

    def idle_left(self) -> float | None:
        """Seconds until the service exits for want of turns (None while a turn runs)."""
        if self.queue.busy:
            return None
        return self.idle_seconds - (time.monotonic() - self._last_turn)

    def info(self) -> dict[str, Any]:
        """The service as `pilothouse model status` and a client of another identity see it."""
        left = self.idle_left()
        return {"pid": os.getpid(), "identity": self.identity.as_json(),
                "started": self.started, "uptime": time.time() - self.started,
                "idle_seconds": self.idle_seconds,
                "idle_left": None if left is None else max(left, 0.0),
                "turns": self.turns, "generations": self.generations,
                "active": self.queue.active is not None, "queued": self.queue.waiting,
                "busy": self.queue.busy, "worker_pid": self.engine.pid}

    # -- the accept loop -------------------------------------------------------------------

    def stop(self) -> None:
        """Leave the accept loop (from any thread, or a signal handler)."""
        self._stopping.set()
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_writer.send(b"x")

    def serve_forever(self) -> None:
        """Accept connections until stopped or idle for `idle_seconds`."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.listener, selectors.EVENT_READ)
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while not self._stopping.is_set():
                left = self.idle_left()
                if left is not None and left <= 0:
                    log.info("no turn for %g s: exiting", self.idle_seconds)
                    return
                for key, _ in selector.select(left):
                    if key.fileobj is self._wake_reader:
                        self._wake_reader.recv(1024)
                        continue
                    client, _ = self.listener.accept()
                    threading.Thread(target=self._client, args=(client,), daemon=True,
                                     name="pilothouse-model-client").start()

    def _client(self, sock: socket.socket) -> None:
        pid, uid = peer(sock)
        if uid != os.getuid():  # the folder is 0700: only root or a changed mode gets here
            log.warning("refused a connection from uid %d (pid %d): not this service's user",
                        uid, pid)
            sock.close()
            return
        conn = Connection(sock.detach())
        try:
            kind, value = conn.recv()
            if kind == "status":
                conn.send(("status", self.info()))
            elif kind == "stop":
                log.info("stop asked by pid %d", pid)
                conn.send(("stopping", os.getpid()))
                self.stop()
            elif kind == "turn" and self.identity.differences(value):
                # Another model or version: not shared. A turn whose client has just closed is
                # still ending here for a moment; it must not make an idle service look busy
                # (measured under load: a command right after another ran its own model).
                self.queue.wait_idle(_ENDING_SECONDS)
                conn.send(("other", self.info()))
            elif kind == "turn":
                self._turn(conn)
            else:
                conn.send(("error", ErrorPayload("model", f"unknown request {kind!r}")))
        except (EOFError, OSError):
            pass  # the client went away: its turn, if any, has ended
        except Exception:  # a malformed message: this connection ends, the service goes on
            log.exception("dropped a connection from pid %d", pid)
        finally:
            conn.close()

    # -- one turn --------------------------------------------------------------------------

    def _turn(self, conn: Connection) -> None:
        ticket = self.queue.join()
        try:
            self.queue.wait(ticket, lambda ahead: conn.send(("queued", ahead)))
            conn.send(("running", (self.engine.start(), os.getpid())))
            self.turns += 1  # a turn its client gave up before it began is not counted
            while True:
                try:
                    kind, request = conn.recv()
                except EOFError:
                    return  # the client ended its turn
                if kind != "generate":
                    conn.send(("error", ErrorPayload("model", f"unknown request {kind!r}")))
                    continue
                self._generate(conn, request)
        finally:
            self._last_turn = time.monotonic()
            self.queue.leave(ticket)
            self._wake()  # the idle clock starts again

    def _generate(self, conn: Connection, request: GenerateRequest) -> None:
        stats = GenerationStats()

        def should_stop() -> bool:  # the client's answer, as the worker's parent's was
            conn.send(("ask", None))
            return bool(conn.recv())

        started = time.monotonic()
        first: float | None = None
        pieces = self.engine.generate(
            request.prompt, stats=stats, max_tokens=request.max_tokens,
            temperature=request.temperature, grammar=request.grammar, stop=request.stop,
            should_stop=should_stop)
        try:
            with contextlib.closing(pieces):  # a client gone mid-answer: the worker stops too
                for piece in pieces:
                    first = first if first is not None else time.monotonic() - started
                    conn.send(("piece", piece))
        except LocalModelCrashedError as crash:
            log.warning("%s", crash.message)
            exitcode = () if crash.exitcode is None else (crash.exitcode,)
            conn.send(("error", ErrorPayload("crashed", crash.message, crash.hint, exitcode)))
            return
        except (EOFError, OSError):
            raise
        except Exception as error:  # the worker's error, for the client to raise
            conn.send(("error", error_payload(error)))
            return
        self.generations += 1
        # Where a turn's seconds go (the prompt read, or the answer), for `model.log`.
        log.info("generation: %d prompt tokens (read %d), %d answer tokens; first piece %.1f s, "
                 "all %.1f s", stats.prompt_tokens, stats.read_tokens, stats.completion_tokens,
                 first or 0.0, time.monotonic() - started)
        conn.send(("done", (stats.prompt_tokens, stats.completion_tokens, stats.finish_reason,
                            stats.read_tokens)))

    def shutdown(self) -> None:
        """Free the model: ask the worker to exit, or kill it under a turn still running."""
        if self.queue.busy:
            self.engine.kill()  # the turn's client sees the service go, with a clear error
        else:
            self.engine.close()


def _tell(fd: int, word: str) -> None:
    """Tell the starting command how the start went (one line on its pipe)."""
    with contextlib.suppress(OSError):
        os.write(fd, word.encode() + b"\n")
        os.close(fd)


def run(config: dict[str, Any], ready_fd: int) -> int:
    """Start a service for `config` (written by `local_service_client`) and serve."""
    restrict_umask()
    paths = ServicePaths(Path(config["folder"]))
    private_run_folder(paths.folder)
    lock = wait_lock(paths.lock, LOCK_WAIT_SECONDS)
    if lock is None:
        _tell(ready_fd, "busy")  # another service runs and did not stop: use that one
        return 0
    try:
        listener = bind(paths)
        bound = paths.socket.stat().st_ino
        identity = ServiceIdentity.of(config["model"], config["n_ctx"], config["n_threads"],
                                      config["prefix_store"])
        engine = WorkerEngine(Path(identity.model), identity.n_ctx, identity.n_threads,
                              identity.prefix_store)
        service = ModelService(listener, engine, identity, float(config["idle_seconds"]))
        signal.signal(signal.SIGTERM, lambda *_: service.stop())
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal that started it may close
        log.info("serving %s (n_ctx %d) on %s", identity.model, identity.n_ctx, paths.socket)
        _tell(ready_fd, "ready")
        try:
            service.serve_forever()
        finally:
            with contextlib.suppress(OSError):
                if paths.socket.stat().st_ino == bound:
                    paths.socket.unlink()
            listener.close()
            service.shutdown()
        log.info("stopped after %d turns", service.turns)
        return 0
    finally:
        unlock(lock)


def main(argv: list[str] | None = None) -> int:
    """`python -m pilothouse.models.local_service CONFIG_JSON READY_FD`."""
    args = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s pid %(process)d: %(message)s")
    return run(json.loads(args[0]), int(args[1]))


if __name__ == "__main__":
    sys.exit(main())
