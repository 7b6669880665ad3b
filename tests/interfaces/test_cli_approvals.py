"""Approvals on the CLI, answered wherever the conversation is, with the commands it prints.

The DevOps agent runs `touch approved.txt` in a temporary workspace through the real shell
server; the policy asks a person first. Each hint the CLI prints is run as printed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import SCRIPT, SYNCED_APP, json_lines, pilothouse, printed_command

from pilothouse.sandbox.argocd.server import running_sandbox
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

ASK = "Please touch the file."


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def _run(tmp_path: Path, model: tuple[str, ScriptState], workspace: Path, *args: str,
         stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return pilothouse(tmp_path / "home", model[0], *args, stdin=stdin,
                      PILOTHOUSE_WORKSPACE=str(workspace))


def _waiting(tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
             *agent: str) -> str:
    """Ask for the command; returns the stderr of the run that now waits for approval."""
    done = _run(tmp_path, model, workspace, "ask", *agent, "--thread", "ops-1", ASK)
    assert done.returncode == 3, done.stderr
    assert not (workspace / "approved.txt").exists()
    return done.stderr


def _rejections_seen(model: tuple[str, ScriptState], since: int, reason: str) -> bool:
    """Whether the DevOps agent's model was told the person's reason."""
    return any(reason in str(m.get("content")) for r in model[1].requests[since:]
               for m in r.messages if m.get("role") == "tool")


def test_the_approval_reads_as_the_command_and_the_printed_approve_runs_it(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    stderr = _waiting(tmp_path, model, workspace)

    # The sub-agent's real call, where it runs and why, never the supervisor's dict.
    assert "The devops agent asks (through the supervisor):" in stderr
    assert "command: touch approved.txt" in stderr
    assert f"working directory: {workspace}" in stderr
    assert 'call: run_command(command="touch approved.txt")' in stderr
    assert "{'" not in stderr and "ask_devops(" in stderr  # the routing line, not the approval
    done = _run(tmp_path, model, workspace, *printed_command(stderr, "approve:"))
    assert done.returncode == 0, done.stderr
    assert (workspace / "approved.txt").exists()
    assert "touch approved.txt" in done.stdout  # the command's result reached the answer


def test_the_default_supervisor_runs_the_devops_agent_where_the_command_was_run(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    done = pilothouse(tmp_path / "home", model[0], "ask", ASK, cwd=workspace)

    assert done.returncode == 3, done.stderr
    assert f"working directory: {workspace}" in done.stderr


def test_the_printed_reject_passes_the_reason_and_is_not_a_failure(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    stderr = _waiting(tmp_path, model, workspace)
    since = len(model[1].requests)

    command = printed_command(stderr, "reject:")
    assert command[-2:] == ["--message", "why not"]
    done = _run(tmp_path, model, workspace, *command)

    assert done.returncode == 0, done.stderr
    assert not (workspace / "approved.txt").exists()
    assert _rejections_seen(model, since, "why not")


def test_a_rejected_call_of_a_specialist_is_not_counted_as_failed_tools(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    _waiting(tmp_path, model, workspace, "--agent", "devops")

    done = _run(tmp_path, model, workspace, "ask", "--thread", "ops-1", "--reject")

    assert done.returncode == 0, done.stderr
    assert not (workspace / "approved.txt").exists()


def test_a_question_to_a_waiting_thread_is_not_asked_and_the_approval_is_shown(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    _waiting(tmp_path, model, workspace)
    asked = len(model[1].requests)

    done = _run(tmp_path, model, workspace, "ask", "--thread", "ops-1", "Touch another one.")

    assert done.returncode == 3
    assert len(model[1].requests) == asked
    assert "Thread ops-1 is waiting for your approval" in done.stderr
    assert "command: touch approved.txt" in done.stderr
    assert printed_command(done.stderr, "approve:") == ["ask", "--thread", "ops-1", "--approve"]


def test_chat_shows_the_pending_approval_first_and_takes_yes(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    stderr = _waiting(tmp_path, model, workspace)

    done = _run(tmp_path, model, workspace, *printed_command(stderr, "or answer it in a chat:"),
                stdin="y\n")

    assert done.returncode == 0, done.stderr
    assert (workspace / "approved.txt").exists()
    assert done.stderr.index("Approval needed:") < done.stderr.index("you> ")
    assert "touch approved.txt" in done.stdout  # the command's result reached the answer


def test_chat_asks_about_an_approval_as_it_arises(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    done = _run(tmp_path, model, workspace, "chat", stdin=f"{ASK}\ny\n/exit\n")

    assert done.returncode == 0, done.stderr
    assert (workspace / "approved.txt").exists()
    assert done.stderr.count("command: touch approved.txt") == 1  # shown once, then asked


def test_chat_takes_a_typed_reason_as_a_rejection(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    _waiting(tmp_path, model, workspace)
    since = len(model[1].requests)

    done = _run(tmp_path, model, workspace, "chat", "--thread", "ops-1",
                stdin="not on a Friday\n/exit\n")

    assert done.returncode == 0, done.stderr
    assert not (workspace / "approved.txt").exists()
    assert _rejections_seen(model, since, "not on a Friday")


def test_a_sync_approval_shows_the_target_and_its_dry_run(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    with running_sandbox(apps=5) as argocd:
        env = {"ARGOCD_URL": argocd.url, "ARGOCD_TOKEN": argocd.token,
               "ARGOCD_READ_ONLY": "false"}
        done = pilothouse(tmp_path / "home", model[0], "ask", "--agent", "argocd",
                          f"Please sync {SYNCED_APP} now.", **env)
        assert done.returncode == 3, done.stderr
        assert f"Sync application '{SYNCED_APP}' on the cluster?" in done.stderr
        assert "Target revision: " in done.stderr and "Dry run by Pilothouse: " in done.stderr
        assert f'call: sync_application(name="{SYNCED_APP}", dry_run=false)' in done.stderr

        rejected = pilothouse(tmp_path / "home", model[0],
                              *printed_command(done.stderr, "reject:"), **env)
    assert rejected.returncode == 0, rejected.stderr


def test_approving_when_nothing_waits_exits_2_with_a_command_that_works(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    done = _run(tmp_path, model, workspace, "ask", "--thread", "calm-1", "--approve")

    assert done.returncode == 2
    assert "Nothing in thread calm-1 is waiting for approval" in done.stderr
    assert "`pilothouse ask --thread calm-1 QUESTION`" in done.stderr


def test_json_shows_the_approval_as_an_event_and_exits_3(
    tmp_path: Path, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    done = _run(tmp_path, model, workspace, "ask", "--json", ASK)

    assert done.returncode == 3, done.stderr
    events = json_lines(done.stdout)
    [interrupt] = [e for e in events if e["kind"] == "interrupt"]
    [call] = interrupt["data"]["value"]["subagent_calls"]
    assert (call["name"], call["args"]) == ("run_command", {"command": "touch approved.txt"})
    assert events[-1]["kind"] == "done"
    thread = events[-1]["data"]["thread_id"]
    assert printed_command(done.stderr, "approve:") == ["ask", "--thread", thread, "--approve"]
