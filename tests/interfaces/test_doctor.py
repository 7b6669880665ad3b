"""`pilothouse doctor` through the real CLI, against the real sandboxes and real closed ports.

Every part a user configures gets one row that says whether it works from here, and what to
do when it does not: a working set-up exits 0; a closed port, a wrong token, a URL that is not
one, a model with no key or an unreachable model server each make their row a problem and the
exit code 1. No row ever carries a credential.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pilothouse.sandbox.argocd import RunningSandbox, running_sandbox
from pilothouse.sandbox.github.server import RunningGitHubSandbox, running_github_sandbox
from pilothouse.testing.postgres_cluster import PostgresCluster
from pilothouse.testing.scripted_server import running_scripted_server

_CLEARED = ("PILOTHOUSE_", "ARGOCD_", "GITHUB_", "GH_TOKEN", "OPENAI_", "LLM_", "MAX_CONTEXT",
            "ANTHROPIC_", "GOOGLE_", "AZURE_", "AWS_", "OLLAMA_")
WRONG_TOKEN = "eyJ3cm9uZw.d3Jvbmc.c2VjcmV0LXRoYXQtbXVzdC1ub3Qtc2hvdw"
WRONG_GITHUB_TOKEN = "ghp_wrongTokenThatMustNeverBePrinted"


@pytest.fixture(scope="module")
def argocd() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=5) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def github() -> Iterator[RunningGitHubSandbox]:
    with running_github_sandbox() as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    with running_scripted_server({"rules": [], "default": {"content": "ok"}}) as (url, _):
        yield url


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def doctor(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`pilothouse doctor ARGS` in its own process, stdout a pipe, only `env` configured."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED)}
    clean.update({"PILOTHOUSE_HOME": str(home), **env})
    return subprocess.run([sys.executable, "-m", "pilothouse", "doctor", *args], env=clean,
                          cwd=home, capture_output=True, text=True, timeout=120, check=False)


def rows(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    """The checks of `doctor --json`: stdout is exactly one JSON object."""
    report = json.loads(done.stdout)
    assert done.stdout.count("\n") == 1 and report["ok"] == (done.returncode == 0)
    return {check["name"]: check for check in report["checks"]}


def working(home: Path, model_url: str, argocd: RunningSandbox,
            github: RunningGitHubSandbox) -> dict[str, str]:
    """The variables of a set-up where everything works."""
    workspace = home / "repo"
    workspace.mkdir(exist_ok=True)
    return {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": model_url,
            "OPENAI_API_KEY": "sk-model-key-not-to-print", "MAX_CONTEXT_TOKENS": "32000",
            "ARGOCD_URL": argocd.url, "ARGOCD_TOKEN": argocd.token,
            "GITHUB_API_URL": github.url, "GITHUB_TOKEN": github.token,
            "PILOTHOUSE_WORKSPACE": str(workspace)}


def test_a_working_setup_is_ok_row_by_row_and_exits_0(
        tmp_path: Path, model_url: str, argocd: RunningSandbox,
        github: RunningGitHubSandbox) -> None:
    env = working(tmp_path, model_url, argocd, github)
    done = doctor(tmp_path, "--json", **env)

    checks = rows(done)
    assert done.returncode == 0, done.stdout
    assert {name: check["status"] for name, check in checks.items()
            if check["status"] != "ok"} == {}
    for name in ("model", "model endpoint", "database", "Argo CD", "GitHub", "workspace"):
        assert name in checks
    assert "logged in as admin" in checks["Argo CD"]["detail"]
    assert "read-only" in checks["Argo CD"]["detail"]
    assert "token accepted" in checks["GitHub"]["detail"]
    assert "SQLite" in checks["database"]["detail"]
    for secret in (argocd.token, github.token, env["OPENAI_API_KEY"]):
        assert secret not in done.stdout + done.stderr


def test_broken_parts_are_problems_with_a_fix_and_exit_1(
        tmp_path: Path, github: RunningGitHubSandbox) -> None:
    port = closed_port()
    done = doctor(tmp_path, "--json", PILOTHOUSE_MODEL="openai-compatible:scripted",
                  OPENAI_BASE_URL=f"http://127.0.0.1:{closed_port()}/v1",
                  MAX_CONTEXT_TOKENS="32000", ARGOCD_URL=f"http://127.0.0.1:{port}",
                  ARGOCD_TOKEN=WRONG_TOKEN, GITHUB_API_URL=github.url,
                  GITHUB_TOKEN=WRONG_GITHUB_TOKEN,
                  PILOTHOUSE_WORKSPACE=str(tmp_path / "no-such-repo"))

    checks = rows(done)
    assert done.returncode == 1
    problems = {name for name, check in checks.items() if check["status"] == "problem"}
    assert problems == {"model endpoint", "Argo CD", "GitHub", "workspace"}
    assert f"unreachable at http://127.0.0.1:{port}" in checks["Argo CD"]["detail"]
    assert "ARGOCD_URL" in checks["Argo CD"]["fix"]
    assert "rejected the token" in checks["GitHub"]["detail"]
    assert "GITHUB_TOKEN" in checks["GitHub"]["fix"]
    assert "OPENAI_BASE_URL" in checks["model endpoint"]["fix"]
    assert "PILOTHOUSE_WORKSPACE" in checks["workspace"]["fix"]
    assert WRONG_TOKEN not in done.stdout and WRONG_GITHUB_TOKEN not in done.stdout


def test_a_wrong_argocd_token_or_password_is_named(
        tmp_path: Path, argocd: RunningSandbox) -> None:
    by_token = rows(doctor(tmp_path, "--json", ARGOCD_URL=argocd.url, ARGOCD_TOKEN=WRONG_TOKEN))
    by_password = rows(doctor(tmp_path, "--json", ARGOCD_URL=argocd.url,
                              ARGOCD_USERNAME="admin", ARGOCD_PASSWORD="not-the-password"))

    token_row, password_row = by_token["Argo CD"], by_password["Argo CD"]
    assert token_row["status"] == "problem" and "does not accept ARGOCD_TOKEN" in \
        token_row["detail"]
    assert "argocd account generate-token" in token_row["fix"]
    assert password_row["status"] == "problem" and "refused to log in" in password_row["detail"]
    assert "ARGOCD_PASSWORD" in password_row["fix"]
    assert "not-the-password" not in json.dumps(by_password)


def test_argocd_url_that_is_not_a_url_is_the_settings_row(tmp_path: Path) -> None:
    done = doctor(tmp_path, "--json", ARGOCD_URL="notaurl", ARGOCD_TOKEN=WRONG_TOKEN)

    checks = rows(done)
    assert done.returncode == 1 and list(checks) == ["settings"]
    assert "ARGOCD_URL='notaurl' is not an http(s) URL" in checks["settings"]["detail"]
    assert "`ARGOCD_URL=https://" in checks["settings"]["fix"]


def test_a_hosted_model_without_its_key_is_a_problem(tmp_path: Path) -> None:
    openai = rows(doctor(tmp_path, "--json", PILOTHOUSE_MODEL="openai:gpt-4o-mini"))
    anthropic = rows(doctor(tmp_path, "--json",
                            PILOTHOUSE_MODEL="anthropic:claude-sonnet-4-5"))
    keyed = rows(doctor(tmp_path, "--json", PILOTHOUSE_MODEL="anthropic:claude-sonnet-4-5",
                        ANTHROPIC_API_KEY="sk-ant-not-shown"))

    assert openai["model"]["status"] == "problem"
    assert "OPENAI_API_KEY" in openai["model"]["detail"] + openai["model"]["fix"]
    assert anthropic["model"]["status"] == "problem"
    assert "ANTHROPIC_API_KEY" in anthropic["model"]["fix"]
    assert keyed["model"]["status"] == "ok" and "sk-ant-not-shown" not in json.dumps(keyed)
    # Unconfigured parts are not problems: they say how to set them up.
    assert openai["Argo CD"]["status"] == "not configured" and "ARGOCD_URL" in \
        openai["Argo CD"]["fix"]
    assert openai["GitHub"]["status"] == "not configured"


def test_postgres_is_connected_or_named_without_its_password(
        tmp_path: Path, postgres: PostgresCluster) -> None:
    good = rows(doctor(tmp_path, "--json", PILOTHOUSE_MODEL="anthropic:claude-sonnet-4-5",
                       ANTHROPIC_API_KEY="k", PILOTHOUSE_DATABASE_URL=postgres.url()))
    wrong_url = postgres.url().replace(postgres.password, "wrong-password-not-shown")
    wrong = rows(doctor(tmp_path, "--json", PILOTHOUSE_DATABASE_URL=wrong_url))
    closed = rows(doctor(tmp_path, "--json", PILOTHOUSE_DATABASE_URL=(
        f"postgresql://u:pw-not-shown@127.0.0.1:{closed_port()}/db")))

    assert good["database"]["status"] == "ok" and "PostgreSQL" in good["database"]["detail"]
    assert wrong["database"]["status"] == "problem"
    assert "password authentication failed" in wrong["database"]["detail"]
    assert closed["database"]["status"] == "problem"
    assert "PILOTHOUSE_DATABASE_URL" in closed["database"]["fix"]
    shown = json.dumps([good, wrong, closed])
    assert postgres.password not in shown and "not-shown" not in shown


def test_in_a_pipe_each_check_is_one_line_with_its_fix(tmp_path: Path) -> None:
    done = doctor(tmp_path, PILOTHOUSE_MODEL="openai:gpt-4o-mini",
                  ARGOCD_URL=f"http://127.0.0.1:{closed_port()}", ARGOCD_TOKEN=WRONG_TOKEN)

    lines = done.stdout.splitlines()
    assert done.returncode == 1
    argocd_line = next(line for line in lines if line.split("\t")[1] == "Argo CD")
    status, _, detail, fix = argocd_line.split("\t")
    assert status == "problem" and "unreachable" in detail
    assert fix.startswith("What to do: Check ARGOCD_URL")
    assert all(line == line.rstrip() for line in lines)


def test_each_argocd_instance_gets_its_own_row(tmp_path: Path, argocd: RunningSandbox) -> None:
    port = closed_port()
    checks = rows(doctor(tmp_path, "--json", ARGOCD_URL=argocd.url, ARGOCD_TOKEN=argocd.token,
                         ARGOCD_INSTANCES="staging",
                         ARGOCD_STAGING_URL=f"http://127.0.0.1:{port}",
                         ARGOCD_STAGING_TOKEN=WRONG_TOKEN))

    assert checks["Argo CD"]["status"] == "ok"
    assert checks["Argo CD staging"]["status"] == "problem"
    assert f"unreachable at http://127.0.0.1:{port}" in checks["Argo CD staging"]["detail"]
