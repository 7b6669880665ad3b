"""The child environment (allow-listed, secrets dropped) and output redaction."""

from __future__ import annotations

from pathlib import Path

from pilothouse.redaction import MASK as REDACTED
from pilothouse.redaction import Redactor
from pilothouse.tools.shell.environment import build_environment


def test_secrets_are_dropped_and_safe_variables_kept(tmp_path: Path) -> None:
    source = {
        "PATH": "/usr/bin:/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "LC_ALL": "C",
        "FAKE_TOKEN": "sekrit-value", "GITHUB_TOKEN": "ghp_x", "AWS_SECRET_ACCESS_KEY": "abc123",
        "OPENAI_API_KEY": "sk-123", "PILOTHOUSE_APPROVAL_SECRET": "approve-me",
        "DB_PASSWORD": "hunter22", "KUBECONFIG": "/home/u/.kube/config",
        "PAYMENTS_DB": "postgres://user:pw12345@db/payments", "RANDOM_SETTING": "x",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock", "LD_PRELOAD": "/evil.so",
    }  # fmt: skip
    env = build_environment(source, workspace=tmp_path, pass_through=["RANDOM_SETTING"])
    names = set(env.variables)
    assert {"PATH", "HOME", "LANG", "LC_ALL", "KUBECONFIG", "RANDOM_SETTING"} <= names
    for dropped in ("FAKE_TOKEN", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY",
                    "PILOTHOUSE_APPROVAL_SECRET", "DB_PASSWORD", "PAYMENTS_DB", "SSH_AUTH_SOCK",
                    "LD_PRELOAD"):
        assert dropped not in names
    assert env.variables["PAGER"] == "cat" and env.variables["GIT_TERMINAL_PROMPT"] == "0"
    assert "sekrit-value" in env.secret_values and "hunter22" in env.secret_values
    assert "/home/u" not in env.secret_values


def test_path_loses_relative_entries_and_workspace_directories(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    source = {"PATH": f".:bin::/usr/bin:{tmp_path}/bin:/bin"}
    env = build_environment(source, workspace=tmp_path)
    assert env.variables["PATH"] == "/usr/bin:/bin"


def test_redactor_replaces_secret_values_and_token_shapes() -> None:
    redact = Redactor(["sekrit-value", "abc"])  # too-short values are not redacted
    text = (
        "value sekrit-value\n"
        "gh ghp_" + "A" * 36 + "\n"
        "aws AKIAABCDEFGHIJKLMNOP\n"
        "jwt eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4\n"
        "Authorization: Bearer abcdefghijklmnop\n"
        "password=hunter2 and abc stays\n"
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n"
    )
    out = redact(text)
    for leaked in ("sekrit-value", "ghp_", "AKIAABCDEFGHIJKLMNOP", "eyJhbGci", "abcdefghijklmnop",
                   "hunter2", "MIIE"):
        assert leaked not in out
    assert "Bearer " + REDACTED in out
    assert "password=" + REDACTED in out
    assert "abc stays" in out
