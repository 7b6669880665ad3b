"""Identity A cannot make the code index serve identity B a file from outside the workspace.

The red-team finding, replayed against a real `serve --agent devops` process (its shell and RAG
tool servers, SQLite state, A2A over HTTP with two keys): A asks the DevOps agent to index a
canary folder beside the workspace, naming it (so argument grounding keeps the path); the
index refuses, with an error that says what to do. B then asks about the canary's secret and
gets only the workspace's code. The model is the scripted OpenAI-compatible server.

The same run checks the state the server wrote: every file under PILOTHOUSE_HOME is 0600 and
every folder 0700, and a conversation list a looser setup left 0644 was tightened at start-up.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from a2a.types.a2a_pb2 import StreamResponse, TaskState
from a2a_harness import a2a_client, final_state, stream
from serve_processes import ServeProcess

from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

pytestmark = pytest.mark.timeout(300)

KEYS = {"alice": "alice-" + "a1" * 20, "bob": "bob-" + "b2" * 20}
SECRET = "CANARY-5b1e0c77-never-served"
ASK_INDEX = "Please index {canary} so we can search it."
ASK_SECRET = "Where is vault_password defined, and what does it return?"


def script(canary: Path) -> dict[str, Any]:
    return {"rules": [
        {"name": "index", "when": {"tools_include": "index_directory", "last_role": "user",
                                   "last_contains": "please index"},
         "reply": {"tool_calls": [{"name": "index_directory",
                                   "arguments": {"path": str(canary)}}]}},
        {"name": "indexed", "when": {"last_role": "tool", "last_tool": "index_directory"},
         "reply": {"content": "Index result: {tool_results}"}},
        {"name": "retrieve", "when": {"tools_include": "retrieve_code_context",
                                      "last_role": "user", "last_contains": "vault_password"},
         "reply": {"tool_calls": [{"name": "retrieve_code_context",
                                   "arguments": {"query": "vault_password return", "k": 10}}]}},
        {"name": "retrieved", "when": {"last_role": "tool",
                                       "last_tool": "retrieve_code_context"},
         "reply": {"content": "Found: {tool_results}"}},
    ], "default": {"content": "No scripted answer."}}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A workspace, a canary folder beside it, and a home a looser setup left readable."""
    root = tmp_path_factory.mktemp("jail")
    workspace, canary, home = root / "workspace", root / "canary", root / "home"
    workspace.mkdir()
    (workspace / "billing.py").write_text(
        "def invoice_total(lines):\n    return sum(line['amount'] for line in lines)\n")
    canary.mkdir()
    (canary / "secret.txt").write_text(f"def vault_password():\n    return '{SECRET}'\n")
    (home / "state").mkdir(parents=True)
    listing = home / "state" / "conversations.sqlite"
    listing.write_text("")  # an empty SQLite database
    for path, mode in ((home, 0o755), (home / "state", 0o755), (listing, 0o644)):
        path.chmod(mode)
    return {"workspace": workspace, "canary": canary, "home": home, "root": root}


@pytest.fixture(scope="module")
def model(world: dict[str, Path]) -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(script(world["canary"])) as served:
        yield served


@pytest.fixture(scope="module")
def devops(world: dict[str, Path], model: tuple[str, ScriptState]) -> Iterator[ServeProcess]:
    env = {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": model[0],
           "MAX_CONTEXT_TOKENS": "32000", "PILOTHOUSE_LOG_LEVEL": "INFO",
           "PILOTHOUSE_HOME": str(world["home"]), "PILOTHOUSE_WORKSPACE": str(world["workspace"]),
           "PILOTHOUSE_API_KEYS": ",".join(f"{n}={k}" for n, k in KEYS.items())}
    process = ServeProcess(["devops"], env, world["root"] / "devops.log").start()
    try:
        asyncio.run(process.ready(240))
        yield process
    finally:
        process.stop()
    assert not [k for k in KEYS.values() if k in process.log_text()]


def received(events: list[StreamResponse]) -> str:
    """Everything a caller was sent: status messages, artifacts, the task."""
    return "\n".join(str(e) for e in events)


def modes(home: Path) -> dict[str, str]:
    found = {str(home): stat.S_IMODE(home.stat().st_mode)}
    for current, dirs, files in os.walk(home):
        for name in (*dirs, *files):
            found[str(Path(current) / name)] = stat.S_IMODE((Path(current) / name).lstat().st_mode)
    return {p: f"{m:04o}" for p, m in found.items()}


async def test_a_cannot_index_outside_the_workspace_and_b_never_gets_the_secret(
    devops: ServeProcess, world: dict[str, Path], model: tuple[str, ScriptState],
) -> None:
    canary = world["canary"]
    url = devops.agent_url("devops")
    async with a2a_client(url, KEYS["alice"]) as alice:
        asked = await stream(alice, ASK_INDEX.format(canary=canary))
    async with a2a_client(url, KEYS["bob"]) as bob:
        answered = await stream(bob, ASK_SECRET)

    assert model[1].hits("index"), [r.rule for r in model[1].requests]
    refused = received(asked)
    assert final_state(asked) == TaskState.TASK_STATE_COMPLETED, refused
    assert "is outside the workspace" in refused
    assert "PILOTHOUSE_WORKSPACE=" in refused  # what to do instead

    assert model[1].hits("retrieve")
    answer = received(answered)
    assert final_state(answered) == TaskState.TASK_STATE_COMPLETED, answer
    assert "invoice_total" in answer  # B's retrieval ran, over the workspace
    assert SECRET not in refused + answer
    # Nor did the secret reach the model in either conversation.
    assert not [r.rule for r in model[1].requests if SECRET in str(r.messages)]


def test_state_under_the_home_is_owner_only_and_a_loose_file_was_tightened(
    devops: ServeProcess, world: dict[str, Path],
) -> None:
    home = world["home"]
    now = modes(home)  # while the server runs: the SQLite -wal and -shm files exist too
    assert any(p.endswith("-wal") for p in now) and any("/rag/" in p for p in now), now
    loose = {p: m for p, m in now.items()
             if m != ("0700" if Path(p).is_dir() else "0600") and not Path(p).is_symlink()}
    assert loose == {}
    assert now[str(home)] == now[str(home / "state")] == "0700"
    log = devops.log_text()
    assert f"{home / 'state' / 'conversations.sqlite'} 0644 -> 0600" in log
