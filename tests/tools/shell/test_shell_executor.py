"""The executor: pipelines, list semantics, redirections, cd, timeouts, limits, output caps."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from pilothouse.tools.shell.environment import build_environment
from pilothouse.tools.shell.executor import ExecutionLimits, ExecutionResult, execute
from pilothouse.tools.shell.policy import ShellPolicy


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("b\na\nb\n")
    return tmp_path


def run(workspace: Path, command: str, **limits: Any) -> ExecutionResult:
    """Check `command` (whatever the verdict: these are benign) and run its plan."""
    env = build_environment(os.environ, workspace=workspace.resolve()).variables
    decision = ShellPolicy(workspace, env=env).check(command)
    assert not decision.denied, decision.reason
    return execute(decision.plan, env=env, limits=ExecutionLimits(**limits))


def test_pipeline_stages_are_connected(workspace: Path) -> None:
    result = run(workspace, "cat README.md | sort | uniq -c | sort -rn | head -n 1")
    assert result.stdout.split() == ["2", "b"]
    assert result.exit_code == 0


def test_and_or_lists_follow_shell_semantics(workspace: Path) -> None:
    result = run(workspace, "false && echo skipped || echo recovered; echo always")
    assert result.stdout == "recovered\nalways\n"
    assert run(workspace, "true || echo no && echo yes").stdout == "yes\n"
    assert run(workspace, "false; true").exit_code == 0
    assert run(workspace, "true; false").exit_code == 1


def test_exit_status_of_a_pipeline_is_the_last_stage(workspace: Path) -> None:
    assert run(workspace, "false | true").exit_code == 0
    assert run(workspace, "true | false").exit_code == 1


def test_file_redirections(workspace: Path) -> None:
    run(workspace, "echo one > out.txt; echo two >> out.txt")
    assert (workspace / "out.txt").read_text() == "one\ntwo\n"
    assert run(workspace, "sort < README.md").stdout == "a\nb\nb\n"
    run(workspace, "ls missing-file > both.txt 2>&1")
    assert "missing-file" in (workspace / "both.txt").read_text()


def test_redirection_order_matters_like_in_a_shell(workspace: Path) -> None:
    result = run(workspace, "ls missing-file 2>&1 > out.txt")
    assert "missing-file" in result.stdout  # stderr went to the old stdout (the pipe)
    assert (workspace / "out.txt").read_text() == ""
    result = run(workspace, "echo to-stderr 1>&2")
    assert result.stdout == "" and result.stderr == "to-stderr\n"


def test_stderr_is_captured_separately(workspace: Path) -> None:
    result = run(workspace, "ls missing-file")
    assert result.exit_code == 2
    assert "missing-file" in result.stderr and result.stdout == ""


def test_cd_applies_to_later_commands_and_a_failed_cd_stops_the_rest(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    assert run(workspace, "cd sub && pwd").stdout.strip() == str(workspace.resolve() / "sub")
    result = run(workspace, "cd nowhere; pwd")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "were not checked for" in result.stderr


def test_mkdir_then_cd_works_because_cd_is_checked_lexically(workspace: Path) -> None:
    assert run(workspace, "mkdir -p new/dir && cd new/dir && pwd").stdout.strip().endswith(
        "new/dir"
    )


def test_timeout_kills_the_whole_process_group(workspace: Path) -> None:
    marker = workspace / "grandchild-finished"
    started = time.monotonic()
    result = run(workspace, f"sh -c 'sleep 2 && touch {marker}' ", timeout_seconds=0.5)
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 2
    time.sleep(2.5)
    assert not marker.exists()


def test_escaped_grandchild_holding_the_pipe_does_not_block_the_answer(workspace: Path) -> None:
    started = time.monotonic()
    result = run(workspace, "sh -c 'setsid sleep 6 & echo started'", timeout_seconds=10)
    assert result.stdout == "started\n"
    assert time.monotonic() - started < 4.5


def test_output_is_capped_and_the_rest_is_counted(workspace: Path) -> None:
    result = run(workspace, "seq 1 100000", output_limit_bytes=1000)
    assert len(result.stdout) == 1000
    assert result.stdout.startswith("1\n2\n")
    assert result.stdout_omitted_bytes == len("".join(f"{i}\n" for i in range(1, 100001))) - 1000


def test_stderr_cap_keeps_the_tail(workspace: Path) -> None:
    result = run(workspace, "seq 1 5000 1>&2", output_limit_bytes=100)
    assert result.stderr.endswith("5000\n") and len(result.stderr) == 100


def test_resource_limits_are_set_in_the_child(workspace: Path) -> None:
    script = (
        "import resource as r; print(*(r.getrlimit(x)[0] for x in "
        "(r.RLIMIT_AS, r.RLIMIT_CPU, r.RLIMIT_FSIZE, r.RLIMIT_CORE, r.RLIMIT_NPROC)))"
    )
    result = run(workspace, f'python3 -c "{script}"', memory_bytes=1024**3, cpu_seconds=7,
                 file_size_bytes=4096, max_processes=64)
    memory, cpu, fsize, core, nproc = (int(x) for x in result.stdout.split())
    assert (memory, cpu, fsize, core) == (1024**3, 7, 4096, 0)
    assert nproc >= 64  # "64 more than this user already runs"


def test_memory_limit_stops_a_greedy_process(workspace: Path) -> None:
    result = run(workspace, "python3 -c 'x = bytearray(800 * 1024 * 1024)'",
                 memory_bytes=300 * 1024**2)
    assert result.exit_code != 0
    assert "MemoryError" in result.stderr


def test_cpu_limit_stops_a_spinning_process(workspace: Path) -> None:
    started = time.monotonic()
    result = run(workspace, "python3 -c 'while True: pass'", cpu_seconds=1, timeout_seconds=20)
    assert result.exit_code is not None and result.exit_code < 0  # SIGXCPU / SIGKILL
    assert time.monotonic() - started < 10


def test_missing_program_reports_a_start_error(workspace: Path) -> None:
    result = run(workspace, "definitely-not-a-program-xyz")
    assert result.exit_code == 127
    assert isinstance(result.start_error, FileNotFoundError)
    assert result.failed_program == "definitely-not-a-program-xyz"
