"""A grep for plain words that matched nothing is searched again as code spells the words."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from pilothouse.tools.shell import ShellService
from pilothouse.tools.shell.respell import grep_pattern, respelled

VALUES = "replicaCount: 3\nautoscaling:\n  maxReplicas: 12\nenv:\n  ORDERS_DB_POOL_SIZE: \"20\"\n"


@pytest.fixture
def service(tmp_path: Path) -> ShellService:
    workspace = tmp_path / "ws"
    (workspace / "deploy").mkdir(parents=True)
    (workspace / "deploy" / "values.yaml").write_text(VALUES)
    (workspace / ".env").write_text("MAX_REPLICAS_TOKEN=x\n")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)}
    return ShellService(workspace, base_env=env, max_timeout_seconds=5)


@pytest.mark.parametrize(("command", "lines"), [
    ("grep -rn 'max replicas' deploy", "deploy/values.yaml:3:  maxReplicas: 12\n"),
    ("grep -n 'db pool size' deploy/values.yaml", '5:  ORDERS_DB_POOL_SIZE: "20"\n'),
    ("grep -rn max-replicas .", "./deploy/values.yaml:3:  maxReplicas: 12\n"),
])
def test_words_that_matched_nothing_are_found_as_an_identifier(
    service: ShellService, command: str, lines: str,
) -> None:
    result = service.run(command)
    assert result["status"] == "ok" and result["exit_code"] == 0, result
    assert result["stdout"] == lines
    assert result["retried_from"] == command
    assert result["retried_because"].endswith(
        "so its words were searched as code spells them, joined and in any case")


def test_the_second_search_is_judged_like_the_first(service: ShellService) -> None:
    # `.env` holds the words too: the recursive read leaves it out, the second one as well.
    result = service.run("grep -rn 'max replicas token' .")
    assert result["exit_code"] == 1 and "retried_from" in result
    assert result["retried_because"].startswith("grep -r would read .env")
    assert result["stdout"] == ""


def test_an_exact_search_and_one_that_found_lines_are_left_alone(service: ShellService) -> None:
    assert "retried_from" not in service.run("grep -rn maxReplicas deploy")
    for command in ("grep -rnF 'max replicas' deploy", "grep -rn 'max.replicas' deploy",
                    "grep -rnw 'max replicas' deploy", "grep -rn 'min replicas' deploy",
                    "grep -rn 'max replicas' deploy | wc -l", "grep -rq 'max replicas' deploy",
                    "grep -rv 'max replicas' deploy/values.yaml"):
        assert "retried_from" not in service.run(command), command
    # Where the pattern is, whatever options come first.
    assert respelled(["grep", "-rn", "--include", "*.yaml", "db pool", "."]) == (
        ["grep", "-i", "-E", "-rn", "--include", "*.yaml", "db[-_. ]?pool", "."], "db pool")
    assert respelled(["grep", "-e", "db pool", "."]) is None
    assert respelled(["cat", "db pool"]) is None


@pytest.mark.parametrize(("argv", "pattern"), [
    ("grep -rn 'retry a charge' src", "retry a charge"),
    ("grep -rin --include=*.py max_retries src", "max_retries"),
    ("egrep -rn -A 3 timeout .", "timeout"),
    ("grep -rn -- -v .", "-v"),
    # A pattern of its own kind (an expression given by option, whole words only, inverted).
    ("grep -rn -e timeout .", None),
    ("grep -rnw 'pool size' .", None),
    ("git log -n 5", None),
])
def test_the_pattern_a_grep_looks_for_is_read_from_its_arguments(
        argv: str, pattern: str | None) -> None:
    assert grep_pattern(shlex.split(argv)) == pattern


def test_a_lone_grep_that_matched_nothing_even_respelled_names_its_pattern(
        service: ShellService) -> None:
    assert service.run("grep -rn 'min replicas' deploy")["unmatched_pattern"] == "min replicas"
    assert service.run("grep -rn minReplicas deploy")["unmatched_pattern"] == "minReplicas"
    # Found lines, as written or respelled; grep after a pipe or beside another command (it
    # reads another command's output, or is not the whole answer); a pattern of its own kind;
    # a grep that failed.
    for command in ("grep -rn maxReplicas deploy", "grep -rn 'max replicas' deploy",
                    "ls deploy | grep 'min replicas'", "grep -rn 'min replicas' . && ls",
                    "grep -rnw 'min replicas' deploy", "grep -rn 'min replicas' nowhere"):
        assert "unmatched_pattern" not in service.run(command), command
