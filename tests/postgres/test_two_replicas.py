"""Two supervisor replicas (real `pilothouse serve` processes) on one real PostgreSQL.

A conversation moves between replicas with its whole history; an approval asked on A and
answered on both at once runs the command once (a canary file in the shared workspace); a
replica SIGKILLed mid-turn leaves no orphaned tool call and loses no earlier turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from replicas import ask, decide, events, kinds, new_thread, open_tool_calls, replica

from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

pytestmark = pytest.mark.postgres

CANARY_COMMAND = "echo approved | tee -a canary.txt"
SCRIPT: dict[str, Any] = {"rules": [
    # The supervisor (its only tool: ask_devops).
    {"name": "sup-recovered", "when": {"tools_include": "ask_devops", "last_role": "user",
                                       "any_contains": "interrupted before it returned"},
     "reply": {"content": "Recovered after the restart."}},
    {"name": "sup-remember", "when": {"tools_include": "ask_devops", "last_role": "user",
                                      "last_contains": "remember"},
     "reply": {"content": "Noted: release R-42."}},
    {"name": "sup-canary", "when": {"tools_include": "ask_devops", "last_role": "user",
                                    "last_contains": "canary"},
     "reply": {"tool_calls": [{"name": "ask_devops", "arguments": {
         "question": "Append to the canary file."}}]}},
    {"name": "sup-slow", "when": {"tools_include": "ask_devops", "last_role": "user",
                                  "last_contains": "SLOW"},
     "reply": {"tool_calls": [{"name": "ask_devops", "arguments": {
         "question": "SLOW: write a long report."}}]}},
    {"name": "sup-after", "when": {"tools_include": "ask_devops", "last_role": "tool"},
     "reply": {"content": "DevOps says: {last}"}},
    # The DevOps agent.
    {"name": "dev-canary", "when": {"tools_include": "run_command", "last_role": "user",
                                    "last_contains": "canary"},
     "reply": {"tool_calls": [{"name": "run_command",
                               "arguments": {"command": CANARY_COMMAND}}]}},
    {"name": "dev-slow", "when": {"tools_include": "run_command", "last_role": "user",
                                  "last_contains": "SLOW"},
     "reply": {"content": "working " * 300, "chunk_delay": 0.1}},
    {"name": "dev-after", "when": {"tools_include": "run_command", "last_role": "tool"},
     "reply": {"content": "Ran it: {last}"}},
], "default": {"content": "Hello again."}}


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


async def test_two_replicas_share_conversations_approvals_and_survive_a_kill(
    tmp_path: Path, database_url: str, model: tuple[str, ScriptState],
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    common = {"database_url": database_url, "model_url": model[0], "workspace": workspace}
    a = replica(tmp_path, "a", **common)
    b = replica(tmp_path, "b", **common)
    try:
        await asyncio.gather(a.ready(), b.ready())
        async with httpx.AsyncClient(timeout=120) as http:
            t_move, t_approve, t_kill = [await new_thread(http, a.url) for _ in range(3)]
            # A conversation started on A continues on B with its whole history.
            first = await ask(http, a.url, t_move, "remember: the release is R-42")
            second = await ask(http, b.url, t_move, "anything else?")
            moved = (await http.get(f"{b.url}/conversations/{t_move}")).json()
            listed_on_a = (await http.get(f"{a.url}/conversations")).json()

            # An approval asked on A, answered on A and B at the same moment: it runs once.
            asked = events((await ask(http, a.url, t_approve, "append to the canary")).text)
            ran_before_approval = (workspace / "canary.txt").exists()
            pending = (await http.get(f"{b.url}/conversations/{t_approve}/pending")).json()
            answers = await asyncio.gather(decide(http, a.url, t_approve),
                                           decide(http, b.url, t_approve))
            canary = (workspace / "canary.txt").read_text()
            after = (await http.get(f"{a.url}/conversations/{t_approve}")).json()

            # A is killed in the middle of a turn; the conversation goes on on B.
            await ask(http, a.url, t_kill, "remember: the release is R-42")
            slow = asyncio.create_task(ask(http, a.url, t_kill, "SLOW report please"))
            state = model[1]
            await asyncio.to_thread(state.wait_for, "dev-slow", len(state.hits("dev-slow")) + 1)
            a.kill()
            with pytest.raises(httpx.TransportError):
                await slow
            resumed = events((await ask(http, b.url, t_kill, "are you there?")).text)
            survived = (await http.get(f"{b.url}/conversations/{t_kill}")).json()
    finally:
        a.stop()
        b.stop()

    assert first.status_code == second.status_code == 200
    texts = [m["text"] for m in moved["messages"]]
    assert texts == ["remember: the release is R-42", "Noted: release R-42.",
                     "anything else?", "Hello again."]
    assert t_move in {c["id"] for c in listed_on_a["conversations"]}

    assert "interrupt" in kinds(asked) and not ran_before_approval
    assert len(pending["pending"]) == 1
    assert sorted(r.status_code for r in answers) == [200, 409], [r.text for r in answers]
    done = next(r for r in answers if r.status_code == 200)
    assert "tool_result" in kinds(events(done.text)) or "answer" in kinds(events(done.text))
    assert canary == "approved\n"  # not twice, not zero
    assert after["pending"] == [] and open_tool_calls(after["messages"]) == []

    messages = survived["messages"]
    assert "error" not in kinds(resumed) and "answer" in kinds(resumed), resumed
    assert open_tool_calls(messages) == [], messages
    interrupted = [m for m in messages if m["role"] == "tool"
                   and "interrupted before it returned" in m["text"]]
    if interrupted:  # the killed turn's call was stored: repaired, and the model saw it
        assert [e["text"] for e in resumed if e["kind"] == "answer"] == [
            "Recovered after the restart."]
    assert [m["text"] for m in messages if m["role"] == "user"] == [
        "remember: the release is R-42", "SLOW report please", "are you there?"]
    assert "Noted: release R-42." in [m["text"] for m in messages]
