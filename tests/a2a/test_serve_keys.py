"""`pilothouse serve` as a real process: weak keys stop it at start, and its rate limits hold
on every door (REST and A2A share one count per address, one quota per identity).

The finding: `PILOTHOUSE_API_KEYS=a` served 0.0.0.0 and `Bearer a` worked; `alice=` became the
literal key `alice=`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from serve_processes import ServeProcess, free_port

from pilothouse.testing.scripted_server import running_scripted_server

ALICE = "alice-key-9b3f7d1a5c0e4b8f2d6a1c"


@pytest.mark.parametrize(("keys", "said"), [
    ("a", "Entry 1 of PILOTHOUSE_API_KEYS is a key of 1 characters; at least 32 are required."),
    ("alice=", "Entry 1 of PILOTHOUSE_API_KEYS has an empty key."),
    (f"ci={ALICE},alice=short-but-named", "Entry 2 of PILOTHOUSE_API_KEYS is a key of 15"),
])
def test_serve_refuses_an_empty_or_short_key_at_start(tmp_path: Path, keys: str,
                                                      said: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PILOTHOUSE_")}
    env.update(PILOTHOUSE_HOME=str(tmp_path), PILOTHOUSE_API_KEYS=keys, COLUMNS="80")
    done = subprocess.run(
        [sys.executable, "-m", "pilothouse", "serve", "--host", "0.0.0.0", "--port",
         str(free_port())], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()  # one line, whatever the terminal's width
    assert said in line and "What to do:" in line and "`pilothouse keys new`" in line
    assert "short-but-named" not in line and ALICE not in line and "Traceback" not in line


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    root = tmp_path_factory.mktemp("keys")
    with running_scripted_server({"rules": [], "default": {"content": "ok"}}) as (url, _):
        env = {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": url,
               "MAX_CONTEXT_TOKENS": "32000", "PILOTHOUSE_HOME": str(root / "home"),
               "PILOTHOUSE_API_KEYS": f"alice={ALICE}",
               "PILOTHOUSE_AUTH_FAILURES_PER_MINUTE": "5",
               "PILOTHOUSE_NEW_CONVERSATIONS_PER_MINUTE": "2"}
        process = ServeProcess(["supervisor"], env, root / "serve.log").start()
        try:
            asyncio.run(process.ready())
            yield process
        finally:
            process.stop()
    assert ALICE not in process.log_text()


async def test_the_limits_hold_on_every_door_of_a_serve_process(served: ServeProcess) -> None:
    alice = {"Authorization": f"Bearer {ALICE}"}
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as http:
        made = [await http.post("/conversations", json={}, headers=alice) for _ in range(3)]
        assert [m.status_code for m in made] == [201, 201, 429]
        assert made[-1].headers["retry-after"] == "30"  # PILOTHOUSE_NEW_CONVERSATIONS_...=2

        # Wrong keys on the A2A door: five are compared, then the address waits 60/5 s.
        wrong = {"Authorization": "Bearer " + "wrong-key-" * 4, "A2A-Version": "1.0"}
        tried = [await http.post("/a2a/supervisor/", json=rpc, headers=wrong)
                 for _ in range(7)]
        assert [t.status_code for t in tried] == [401] * 5 + [429] * 2
        assert tried[-1].headers["retry-after"] == "12"
        assert set(tried[-1].json()) == {"error", "suggestion"}
        # The same count on the REST door: even alice's own key waits from this address.
        assert (await http.get("/conversations", headers=alice)).status_code == 429
        assert (await http.get("/healthz")).status_code == 200
