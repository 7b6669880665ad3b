"""Run a checked plan with subprocess: pipelines, `&&`/`||`/`;`, redirections, limits.

No shell is involved: each stage is an argv Popen'd with its pipes and files wired by us.
Every stage starts its own session, so a timeout kills the whole process group of each stage
(grandchildren included). Resource limits are set in the child before exec. Output is read
by threads into capped buffers, so a command that prints gigabytes costs a bounded amount.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pilothouse.tools.shell.decision import PlannedCommand, PlannedStep

_READ_CHUNK = 65_536
# O_NOFOLLOW: the policy checked the resolved path; a symlink swapped in since is not followed.
_OPEN_FLAGS = {
    "read": os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
    "write": os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
    "append": os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
}
_KILL_GRACE_SECONDS = 0.5


@dataclass(frozen=True)
class ExecutionLimits:
    """Per-command limits; None disables one."""

    timeout_seconds: float = 30.0
    output_limit_bytes: int = 64_000
    memory_bytes: int | None = 2 * 1024**3
    cpu_seconds: int | None = 120
    max_processes: int | None = 256
    file_size_bytes: int | None = 1024**3


@dataclass
class ExecutionResult:
    """What happened: exit status, captured (capped) output, and why it stopped."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    duration_seconds: float = 0.0
    stdout_omitted_bytes: int = 0
    stderr_omitted_bytes: int = 0
    start_error: OSError | None = None
    failed_program: str | None = None
    #: The program whose exit status is the command's (the last one that ran).
    last_program: str | None = None


class _CappedReader(threading.Thread):
    """Drain a pipe; keep the first (stdout) or last (stderr) `limit` bytes."""

    def __init__(self, stream: IO[bytes], limit: int, *, keep_tail: bool) -> None:
        super().__init__(daemon=True)
        self.stream, self.limit, self.keep_tail = stream, limit, keep_tail
        self.data = bytearray()
        self.total = 0

    def run(self) -> None:
        try:
            while chunk := self.stream.read1(_READ_CHUNK):  # type: ignore[attr-defined]
                self.total += len(chunk)
                self.data += chunk
                # Keep reading past the cap so the writer never blocks on a full pipe.
                if len(self.data) > self.limit and self.keep_tail:
                    del self.data[: len(self.data) - self.limit]
                elif len(self.data) > self.limit:
                    del self.data[self.limit :]
        except (OSError, ValueError):
            pass  # the pipe was closed under us after a kill
        finally:
            with contextlib.suppress(OSError, ValueError):
                self.stream.close()

    @property
    def omitted(self) -> int:
        return self.total - len(self.data)


