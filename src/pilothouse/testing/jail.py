"""Bubblewrap for tests of hostile input: the code under test runs jailed.

The whole filesystem read-only, only the workspace and a canary directory writable, a fresh
/tmp, no network, its own PID namespace, no capabilities, a process limit. Hostile commands in
tests aim at the canary, never at the real machine, so a guard that fails shows up as a
changed canary instead of damage. Used by the shell server's tests and by the agent tests that
send a hostile request through a whole agent.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mcp import StdioServerParameters

#: Tasks the sandbox may add on top of what the user already runs (RLIMIT_NPROC is per user).
SANDBOX_EXTRA_TASKS = 2048


class JailUnavailable(RuntimeError):
    """bubblewrap is missing or cannot build its sandbox on this machine."""


def bwrap_argv(workspace: Path, canary_dir: Path, command: list[str]) -> list[str]:
    """The bubblewrap command line that runs `command` jailed.

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


def jailed(params: StdioServerParameters, workspace: Path,
           canary_dir: Path) -> StdioServerParameters:
    """`params` (a stdio MCP server) launched inside the jail, under a process limit."""
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        raise JailUnavailable("prlimit (util-linux) is needed to cap the jail's processes")
    argv = bwrap_argv(workspace, canary_dir, [params.command, *params.args])
    return params.model_copy(update={
        "command": prlimit, "args": [f"--nproc={process_limit()}", "--", *argv]})


def _code_under_tmp() -> list[str]:
    """The checkout and the interpreter's environment, where they sit under /tmp."""
    paths = {Path(__file__).resolve().parents[3], Path(sys.prefix).resolve()}
    return sorted(str(p) for p in paths if p.is_relative_to("/tmp"))


@functools.cache
def _bwrap_base() -> tuple[str, ...]:
    """bwrap, plus --unshare-user where namespaces need it (as root in a container they do not)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise JailUnavailable("bubblewrap (bwrap) is not installed; the jailed tests need it: "
                              "apt-get install -y bubblewrap")
    errors = []
    for extra in ((), ("--unshare-user",)):
        probe = [bwrap, *extra, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                 "--unshare-pid", "--unshare-net", "--cap-drop", "ALL", "true"]
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
        if done.returncode == 0:
            return (bwrap, *extra)
        errors.append(f"{' '.join(extra) or 'as is'}: {done.stderr.strip()}")
    raise JailUnavailable("bubblewrap cannot create its sandbox here: " + "; ".join(errors))


def process_limit() -> int:
    """The user's current task count plus headroom, for `prlimit --nproc`."""
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
