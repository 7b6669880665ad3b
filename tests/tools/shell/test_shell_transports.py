"""The shell server as an agent launches it: stdio from the connection helper, and HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
from mcp import Client

from pilothouse.tools.shell import shell_stdio_parameters, sign_approval


async def test_stdio_launch_shares_the_approval_secret(tmp_path: Path) -> None:
    params = shell_stdio_parameters(tmp_path, approval_secret="agent-secret",
                                    env={"PATH": "/usr/bin:/bin", "GITHUB_TOKEN": "ghp_x"})
    assert "GITHUB_TOKEN" not in (params.env or {})
    async with Client(params) as client:
        asked = await client.call_tool("run_command", {"command": "touch made.txt"})
        token = sign_approval("agent-secret", "touch made.txt")
        done = await client.call_tool("run_command",
                                      {"command": "touch made.txt", "approval_token": token})
        decision = await client.call_tool("check_command", {"command": "sudo ls"})
    assert asked.structured_content and asked.structured_content["status"] == "needs_approval"
    assert done.structured_content and done.structured_content["status"] == "ok"
    assert (tmp_path / "made.txt").exists()
    assert decision.structured_content and decision.structured_content["action"] == "deny"


def test_the_stdio_launch_passes_options_and_only_safe_variables(tmp_path: Path) -> None:
    launch = shell_stdio_parameters(tmp_path, approval_secret="s", policy_file="p.toml",
                                    timeout_seconds=12,
                                    env={"PATH": "/bin", "HOME": "/h", "AWS_SECRET_KEY": "x"})
    assert launch.command == sys.executable
    assert launch.args == ["-m", "pilothouse.tools.shell", "--workspace", str(tmp_path),
                           "--policy-file", "p.toml", "--timeout", "12"]
    assert launch.env == {"PATH": "/bin", "HOME": "/h", "PILOTHOUSE_APPROVAL_SECRET": "s"}


async def test_streamable_http_transport(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "pilothouse.tools.shell", "--workspace", str(tmp_path),
               "--transport", "http", "--port", str(port)]
    url = f"http://127.0.0.1:{port}/mcp"
    async with await anyio.open_process(command, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL) as process:
        try:
            async with httpx.AsyncClient() as http:
                with anyio.fail_after(30):
                    while True:
                        try:
                            await http.get(url, timeout=1)
                            break
                        except httpx.TransportError:
                            assert process.returncode is None
                            await anyio.sleep(0.1)
            async with Client(url) as client:
                result = await client.call_tool("run_command", {"command": "echo hi | tr a-z A-Z"})
            assert result.structured_content and result.structured_content["stdout"] == "HI\n"
        finally:
            process.terminate()
