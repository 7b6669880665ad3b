"""Script-safe output and exit codes of `pilothouse ask`, run as a process with stdout a pipe.

`--json` is one JSON object per line however long; a plain answer is its text alone (no
wrapping, no trailing spaces, no colour); the exit code says how the turn ended: 0 answered,
1 error, 2 usage, 4 every tool call failed (3, waiting for approval: test_cli_approvals.py).
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import LONG_LINE, SCRIPT, json_lines, pilothouse

from pilothouse.agents.registry import SPECIALISTS
from pilothouse.sandbox.github.server import RunningGitHubSandbox, running_github_sandbox
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


@pytest.fixture(scope="module")
def github() -> Iterator[RunningGitHubSandbox]:
    with running_github_sandbox() as sandbox:
        yield sandbox


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (Argo CD is down)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _no_trailing_space_or_escape(*texts: str) -> None:
    for text in texts:
        assert "\x1b" not in text
        assert [line for line in text.splitlines() if line != line.rstrip()] == []


def test_json_is_one_object_per_line_never_wrapped_and_ends_with_the_thread(
    tmp_path: Path, model: tuple[str, ScriptState], github: RunningGitHubSandbox,
) -> None:
    done = pilothouse(tmp_path, model[0], "ask", "--agent", "github", "--json",
                      "Which pull requests are open?", GITHUB_API_URL=github.url,
                      GITHUB_TOKEN=github.token)

    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)  # every line is a whole object
    kinds = [e["kind"] for e in events]
    assert {"tool_call", "tool_result", "answer"} <= set(kinds) and kinds[-1] == "done"
    assert max(len(line) for line in done.stdout.splitlines()) > 200  # long, still one line
    assert [e["text"] for e in events if e["kind"] == "tool_call"] == ["search_issues"]
    thread = events[-1]["data"]["thread_id"]
    again = pilothouse(tmp_path, model[0], "ask", "--thread", thread, "--json",
                       "Which pull requests are open now?", GITHUB_API_URL=github.url,
                       GITHUB_TOKEN=github.token)
    assert again.returncode == 0, again.stderr
    assert json_lines(again.stdout)[-1]["data"]["thread_id"] == thread


def test_a_plain_answer_in_a_pipe_is_its_text_alone(
    tmp_path: Path, model: tuple[str, ScriptState],
) -> None:
    done = pilothouse(tmp_path, model[0], "ask", f"Give me the long answer for: {LONG_LINE}")

    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Two steps:\n\n{LONG_LINE}\n\nDone.\n"
    _no_trailing_space_or_escape(done.stdout, done.stderr)
    # The activity on stderr is not wrapped either, and no indicator is drawn into a pipe.
    [hint] = [line for line in done.stderr.splitlines() if line.startswith("thread: ")]
    assert re.fullmatch(r"thread: (\w+)  \(continue with pilothouse ask --thread \1 QUESTION\)",
                        hint)
    assert "thinking" not in done.stderr


def test_an_error_exits_1_and_says_what_to_do(
    tmp_path: Path, model: tuple[str, ScriptState],
) -> None:
    done = pilothouse(tmp_path, model[0], "ask", "Give me the long answer.",
                      PILOTHOUSE_MEMORY_LIMIT="16MiB")  # any Python process is above it

    assert done.returncode == 1
    assert "near its memory budget" in done.stderr and "What to do: " in done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr


@pytest.mark.parametrize(("args", "says"), [
    (["--agent", "jenkins", "hello"], "Unknown agent 'jenkins'"),
    (["--approve"], "--approve needs the conversation it answers"),
    (["--thread", "t1", "--approve", "hello"], "it takes no question"),
    (["--thread", "t1", "--approve", "--message", "because"], "--message is the reason for"),
    (["--thread", "t1", "--approve", "--reject"], "cannot both be given"),
    (["--thread", "no spaces please", "hello"], "is not a thread id"),
    ([], "Nothing to ask"),
    (["--no-such-option", "hello"], "No such option"),
])
def test_a_command_line_that_cannot_work_exits_2(
    tmp_path: Path, model: tuple[str, ScriptState], args: list[str], says: str,
) -> None:
    asked = len(model[1].requests)
    done = pilothouse(tmp_path, model[0], "ask", *args)

    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    assert len(model[1].requests) == asked  # the model was never asked


def test_an_unknown_agent_is_told_every_agent_there_is(
    tmp_path: Path, model: tuple[str, ScriptState],
) -> None:
    done = pilothouse(tmp_path, model[0], "ask", "--agent", "jenkins", "hello")

    assert done.returncode == 2
    assert "Choose one of " + ", ".join((*SPECIALISTS, "supervisor")) in done.stderr


def test_every_tool_call_failing_exits_4_with_the_whole_error(
    tmp_path: Path, model: tuple[str, ScriptState], closed_port: int,
) -> None:
    dead = {"ARGOCD_URL": f"http://127.0.0.1:{closed_port}", "ARGOCD_TOKEN": "t"}
    direct = pilothouse(tmp_path, model[0], "ask", "--agent", "argocd", "List the apps.", **dead)
    routed = pilothouse(tmp_path, model[0], "ask", "List the apps.", **dead)

    for done in (direct, routed):
        assert done.returncode == 4, done.stderr
        assert "unreachable" in done.stdout  # the answer explains the failure
        failed = [line for line in done.stderr.splitlines() if "list_applications failed:" in line]
        assert len(failed) == 1 and f"127.0.0.1:{closed_port}" in failed[0]
        # The suggestion is shown whole, on its own line, not cut off.
        assert any(line.strip().startswith("What to do: Check ARGOCD_URL") and
                   line.rstrip().endswith(".") for line in done.stderr.splitlines())


def test_the_exit_codes_are_in_the_help(tmp_path: Path, model: tuple[str, ScriptState]) -> None:
    for command in (["--help"], ["ask", "--help"], ["chat", "--help"]):
        done = pilothouse(tmp_path, model[0], *command, COLUMNS="100")
        text = " ".join(done.stdout.replace("│", " ").split())
        assert done.returncode == 0
        for code in ("0 answered", "1 error", "2 usage", "3 waiting for your approval",
                     "4 every tool call of the turn failed"):
            assert code in text, (command, text)
