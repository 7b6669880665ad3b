"""Fixtures for the shell tests; the sandbox harness itself lives in `shell_sandbox.py`."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from anyio.from_thread import start_blocking_portal
from mcp import StdioServerParameters
from shell_sandbox import (
    APPROVAL_SECRET,
    FAKE_SECRET,
    Sandbox,
    client,
    make_workspace,
)

from pilothouse.testing.jail import jailed


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """The shell MCP server, launched by the real stdio client inside bubblewrap."""
    workspace = tmp_path_factory.mktemp("workspace")
    canary_dir = tmp_path_factory.mktemp("canary")
    canary = canary_dir / "canary.txt"
    canary.write_text("the canary is alive\n")
    make_workspace(workspace, canary)
    log = tmp_path_factory.mktemp("logs") / "server.log"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pilothouse.tools.shell", "--workspace", str(workspace)],
        env={
            "FAKE_TOKEN": FAKE_SECRET,
            "PILOTHOUSE_APPROVAL_SECRET": APPROVAL_SECRET,
            "PATH": os.environ.get("PATH", os.defpath),
        },
    )
    params = jailed(server, workspace, canary_dir)
    with (
        log.open("w") as errlog,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(client(params, errlog)) as session,
    ):
        yield Sandbox(workspace, canary_dir, canary, portal, session, log)
