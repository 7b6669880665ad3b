"""Error analysis: install hints, permission, timeout, limits and common failures."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from pilothouse.tools.shell.diagnosis import diagnose, missing_programs, suggest_install
from pilothouse.tools.shell.executor import ExecutionResult
from pilothouse.tools.shell.near_paths import nearest_missing


def failed(stderr: str = "", code: int | None = 1, **extra: Any) -> ExecutionResult:
    return ExecutionResult(exit_code=code, stdout="", stderr=stderr, **extra)


def test_install_hint_names_the_debian_and_pip_packages(tmp_path: Path) -> None:
    assert "apt-get install jq" in suggest_install("jq", str(tmp_path))
    assert "apt-get install ripgrep" in suggest_install("rg", str(tmp_path))
    assert "pip install pytest" in suggest_install("pytest", str(tmp_path))
    assert "ask them" in suggest_install("jq", str(tmp_path))


def test_install_hint_offers_close_names_and_python_modules(tmp_path: Path) -> None:
    (tmp_path / "python3").write_text("")
    assert "similar installed commands: python3" in suggest_install("pythn3", str(tmp_path))
    assert "python3 -m pip" in suggest_install("pip", str(tmp_path))


def test_missing_programs_are_found_before_running(tmp_path: Path) -> None:
    argvs = [("ls",), ("cd", "x"), ("no-such-tool-abc",), ("./script.sh",)]
    assert missing_programs(argvs, "/usr/bin:/bin", str(tmp_path)) == [
        "no-such-tool-abc", "./script.sh"
    ]


def test_timeout_guidance_suggests_splitting_and_a_larger_timeout() -> None:
    text = diagnose(failed(code=None, timed_out=True), timeout_seconds=30, max_timeout=600)
    assert "Split the work" in text and "timeout_seconds" in text
    capped = diagnose(failed(code=None, timed_out=True), timeout_seconds=600, max_timeout=600)
    assert "timeout_seconds" not in capped


@pytest.mark.parametrize(
    ("stderr", "code", "expected"),
    [
        ("cat: x: Permission denied", 1, "Do not use sudo"),
        ("", 126, "Permission denied"),
        ("fatal: not a git repository (or any parent)", 128, "not a git repository"),
        ("The connection to the server localhost:8080 was refused", 1, "kubectl cannot reach"),
        ("curl: (6) Could not resolve host: x", 6, "network is unreachable"),
        ("ls: cannot access 'x': No such file or directory", 2, "does not exist"),
        ("MemoryError", 1, "memory limit"),
        ("sh: 1: foo: not found\nfoo: command not found", 127, "was not found"),
        ("something odd", 3, "exited with status 3"),
    ],
)
def test_failures_get_specific_guidance(stderr: str, code: int, expected: str) -> None:
    assert expected in diagnose(failed(stderr, code), timeout_seconds=30, max_timeout=600)


def test_signals_are_named() -> None:
    cpu = diagnose(failed(code=-signal.SIGXCPU), timeout_seconds=30, max_timeout=600)
    assert "CPU-time limit" in cpu
    killed = diagnose(failed(code=-signal.SIGKILL), timeout_seconds=30, max_timeout=600)
    assert "SIGKILL" in killed


def test_permission_error_at_start_is_explained() -> None:
    result = failed(code=126, start_error=PermissionError(13, "Permission denied"),
                    failed_program="./run.sh")
    assert "./run.sh" in diagnose(result, timeout_seconds=30, max_timeout=600)


@pytest.mark.parametrize("stderr", [
    "grep: deploy_configs: No such file or directory",
    "ls: cannot access 'deploy_configs': No such file or directory",
    "head: cannot open 'deploy_configs' for reading: No such file or directory",
    "sed: can't read deploy_configs: No such file or directory",
    "find: ‘deploy_configs’: No such file or directory",
    "bash: line 1: cd: deploy_configs: No such file or directory",
])
def test_a_missing_path_is_answered_with_the_closest_paths_of_the_workspace(
    tmp_path: Path, stderr: str,
) -> None:
    # However the tool words it, the path it could not find is read off its error.
    (tmp_path / "deploy" / "helm").mkdir(parents=True)
    (tmp_path / "deploy" / "helm" / "values.yaml").write_text("")
    (tmp_path / "src").mkdir()
    (tmp_path / "node_modules" / "deploy").mkdir(parents=True)  # not the workspace's own
    text = diagnose(failed(stderr, code=2), timeout_seconds=30, max_timeout=600,
                    near=nearest_missing(stderr, tmp_path))
    assert text.startswith("`deploy_configs` does not exist; the closest paths in the "
                           "workspace are `deploy/`."), text


def test_a_missing_path_with_nothing_close_keeps_the_general_advice(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    stderr = "cat: /path/to/your-chart.yaml: No such file or directory"
    assert nearest_missing(stderr, tmp_path) is None
    text = diagnose(failed(stderr), timeout_seconds=30, max_timeout=600)
    assert text.startswith("A path does not exist: list the directory first")
    # A file named like the one asked for, in another folder, is named with its folder.
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "your-chart.yaml").write_text("")
    near = nearest_missing(stderr, tmp_path)
    assert near is not None and near.closest == ("charts/your-chart.yaml",)
    assert "`charts/your-chart.yaml`" in diagnose(failed(stderr), timeout_seconds=30,
                                                  max_timeout=600, near=near)
