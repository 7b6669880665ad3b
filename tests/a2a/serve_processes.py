"""`pilothouse serve` as real processes on 127.0.0.1: start, wait until ready, kill, restart."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import httpx

#: The variables a test process inherits that would change what a served agent does.
_CLEARED = ("PILOTHOUSE_", "ARGOCD_", "GITHUB_", "GH_TOKEN", "OPENAI_", "LLM_", "MAX_CONTEXT")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServeProcess:
    """One `pilothouse serve --agent ...` process, its log in a file."""

    def __init__(self, agents: list[str], env: Mapping[str, str], log: Path,
                 port: int | None = None) -> None:
        self.agents = agents
        self.port = port or free_port()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED)}
        self.env.update(env)
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def agent_url(self, name: str) -> str:
        return f"{self.url}/a2a/{name}"

    def start(self) -> ServeProcess:
        command = [sys.executable, "-m", "pilothouse.interfaces.serve", "--port", str(self.port)]
        for agent in self.agents:
            command += ["--agent", agent]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT)
        return self

    async def ready(self, seconds: float = 120) -> ServeProcess:
        """Wait until the root agent card answers (or fail with the log's tail)."""
        async with httpx.AsyncClient() as http, asyncio.timeout(seconds):
            while True:
                if self.process is not None and self.process.poll() is not None:
                    raise RuntimeError(f"serve {self.agents} exited:\n{self.log_text()[-3000:]}")
                try:
                    if (await http.get(f"{self.url}/.well-known/agent-card.json")).is_success:
                        return self
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.2)

    def kill(self) -> None:
        """SIGKILL: no clean-up, as when a node dies."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""
