"""Harness for the shell tests: a workspace, a canary outside it, and a sandboxed MCP server.

The end-to-end server runs inside bubblewrap (`pilothouse.testing.jail`). Hostile commands aim
at the canary, never at the real machine, so a policy hole shows up as a changed canary
instead of damage.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal
from mcp import ClientSession, StdioServerParameters, stdio_client

from pilothouse.tools.shell import command_evidence, sign_approval

APPROVAL_SECRET = "test-approval-secret"
FAKE_SECRET = "sekrit"
GITHUB_TOKEN_LOOKALIKE = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


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
