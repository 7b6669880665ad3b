"""`pilothouse serve` at start-up, as real processes: a busy port is one line and exit 2 (the
Argo CD sandbox no longer defaults to serve's port), and an agent that is not started by
default says why instead of being missing silently.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import typer

from pilothouse.config import Settings
from pilothouse.sandbox.argocd.cli import sandbox_cli
from pilothouse.testing.scripted_server import running_scripted_server

_CLEARED = ("PILOTHOUSE_", "ARGOCD_", "GITHUB_", "GH_TOKEN", "OPENAI_", "LLM_", "MAX_CONTEXT")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(home: Path, **env: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED)}
    clean.update({"PILOTHOUSE_HOME": str(home), **env})
    return clean


def wait_for(check: Callable[[], bool], what: str, process: subprocess.Popen[bytes], log: Path,
             seconds: float = 180) -> None:
    """Poll until `check()` is true; fail with the log when the process exits first."""
    deadline = time.monotonic() + seconds
    while not check():
        if process.poll() is not None:
            pytest.fail(f"exited before {what}:\n{log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {seconds} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    with running_scripted_server({"rules": [], "default": {"content": "ok"}}) as (url, _):
        yield url


def test_the_argocd_sandbox_and_serve_do_not_default_to_the_same_port() -> None:
    command = typer.main.get_command(sandbox_cli)
    sandbox_port = next(p.default for p in command.params if p.name == "port")
    assert sandbox_port != Settings.from_env({}).api_port


def test_serve_on_a_port_the_sandbox_holds_is_one_line_and_exit_2(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "sandbox.log"
    with log.open("wb") as out:
        sandbox = subprocess.Popen([sys.executable, "-m", "pilothouse", "sandbox", "argocd",
                                    "--apps", "5", "--port", str(port)],
                                   env=environment(tmp_path), stdout=out, stderr=out)
    try:
        def listening() -> bool:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0

        wait_for(listening, "the sandbox listening", sandbox, log)
        done = subprocess.run([sys.executable, "-m", "pilothouse", "serve", "--port", str(port)],
                              env=environment(tmp_path), capture_output=True, text=True,
                              timeout=120, check=False)
    finally:
        stop(sandbox)

    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert f"Port {port} on 127.0.0.1 is already in use" in lines[0]
    assert "What to do:" in lines[0] and "--port" in lines[0]


def serve_until_ready(tmp_path: Path, env: dict[str, str]) -> str:
    """Start `pilothouse serve`, wait for its start-up lines, stop it; return its stderr."""
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "pilothouse", "serve", "--port",
                                    str(free_port())], env=env, stdout=out, stderr=out)
    try:
        wait_for(lambda: "REST API and web UI at" in log.read_text(), "the start-up lines",
                 process, log)
    finally:
        stop(process)
    return " ".join(log.read_text().split())


def test_serve_says_why_the_devops_agent_did_not_start(tmp_path: Path, model_url: str) -> None:
    env = environment(tmp_path, PILOTHOUSE_MODEL="openai-compatible:scripted",
                      OPENAI_BASE_URL=model_url, MAX_CONTEXT_TOKENS="32000")

    text = serve_until_ready(tmp_path, env)

    assert "devops not started: PILOTHOUSE_WORKSPACE is not set" in text
    assert "set PILOTHOUSE_WORKSPACE to the repository" in text
    assert "argocd not started: ARGOCD_URL is not set" in text


def test_serve_starts_the_devops_agent_on_the_workspace(tmp_path: Path, model_url: str) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "Makefile").write_text("test:\n\techo ok\n")
    env = environment(tmp_path, PILOTHOUSE_MODEL="openai-compatible:scripted",
                      OPENAI_BASE_URL=model_url, MAX_CONTEXT_TOKENS="32000",
                      PILOTHOUSE_WORKSPACE=str(workspace))

    text = serve_until_ready(tmp_path, env)

    assert "devops A2A at" in text and "devops not started" not in text
