"""Harness for the shell tests: a workspace, a canary outside it, and a sandboxed MCP server.

The end-to-end server runs inside bubblewrap: the whole filesystem read-only, only the
workspace and the canary directory writable, fresh /tmp, no network, own PID namespace, no
capabilities, a process limit. Hostile commands aim at the canary, never at the real machine,
so a policy hole shows up as a changed canary instead of damage.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal
from mcp import ClientSession, StdioServerParameters, stdio_client

from pilothouse.tools.shell import command_evidence, sign_approval

APPROVAL_SECRET = "test-approval-secret"
FAKE_SECRET = "sekrit"
GITHUB_TOKEN_LOOKALIKE = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
#: Tasks the sandbox may add on top of what root already runs (RLIMIT_NPROC is per user).
SANDBOX_EXTRA_TASKS = 2048


def bwrap_argv(workspace: Path, canary_dir: Path, command: list[str]) -> list[str]:
    """The bubblewrap command line the server runs under.

    `--tmpfs /tmp` comes before the binds because pytest's tmp dirs live under /tmp: binding
    first and then mounting a tmpfs over /tmp would hide them. A checkout (or its venv) that
    itself lives under /tmp, as CI clones may, is bound back read-only so the server can start.
    """
    code = [arg for path in _code_under_tmp() for arg in ("--ro-bind", path, path)]
    return [
        *_bwrap_base(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--tmpfs", "/tmp", *code, "--bind", str(workspace), str(workspace),
        "--bind", str(canary_dir), str(canary_dir), "--unshare-pid", "--unshare-ipc",
        "--unshare-net", "--die-with-parent", "--cap-drop", "ALL", "--new-session",
        "--chdir", str(workspace), "--", *command,
    ]  # fmt: skip


def _code_under_tmp() -> list[str]:
    """The checkout and the interpreter's environment, where they sit under /tmp."""
    paths = {Path(__file__).resolve().parents[3], Path(sys.prefix).resolve()}
    return sorted(str(p) for p in paths if p.is_relative_to("/tmp"))


@functools.cache
def _bwrap_base() -> tuple[str, ...]:
    """bwrap, plus --unshare-user where namespaces need it (as root in a container they do not)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.fail(
            "bubblewrap (bwrap) is not installed; the sandboxed shell tests need it: "
            "apt-get install -y bubblewrap"
        )
    errors = []
    for extra in ((), ("--unshare-user",)):
        probe = [bwrap, *extra, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                 "--unshare-pid", "--unshare-net", "--cap-drop", "ALL", "true"]
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
        if done.returncode == 0:
            return (bwrap, *extra)
        errors.append(f"{' '.join(extra) or 'as is'}: {done.stderr.strip()}")
    pytest.fail("bubblewrap cannot create its sandbox here: " + "; ".join(errors))


def process_limit() -> int:
    """Root's current task count plus headroom, for `prlimit --nproc`."""
    tasks = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            if fields.get("Uid", "").split()[:1] == [str(os.getuid())]:
                tasks += int(fields.get("Threads", "1"))
    return tasks + SANDBOX_EXTRA_TASKS


def git(workspace: Path, *args: str) -> str:
    """Run git outside the sandbox to prepare fixtures and inspect results."""
    done = subprocess.run(
        ["git", *args], cwd=workspace, check=True, capture_output=True, text=True, timeout=30
    )
    return done.stdout


def make_workspace(root: Path, canary: Path) -> None:
    """A git repository with a bare remote, files for the hostile table, and bait."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "Test")
    (root / "README.md").write_text("hello world\nit's a readme\n")
    (root / "evil.sh").write_text(f"rm -rf {canary.parent}/*\n")
    (root / "list.txt").write_text(f"{canary}\n")
    (root / "leak.txt").write_text(f"password is {FAKE_SECRET}\ntoken {GITHUB_TOKEN_LOOKALIKE}\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    git(root, "init", "-q", "--bare", "remote.git")
    git(root, "remote", "add", "origin", "./remote.git")
    (root / "link_to_canary").symlink_to(canary)
    (root / "locked.txt").write_text("nobody may read this\n")
    (root / "locked.txt").chmod(0)
    # File names that become tar options once `*` expands.
    (root / "--checkpoint=1").write_text("")
    (root / "--checkpoint-action=exec=sh evil.sh").write_text("")


@dataclass
class Sandbox:
    """A running sandboxed server and the paths the tests watch."""

    workspace: Path
    canary_dir: Path
    canary: Path
    portal: BlockingPortal
    session: ClientSession
    log: Path

    def call(self, command: str, **arguments: Any) -> dict[str, Any]:
        """Call run_command through the real MCP client and return its structured result."""
        result = self.portal.call(
            self.session.call_tool, "run_command", {"command": command, **arguments}
        )
        assert result.structured_content is not None, result
        return dict(result.structured_content)

    def approve(self, command: str) -> str:
        """The token a person's approval of `command`, as it is now, produces."""
        evidence = command_evidence(command, workspace=self.workspace).bound()
        return sign_approval(APPROVAL_SECRET, command, evidence=evidence)

    def canary_state(self) -> dict[str, str]:
        """Every file under the canary dir with a hash of its content and mode."""
        state: dict[str, str] = {}
        for path in sorted(self.canary_dir.rglob("*")):
            info = path.lstat()
            body = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            state[str(path)] = f"{oct(info.st_mode)}:{hashlib.sha256(body).hexdigest()}"
        return state


@asynccontextmanager
async def client(params: StdioServerParameters, errlog: Any) -> AsyncIterator[ClientSession]:
    """An initialized MCP session with the server `params` launches."""
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
