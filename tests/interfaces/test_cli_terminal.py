"""On a terminal the answer streams token by token, with a working indicator and the time taken.

The CLI runs with stdout and stderr on a pseudo-terminal, as in a person's shell; the same
question with stdout a pipe gets neither (test_cli_output.py checks the pipe side).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import SCRIPT, on_a_terminal, pilothouse

from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

QUESTION = "Can you stream it for payments-api?"


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


def test_on_a_terminal_tokens_stream_with_a_working_indicator_and_the_time(
    tmp_path: Path, model: tuple[str, ScriptState],
) -> None:
    code, raw = on_a_terminal(tmp_path, model[0], "ask", QUESTION)
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
