"""Where the local model service lives in PILOTHOUSE_HOME, who it is, and who may reach it.

Everything is in `<home>/run/`, a folder only its owner can enter (0700):
- `model.sock`, the service's Unix socket (0600);
- `model.lock`, locked (`flock`) by the living service for as long as it runs: the kernel
  drops the lock when the process dies, however it dies, so "is a service alive" never
  trusts a pid file and a socket left by a killed service is known to be stale;
- `model-start.lock`, held by a command while it starts a service, so two commands started
  at once start one service, and the second uses it;
- `model.log`, the service's output (why it did not start, what it refused).

Besides the folder's mode, both ends check the other's user id (`SO_PEERCRED`): the service
serves only its own user, and a command only talks to a service of its own user.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pilothouse import __version__
from pilothouse.errors import ConfigurationError
from pilothouse.private_files import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, private_dir

#: AF_UNIX addresses hold 108 bytes with the terminating NUL.
_MAX_SOCKET_PATH = 107
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


@dataclass(frozen=True)
class ServicePaths:
    """The files of one home's model service."""

    folder: Path

    @property
    def socket(self) -> Path:
        return self.folder / "model.sock"

    @property
    def lock(self) -> Path:
        return self.folder / "model.lock"

    @property
    def start_lock(self) -> Path:
        return self.folder / "model-start.lock"

    @property
    def log(self) -> Path:
        return self.folder / "model.log"


def service_paths(home: Path) -> ServicePaths:
    """The model service's files in PILOTHOUSE_HOME."""
    return ServicePaths(home.expanduser() / "run")


@dataclass(frozen=True)
class ServiceIdentity:
    """What a service runs: a command shares it only when every field matches its own.

    A KV state, a grammar or a turn is only right for the same weights, context size and
    code; the interpreter stands for the installed llama.cpp build.
    """

    version: str
    python: str
    model: str
    model_size: int
    model_mtime_ns: int
    n_ctx: int
    n_threads: int | None
    prefix_store: str | None

    @classmethod
    def of(cls, model: Path | str, n_ctx: int, n_threads: int | None,
           prefix_store: str | None) -> ServiceIdentity:
        path = Path(model).resolve()
        info = path.stat()
        return cls(__version__, sys.executable, str(path), info.st_size, info.st_mtime_ns,
                   n_ctx, n_threads, prefix_store)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def differences(self, other: Mapping[str, Any]) -> list[str]:
        """`field: theirs != ours` for each field the other service has otherwise."""
        return [f"{name}: {other.get(name)!r} != {value!r}"
                for name, value in asdict(self).items() if other.get(name) != value]


def private_run_folder(folder: Path) -> Path:
    """`folder`, created 0700 and owned by this user; an open one is tightened."""
    private_dir(folder)
    info = folder.lstat()
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
        raise ConfigurationError(
            f"{folder} is not a folder of this user (it is a link, or owned by uid "
            f"{info.st_uid}): the model service will not put its socket there.",
            hint="Remove it, or set PILOTHOUSE_HOME to a folder of your own.")
    if stat.S_IMODE(info.st_mode) != PRIVATE_DIR_MODE:
        os.chmod(folder, PRIVATE_DIR_MODE)
    return folder


@contextlib.contextmanager
def socket_address(path: Path) -> Iterator[str]:
    """An address for the socket at `path` that fits AF_UNIX's 107 bytes.

    A deep PILOTHOUSE_HOME (a test's temporary folder) makes a longer path: it is then reached
    through this process's descriptor of its folder (`/proc/self/fd/N/model.sock`).
    """
    if len(os.fsencode(path)) <= _MAX_SOCKET_PATH:
        yield str(path)
        return
    folder = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{path.name}"
    finally:
        os.close(folder)


def peer(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a Unix socket."""
    pid, uid, _ = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                   _PEERCRED.size))
    return pid, uid


def connect(paths: ServicePaths) -> Connection:
    """A connection to the running service; OSError when none listens (or it is stale)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with socket_address(paths.socket) as address:
            sock.connect(address)
        _, uid = peer(sock)
        if uid != os.getuid():
            raise ConfigurationError(
                f"The model service socket {paths.socket} belongs to uid {uid}, not to you.",
                hint="Remove it, or set PILOTHOUSE_HOME to a folder of your own.")
    except BaseException:
        sock.close()
        raise
    return Connection(sock.detach())


def bind(paths: ServicePaths) -> socket.socket:
    """The service's listening socket, 0600, replacing a stale one (hold `paths.lock`)."""
    with contextlib.suppress(FileNotFoundError):
        paths.socket.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with socket_address(paths.socket) as address:
        sock.bind(address)
    os.chmod(paths.socket, PRIVATE_FILE_MODE)
    sock.listen(32)
    return sock


def try_lock(path: Path) -> int | None:
    """An exclusive `flock` on `path` (created 0600): its descriptor, or None if held."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def wait_lock(path: Path, timeout: float) -> int | None:
    """`try_lock` until it succeeds or `timeout` seconds pass.

    Polled: `flock` has no timeout of its own, and the holders here are processes that exit
    or finish starting within seconds.
    """
    deadline = time.monotonic() + timeout
    while (fd := try_lock(path)) is None:
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)
    return fd


def unlock(fd: int) -> None:
    """Release a lock from `try_lock`/`wait_lock`."""
    os.close(fd)


def service_alive(paths: ServicePaths) -> bool:
    """Whether a service holds this home's service lock right now."""
    if not paths.folder.is_dir():
        return False
    fd = try_lock(paths.lock)
    if fd is None:
        return True
    unlock(fd)
    return False
