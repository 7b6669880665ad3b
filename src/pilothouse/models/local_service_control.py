"""Start, ask after and stop a home's local model service (`local_service`), from any command.

A command that finds no service takes `model-start.lock`, checks again (another command may
just have started one), starts `python -m pilothouse.models.local_service` in a session of its
own, so that it outlives the command, and waits for its "ready" line on a pipe. The service gets
the command's environment less every credential: it needs none. `pilothouse model status` and
`stop` use the other two functions here.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pilothouse.errors import ModelProviderError
from pilothouse.models.local_service_files import (
    ServicePaths,
    connect,
    private_run_folder,
    unlock,
    wait_lock,
)

#: How long a command waits for a service it started to say it listens.
START_SECONDS = 60.0
#: Variables the service keeps from the command that starts it: no credential of any kind.
_KEPT = ("PATH", "HOME", "USER", "LANG", "TMPDIR", "VIRTUAL_ENV", "LD_LIBRARY_PATH")
_KEPT_PREFIXES = ("LC_", "PYTHON", "OMP_", "GGML_", "LLAMA_")
_LOG_LIMIT = 1 << 20
#: Services this process started (a test session stops them when it ends).
STARTED: list[ServicePaths] = []


def _service_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in _KEPT or k.startswith(_KEPT_PREFIXES)}


def _read_line(fd: int, timeout: float) -> str:
    """The first line written to the pipe `fd` ("" if it closed or `timeout` passed first)."""
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 256)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").strip()


def _log_tail(path: Path, lines: int = 5) -> str:
    with contextlib.suppress(OSError):
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    return ""


def start_service(paths: ServicePaths, config: dict[str, Any]) -> subprocess.Popen[bytes] | None:
    """Start a service unless one answers; the process started, if any (hold no lock)."""
    private_run_folder(paths.folder)
    lock = wait_lock(paths.start_lock, START_SECONDS * 2)
    if lock is None:
        raise ModelProviderError(
            f"Another command has been starting the local model service for "
            f"{START_SECONDS * 2:g} s.",
            hint="Run `pilothouse model stop` and ask again.")
    try:
        with contextlib.suppress(OSError):
            connect(paths).close()
            return None  # started meanwhile by the command that held the lock
        if paths.log.exists() and paths.log.stat().st_size > _LOG_LIMIT:
            paths.log.unlink()
        reader, writer = os.pipe()
        output = os.open(paths.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "pilothouse.models.local_service",
                 json.dumps({"folder": str(paths.folder), **config}), str(writer)],
                pass_fds=(writer,), stdin=subprocess.DEVNULL, stdout=output, stderr=output,
                cwd=paths.folder, env=_service_env(), start_new_session=True)
        finally:
            os.close(writer)
            os.close(output)
        try:
            word = _read_line(reader, START_SECONDS)
        finally:
            os.close(reader)
        # Reap it when it exits, whenever that is: no zombie in a long-running `serve`.
        threading.Thread(target=process.wait, daemon=True, name="pilothouse-service-reaper"
                         ).start()
        if word not in ("ready", "busy"):
            raise ModelProviderError(
                f"The local model service did not start: {_log_tail(paths.log) or word or '?'}",
                hint=f"Its log is {paths.log}; run `pilothouse doctor` to check the model.")
        STARTED.append(paths)
        return process
    finally:
        unlock(lock)


def _request(paths: ServicePaths, message: tuple[str, None]) -> tuple[str, Any] | None:
    """One request to the running service and its reply, or None if none runs or it went."""
    try:
        conn = connect(paths)
    except OSError:
        return None
    with conn:
        try:
            conn.send(message)
            reply: tuple[str, Any] = conn.recv()
        except (EOFError, OSError):
            return None
    return reply


def service_status(paths: ServicePaths) -> dict[str, Any] | None:
    """What the running service says about itself, or None if none runs."""
    reply = _request(paths, ("status", None))
    return reply[1] if reply is not None and reply[0] == "status" else None


def stop_service(paths: ServicePaths, timeout: float = 30.0) -> int | None:
    """Stop the running service and wait until it has exited; its pid, or None if none ran."""
    reply = _request(paths, ("stop", None))
    if reply is None:
        return None
    pid = reply[1]
    lock = wait_lock(paths.lock, timeout)  # the service holds it until its very end
    if lock is None:
        raise ModelProviderError(
            f"The local model service (pid {pid}) did not stop within {timeout:g} s.",
            hint=f"kill {pid}")
    unlock(lock)
    return int(pid)


