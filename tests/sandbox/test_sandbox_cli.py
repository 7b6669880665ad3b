"""`python -m pilothouse.sandbox.argocd` (the `sandbox_cli` Typer app) serves and explains."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
from typer.testing import CliRunner

from pilothouse.sandbox.argocd.cli import sandbox_cli
from pilothouse.sandbox.argocd.state import DEFAULT_TOKEN
from pilothouse.sandbox.worlds import WORLDS


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(*args: str) -> tuple[subprocess.Popen[str], str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "pilothouse.sandbox.argocd", "--port", str(port), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return process, f"http://127.0.0.1:{port}"


def _wait_for(process: subprocess.Popen[str], url: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"{url}/api/version", timeout=1)
            return
        except httpx.TransportError:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)  # a process's port has no event to wait on


def test_serves_the_world_asked_for() -> None:
    world = WORLDS["tidewater"]
    process, url = _serve("--world", world.key)
    try:
        _wait_for(process, url)
        apps = httpx.get(f"{url}/api/v1/applications",
                         headers={"Authorization": f"Bearer {DEFAULT_TOKEN}"}).json()["items"]
        assert len(apps) == world.fleet_apps
        assert all("-" not in app["metadata"]["name"] for app in apps)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
    assert f"world {world.key}: generated fleet of {world.fleet_apps} apps, seed " \
        f"{world.fleet_seed}" in err


def test_rejects_a_world_it_does_not_know() -> None:
    result = CliRunner().invoke(sandbox_cli, ["--world", "atlantis"])
    assert result.exit_code == 2
    assert "choose one of acme, tidewater" in result.output


def test_serves_the_requested_fleet_and_prints_how_to_connect() -> None:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "pilothouse.sandbox.argocd", "--apps", "50", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/api/version", timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        apps = httpx.get(f"{url}/api/v1/applications",
                         headers={"Authorization": f"Bearer {DEFAULT_TOKEN}"}).json()
        assert len(apps["items"]) == 50
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
    assert f"ARGOCD_URL={url}" in err
    assert f"ARGOCD_TOKEN={DEFAULT_TOKEN}" in err


def test_rejects_a_token_the_real_server_would_ignore() -> None:
    result = CliRunner().invoke(sandbox_cli, ["--token", "not-a-jwt"])
    assert result.exit_code == 2
    assert "three dot-separated parts" in result.output
