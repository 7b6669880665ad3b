"""A grep for plain words that matched nothing is searched again as code spells the words."""

from __future__ import annotations

from pathlib import Path

import pytest

from pilothouse.tools.shell import ShellService
from pilothouse.tools.shell.respell import respelled

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
