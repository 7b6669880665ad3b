"""On a terminal the answer streams token by token, with a working indicator and the time taken.

The CLI runs with stdout and stderr on a pseudo-terminal, as in a person's shell; the same
question with stdout a pipe gets neither (test_cli_output.py checks the pipe side).
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import CLEARED, SCRIPT, pilothouse

from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

QUESTION = "Can you stream it for payments-api?"


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


def _on_a_terminal(home: Path, model_url: str, *args: str) -> tuple[int, str]:
    """Run `pilothouse ARGS` with stdout and stderr on a 120-column pseudo-terminal."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith((*CLEARED, "NO_COLOR", "COLUMNS", "LINES"))}
    env.update({"PILOTHOUSE_HOME": str(home), "PILOTHOUSE_MODEL": "openai-compatible:scripted",
                "OPENAI_BASE_URL": model_url, "MAX_CONTEXT_TOKENS": "32000", "TERM": "xterm"})
    process = subprocess.Popen([sys.executable, "-m", "pilothouse", *args], env=env,
                               stdin=subprocess.DEVNULL, stdout=follower, stderr=follower)
    os.close(follower)
    chunks: list[bytes] = []
    try:
        while select.select([leader], [], [], 180)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process has exited
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    return process.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def test_on_a_terminal_tokens_stream_with_a_working_indicator_and_the_time(
    tmp_path: Path, model: tuple[str, ScriptState],
) -> None:
    code, raw = _on_a_terminal(tmp_path, model[0], "ask", QUESTION)
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)  # colours and cursor moves

    assert code == 0, screen
    # The raw tokens as they came (Markdown rendered at the end would have dropped the **).
    assert "The **payments-api** rollout is fine." in screen
    assert "thinking · " in screen  # the indicator, with the elapsed time after the dot
    assert re.search(r"\(\d+s\)", screen)  # how long the answer took


def test_in_a_pipe_the_same_answer_has_no_indicator(
    tmp_path: Path, model: tuple[str, ScriptState],
) -> None:
    done = pilothouse(tmp_path, model[0], "ask", QUESTION)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "The **payments-api** rollout is fine.\n"
    assert "thinking" not in done.stderr and not re.search(r"\(\d+s\)", done.stderr)
    assert "\x1b" not in done.stdout + done.stderr
