"""Diffs on the CLI: an answer's diff and a rollback approval's evidence, piped and on a terminal.

`pilothouse ask --agent argocd` runs as a process over the real Argo CD MCP server and the
sandbox over HTTP; only the model is scripted. In a pipe the diff is plain text (no colour);
on a pseudo-terminal added lines are green, removed lines red and hunk headers cyan.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from change_support import ADDED, DEGRADED, DRIFTED, REMOVED, ROLLBACK_ADDED, ROLLBACK_REMOVED
from cli_support import SCRIPT, on_a_terminal, pilothouse

from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

DIFF_QUESTION = f"What is the diff of {DRIFTED}?"
ROLLBACK_QUESTION = f"Please roll back {DEGRADED}."
SGR = re.compile(r"\x1b\[([0-9;]*)m")

DIFF_RULES: list[dict[str, Any]] = [
    {"name": "argocd-diff", "when": {"tools_include": "diff_application", "last_role": "user",
                                     "last_contains": "diff of"},
     "reply": {"tool_calls": [{"name": "diff_application", "arguments": {"name": DRIFTED}}]}},
    {"name": "argocd-diff-lead", "when": {"last_tool": "diff_application", "last_role": "tool"},
     "reply": {"content": "Two resources drifted from Git."}},
    {"name": "argocd-rollback", "when": {"tools_include": "rollback_application",
                                         "last_role": "user", "last_contains": "roll back"},
     "reply": {"tool_calls": [{"name": "rollback_application",
                               "arguments": {"name": DEGRADED, "dry_run": False}}]}},
]


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    script = {**SCRIPT, "rules": [*DIFF_RULES, *SCRIPT["rules"]]}
    with running_scripted_server(script) as served:
        yield served


@pytest.fixture(scope="module")
def argocd() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=20) as sandbox:
        yield sandbox


def _env(argocd: RunningSandbox) -> dict[str, str]:
    return {"ARGOCD_URL": argocd.url, "ARGOCD_TOKEN": argocd.token, "ARGOCD_READ_ONLY": "false"}


def _colour_of(screen: str, line: str) -> set[str]:
    """The SGR colour parameters in force where `line` starts on the raw terminal output."""
    start = screen.index(line)
    codes = SGR.findall(screen[:start])
    last_reset = max((i for i, c in enumerate(codes) if c in ("", "0")), default=-1)
    return {p for c in codes[last_reset + 1:] for p in c.split(";")}


def test_in_a_pipe_a_diff_answer_is_plain_text_with_its_lines(
    tmp_path: Path, model: tuple[str, ScriptState], argocd: RunningSandbox,
) -> None:
    done = pilothouse(tmp_path, model[0], "ask", "--agent", "argocd", DIFF_QUESTION,
                      **_env(argocd))

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert REMOVED in lines and ADDED in lines
    assert f"--- live/ConfigMap/analytics/{DRIFTED.rsplit('-', 1)[0]}-config" in lines
    assert "\x1b" not in done.stdout + done.stderr


def test_on_a_terminal_added_lines_are_green_removed_red_hunks_cyan(
    tmp_path: Path, model: tuple[str, ScriptState], argocd: RunningSandbox,
) -> None:
    code, raw = on_a_terminal(tmp_path, model[0], "ask", "--agent", "argocd", DIFF_QUESTION,
                               **_env(argocd))

    assert code == 0, raw
    final = raw[raw.index("Diff of "):]  # the answer as rendered, after the streamed lead
    assert "32" in _colour_of(final, ADDED)
    assert "31" in _colour_of(final, REMOVED)
    assert "36" in _colour_of(final, "@@ -")
    assert "```" not in final  # the fence is rendered, not printed


def test_a_piped_rollback_approval_shows_the_diff_and_the_evidence_without_colour(
    tmp_path: Path, model: tuple[str, ScriptState], argocd: RunningSandbox,
) -> None:
    done = pilothouse(tmp_path, model[0], "ask", "--agent", "argocd", ROLLBACK_QUESTION,
                      **_env(argocd))

    assert done.returncode == 3, done.stderr
    lines = [line.strip() for line in done.stderr.splitlines()]
    assert f"Roll back application '{DEGRADED}'?" in lines
    assert ROLLBACK_REMOVED in lines and ROLLBACK_ADDED in lines
    assert re.search(r"^Evidence [0-9a-f]{16}: ", "\n".join(lines), re.MULTILINE)
    assert not any(line.startswith("```") for line in lines)  # fences are for renderers
    assert "\x1b" not in done.stderr


def test_a_rollback_approval_on_a_terminal_colours_its_diff(
    tmp_path: Path, model: tuple[str, ScriptState], argocd: RunningSandbox,
) -> None:
    code, raw = on_a_terminal(tmp_path, model[0], "ask", "--agent", "argocd",
                               ROLLBACK_QUESTION, **_env(argocd))

    assert code == 3, raw
    prompt = raw[raw.index("Approval needed"):]
    assert "32" in _colour_of(prompt, ROLLBACK_ADDED)
    assert "31" in _colour_of(prompt, ROLLBACK_REMOVED)
    assert "33" in _colour_of(prompt, "Evidence ")  # the sentences stay yellow
