"""A throwaway PostgreSQL cluster on 127.0.0.1, for the tests and the benchmark.

`initdb` into a temporary directory, `pg_ctl` on a free port (and a Unix socket in that
directory), password authentication over TCP so the URL carries a secret the code must never
print. PostgreSQL refuses to run as root, and CI runs as root: then the cluster belongs to an
unprivileged user (`nobody`) and every server command runs as that user through `setpriv`.
Nothing is mocked: missing binaries are an error that says how to install them.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Enough for two replicas (each: checkpointer, registry and task-store pools, a lock session),
#: an agent process and the benchmark's concurrency, with room to spare.
MAX_CONNECTIONS = 400
INSTALL_HINT = ("PostgreSQL's server binaries (initdb, pg_ctl) are missing: install Debian's "
                "`postgresql` package (scripts/test.sh does) or put them on PATH.")
SUPERUSER = "pilothouse"


class PostgresMissing(RuntimeError):
    """initdb / pg_ctl cannot be found."""


def server_binaries() -> Path:
    """The directory holding initdb and pg_ctl: on PATH, else Debian's versioned directory."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "initdb").exists() and Path(candidate, "pg_ctl").exists():
            return Path(candidate)
    raise PostgresMissing(INSTALL_HINT)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """One cluster: `start()`, `stop()` (as an outage would) and `start()` again, `remove()`."""

    def __init__(self, root: Path, *, port: int | None = None) -> None:
        self.bin = server_binaries()
        self.root = root
        self.data = root / "data"
        self.log = root / "server.log"
        self.port = port or _free_port()
        self.password = secrets.token_urlsafe(16)
        # Root may not run the server: hand the directory to an unprivileged account.
        self._user = pwd.getpwnam("nobody") if os.geteuid() == 0 else None

    def url(self, database: str = "postgres") -> str:
        return (f"postgresql://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/{database}")

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        prefix: list[str] = []
        if self._user is not None:
            prefix = ["setpriv", f"--reuid={self._user.pw_uid}", f"--regid={self._user.pw_gid}",
                      "--clear-groups", "--"]
        done = subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=120,
                              cwd=self.root, env={**os.environ, "LC_ALL": "C"})
        if check and done.returncode != 0:
            tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{command[0]} failed ({done.returncode}): "
                               f"{done.stderr[-2000:]}\n{tail}")
        return done

    def init(self) -> PostgresCluster:
        self.root.mkdir(parents=True, exist_ok=True)
        password_file = self.root / "password"
        password_file.write_text(self.password + "\n")
        if self._user is not None:
            for path in (self.root, password_file):
                os.chown(path, self._user.pw_uid, self._user.pw_gid)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
                  f"--pwfile={password_file}", "--auth-host=scram-sha-256",
                  "--auth-local=trust", "-E", "UTF8", "--no-sync")
        password_file.unlink()
        return self

    def start(self) -> PostgresCluster:
        options = (f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off "
                   f"-c max_connections={MAX_CONNECTIONS} -c shared_buffers=32MB")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w",
                  "-t", "60", "-o", options, "start")
        return self

    def stop(self) -> None:
        """Stop the server now (fast shutdown: sessions are disconnected)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop",
                  check=False)

    def running(self) -> bool:
        return self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "status",
                         check=False).returncode == 0

    def create_database(self, name: str) -> str:
        """Create database `name`; return its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type,unused-ignore]
        return self.url(name)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def running_cluster(port: int | None = None) -> Iterator[PostgresCluster]:
    """A started cluster in a fresh temporary directory, stopped and removed on exit."""
    root = Path(tempfile.mkdtemp(prefix="pilothouse-pg-"))
    cluster = PostgresCluster(root, port=port)
    try:
        cluster.init().start()
        yield cluster
    finally:
        cluster.remove()
