"""`python -m pilothouse.sandbox.github` (Typer `sandbox_cli`) serves and explains itself."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
from typer.testing import CliRunner

from pilothouse.sandbox.github.cli import sandbox_cli
from pilothouse.sandbox.worlds import WORLDS


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


def test_serves_the_world_asked_for() -> None:
    world = WORLDS["tidewater"]
    port, token = _free_port(), "ghp_cliTestToken1234"
    process = subprocess.Popen(
        [sys.executable, "-m", "pilothouse.sandbox.github", "--port", str(port),
         "--token", token, "--world", world.key],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/rate_limit", timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)  # a process's port has no event to wait on
        headers = {"Authorization": f"token {token}"}
        repos = httpx.get(f"{url}/user/repos", headers=headers).json()
        assert {r["full_name"] for r in repos} == {f"{world.org}/{r.name}" for r in world.repos}
        assert httpx.get(f"{url}/repos/acme-corp/payments-api/pulls",
                         headers=headers).status_code == 404
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
    assert f"world {world.key}, organisation {world.org}" in err


def test_rejects_a_world_it_does_not_know() -> None:
    result = CliRunner().invoke(sandbox_cli, ["--world", "atlantis"])
    assert result.exit_code == 2 and "choose one of acme, tidewater" in result.output
