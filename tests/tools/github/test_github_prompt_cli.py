"""The GitHub agent's prompt, and how the server's settings are read from the environment."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from pilothouse.agents.github_prompt import GITHUB_SYSTEM_PROMPT
from pilothouse.errors import ConfigurationError
from pilothouse.models.tokens import tiktoken_counter
from pilothouse.tools.github import TOOLS, GitHubConnection, stdio_parameters
from pilothouse.tools.github.cli import mcp_cli
from pilothouse.tools.github.connection import github_connection_from_env


def test_the_prompt_is_compact_and_names_only_real_tools() -> None:
    count = tiktoken_counter()
    assert count is not None
    assert count(GITHUB_SYSTEM_PROMPT) < 250
    named = set(re.findall(r"\b(?:list|get|search)_[a-z_]+", GITHUB_SYSTEM_PROMPT))
    assert named and named <= set(TOOLS)
    for habit in ("one page", "Never retype", "What to do", "search_issues"):
        assert habit in GITHUB_SYSTEM_PROMPT


def test_connection_defaults_and_overrides() -> None:
    assert github_connection_from_env({}) == GitHubConnection()
    assert github_connection_from_env({}).api_url == "https://api.github.com"
    read = github_connection_from_env({
        "GITHUB_API_URL": "https://ghe.acme.internal/api/v3/", "GH_TOKEN": "ghp_fallback",
        "GITHUB_TIMEOUT": "12.5", "GITHUB_RATE_LIMIT_MAX_WAIT": "0"})
    assert read == GitHubConnection("https://ghe.acme.internal/api/v3", "ghp_fallback", 12.5, 0)
    assert github_connection_from_env({"GITHUB_TOKEN": "ghp_a", "GH_TOKEN": "ghp_b"}).token \
        == "ghp_a"
    assert github_connection_from_env(read.env()) == read  # what a child process sees


@pytest.mark.parametrize(("env", "message"), [
    ({"GITHUB_API_URL": "api.github.com"}, "GITHUB_API_URL='api.github.com' is not an http"),
    ({"GITHUB_TIMEOUT": "soon"}, "GITHUB_TIMEOUT='soon' is not a number"),
    ({"GITHUB_TIMEOUT": "0"}, "GITHUB_TIMEOUT=0.0 must be between"),
    ({"GITHUB_RATE_LIMIT_MAX_WAIT": "-1"}, "must be between 0 and 3600"),
])
def test_bad_settings_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        github_connection_from_env(env)


def test_the_token_stays_out_of_reprs_but_reaches_the_child() -> None:
    connection = GitHubConnection("https://robot:pw@ghe.acme/api/v3", "ghp_secret123")
    assert "ghp_secret123" not in repr(connection) and "pw@" not in repr(connection)
    launch = stdio_parameters(connection, extra_env={"MAX_TOOL_OUTPUT_SIZE": "5000"})
    assert launch.args == ["-m", "pilothouse.tools.github"]
    env = launch.env or {}
    assert env["GITHUB_TOKEN"] == "ghp_secret123" and env["MAX_TOOL_OUTPUT_SIZE"] == "5000"


def test_the_cli_refuses_bad_settings_with_a_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_API_URL", "ftp://example")
    result = CliRunner().invoke(mcp_cli, [])
    assert result.exit_code == 2
    assert "GITHUB_API_URL" in result.output and "What to do" in result.output