def _task_count(uid: int) -> int:
    """Tasks (threads) `uid` owns now: RLIMIT_NPROC counts these, per user, system-wide."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", encoding="ascii", errors="replace") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError):
            continue
    return count


def _limiter(limits: ExecutionLimits) -> Callable[[], None]:
    # RLIMIT_NPROC is per real uid across the machine, so "256 processes" must mean
    # "256 more than this user already runs", computed here, before fork.
    nproc = None
    if limits.max_processes is not None and os.path.isdir("/proc"):
        nproc = _task_count(os.getuid()) + limits.max_processes
    settings = [
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_NPROC, nproc),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes),
        (resource.RLIMIT_CORE, 0),
    ]

    def apply() -> None:  # runs in the child between fork and exec: no locks, no imports
        for which, value in settings:
            if value is not None:
                _, hard = resource.getrlimit(which)
                soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
                resource.setrlimit(which, (soft, soft))

    return apply


class _Run:
    """One execution: live process groups, readers, and the shared deadline."""

    def __init__(self, env: Mapping[str, str], limits: ExecutionLimits) -> None:
        self.env = dict(env)
        self.limits = limits
        self.deadline = time.monotonic() + limits.timeout_seconds
        self.preexec = _limiter(limits)
        self.processes: list[subprocess.Popen[bytes]] = []
        self.devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        err_read, self.err_write = os.pipe()
        self.stderr = _CappedReader(
            os.fdopen(err_read, "rb"), limits.output_limit_bytes, keep_tail=True
        )
        self.stderr.start()
        self.stdout_parts: list[_CappedReader] = []

    def pipeline(self, commands: Sequence[PlannedCommand], cwd: Path) -> int:
        """Start every stage, wire the pipes, wait for all; return the last stage's status."""
        processes: list[subprocess.Popen[bytes]] = []
        previous: int | None = None  # read end of the pipe from the stage before
        try:
            for index, command in enumerate(commands):
                out_read, out_write = os.pipe()
                fds: dict[int, int] = {
                    0: previous if previous is not None else self.devnull,
                    1: out_write,
                    2: self.err_write,
                }
                opened = [out_write]
                try:
                    for redirect in command.redirects:
                        if redirect.mode == "dup":
                            fds[redirect.fd] = fds[redirect.source_fd or 0]
                            continue
                        fd = os.open(str(redirect.path), _OPEN_FLAGS[redirect.mode], 0o644)
                        opened.append(fd)
                        fds[redirect.fd] = fd
                    process = subprocess.Popen(
                        list(command.argv),
                        stdin=fds[0],
                        stdout=fds[1],
                        stderr=fds[2],
                        cwd=cwd,
                        env=self.env,
                        start_new_session=True,
                        preexec_fn=self.preexec,
                        close_fds=True,
                    )
                except BaseException:
                    os.close(out_read)
                    raise
                finally:
                    for fd in opened:
                        os.close(fd)  # the child holds its own copies
                    if previous is not None:
                        os.close(previous)  # closing ours lets SIGPIPE reach the writer
                        previous = None
                processes.append(process)
                self.processes.append(process)
                if index == len(commands) - 1:
                    reader = _CappedReader(
                        os.fdopen(out_read, "rb"), self.limits.output_limit_bytes, keep_tail=False
                    )
                    reader.start()
                    self.stdout_parts.append(reader)
                else:
                    previous = out_read
        finally:
            if previous is not None:
                os.close(previous)
        return [self._wait(p) for p in processes][-1]

    def _wait(self, process: subprocess.Popen[bytes]) -> int:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise subprocess.TimeoutExpired(process.args, self.limits.timeout_seconds)
        return process.wait(timeout=remaining)

    def kill_all(self, *, grace: bool) -> None:
        """Signal every stage's process group (the stage and anything it started)."""
        for sig in (signal.SIGTERM, signal.SIGKILL) if grace else (signal.SIGKILL,):
            for process in self.processes:
                # Each stage leads its own session, so its pid is its process group id. The
                # leader may already be reaped; its pid cannot be reused by then in practice
                # (pids advance through the whole space), and the group may still have members.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, sig)
            if sig == signal.SIGTERM:
                time.sleep(_KILL_GRACE_SECONDS)

    def finish(self) -> tuple[bytes, int, bytes, int]:
        """Stop leftovers, reap every process, and collect the captured output."""
        self.kill_all(grace=False)
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=_KILL_GRACE_SECONDS)
        os.close(self.err_write)
        os.close(self.devnull)
        for reader in [*self.stdout_parts, self.stderr]:
            # A grandchild that escaped into its own session may hold a pipe open for long.
            # Its reader (a daemon thread) is left to finish on its own: closing the stream
            # under a blocked read would wait for that read anyway.
            reader.join(timeout=1.0)
        out = b"".join(bytes(r.data) for r in self.stdout_parts)
        return (
            out,
            sum(r.omitted for r in self.stdout_parts),
            bytes(self.stderr.data),
            self.stderr.omitted,
        )


def execute(
    plan: Sequence[PlannedStep], *, env: Mapping[str, str], limits: ExecutionLimits
) -> ExecutionResult:
    """Run `plan` (from a PolicyDecision) and collect its result."""
    started = time.monotonic()
    run = _Run(env, limits)
    status = 0
    cwd = plan[0].cwd if plan else Path.cwd()
    timed_out = False
    start_error: OSError | None = None
    failed: str | None = None
    last: str | None = None
    notes: list[str] = []
    try:
        for step in plan:
            if (step.connector == "&&" and status != 0) or (step.connector == "||" and status == 0):
                continue
            if step.cwd != cwd:
                notes.append(
                    "pilothouse: stopped: a previous cd failed, so the remaining "
                    "commands would run in a directory they were not checked for\n"
                )
                break
            if step.chdir is not None:
                status = 0 if step.chdir.is_dir() else 1
                if status:
                    notes.append(f"cd: {step.chdir}: No such directory\n")
                else:
                    cwd = step.chdir
                continue
            try:
                last = step.commands[-1].argv[0] if step.commands[-1].argv else None
                status = run.pipeline(step.commands, cwd)
            except OSError as exc:
                start_error, status = exc, 127 if isinstance(exc, FileNotFoundError) else 126
                failed = str(exc.filename) if exc.filename else step.commands[0].argv[0]
                notes.append(f"{failed}: {exc.strerror}\n")
    except subprocess.TimeoutExpired:
        timed_out = True
        run.kill_all(grace=True)
    out, out_omitted, err, err_omitted = run.finish()
    err = "".join(notes).encode() + err
    return ExecutionResult(
        exit_code=None if timed_out else status,
        stdout=out.decode("utf-8", errors="replace"),
        stderr=err.decode("utf-8", errors="replace"),
        timed_out=timed_out,
        duration_seconds=time.monotonic() - started,
        stdout_omitted_bytes=out_omitted,
        stderr_omitted_bytes=err_omitted,
        start_error=start_error,
        failed_program=failed,
        last_program=last,
    )
