"""`python -m pilothouse.sandbox.github` (Typer `sandbox_cli`) serves and explains itself."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
from typer.testing import CliRunner

from pilothouse.sandbox.github.cli import sandbox_cli


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serves_and_prints_how_to_connect() -> None:
    port, token = _free_port(), "ghp_cliTestToken1234"
    process = subprocess.Popen(
        [sys.executable, "-m", "pilothouse.sandbox.github", "--port", str(port),
         "--token", token], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/rate_limit", timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        pulls = httpx.get(f"{url}/repos/acme-corp/payments-api/pulls",
                          headers={"Authorization": f"token {token}"})
        assert pulls.status_code == 200 and len(pulls.json()) == 30
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
    assert f"GITHUB_API_URL={url}" in err
    assert f"GITHUB_TOKEN={token}" in err


def test_rejects_a_token_with_spaces() -> None:
    result = CliRunner().invoke(sandbox_cli, ["--token", "two words"])
    assert result.exit_code == 2
    assert "no spaces" in result.output
