"""Where the GitHub tools connect, and how an agent launches their MCP server over stdio.

`GitHubConnection` is the GitHub part of the settings (API root, token, time limits), and
`stdio_parameters` the launch for `mcp.Client`: the child process sees only these variables
(plus the MCP SDK's safe default environment), rendered back from the object, so a connection
built in code (a sandbox's URL) reaches it as well as one read from the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mcp import StdioServerParameters

from pilothouse.config import Settings
from pilothouse.tools.github.client import DEFAULT_API_URL
from pilothouse.tools.http_api.errors import display_url
from pilothouse.tools.mcp_support import stdio_server

MODULE = "pilothouse.tools.github"


@dataclass(frozen=True)
class GitHubConnection:
    """The GitHub API root (github.com or `https://HOST/api/v3`) and how to talk to it."""

    api_url: str = DEFAULT_API_URL
    token: str | None = field(default=None, repr=False)
    timeout_seconds: float = 30.0
    #: A spent rate limit that resets within this many seconds is waited out, not reported.
    rate_limit_max_wait_seconds: float = 10.0

    def __repr__(self) -> str:
        token = "***" if self.token else None
        return (f"GitHubConnection(api_url={display_url(self.api_url)!r}, token={token!r}, "
                f"timeout_seconds={self.timeout_seconds:g}, "
                f"rate_limit_max_wait_seconds={self.rate_limit_max_wait_seconds:g})")

    def env(self) -> dict[str, str]:
        """The environment variables that reproduce this connection in a child process."""
        env = {"GITHUB_API_URL": self.api_url, "GITHUB_TIMEOUT": f"{self.timeout_seconds:g}",
               "GITHUB_RATE_LIMIT_MAX_WAIT": f"{self.rate_limit_max_wait_seconds:g}"}
        if self.token:
            env["GITHUB_TOKEN"] = self.token
        return env


def github_connection(settings: Settings) -> GitHubConnection:
    """The GitHub connection described by `settings` (GITHUB_TOKEN, GITHUB_API_URL, ...)."""
    return GitHubConnection(api_url=settings.github_api_url, token=settings.github_token,
                            timeout_seconds=settings.github_timeout_seconds,
                            rate_limit_max_wait_seconds=settings.github_rate_limit_max_wait)


def github_connection_from_env(env: Mapping[str, str] | None = None) -> GitHubConnection:
    """The GitHub connection from the environment (through `Settings`, its only reader)."""
    return github_connection(Settings.from_env(env))


def stdio_parameters(connection: GitHubConnection, *,
                     extra_env: Mapping[str, str] | None = None,
                     args: list[str] | None = None) -> StdioServerParameters:
    """Start `python -m pilothouse.tools.github` for `connection`, for `mcp.Client`.

    `extra_env` passes other settings the server reads (`MAX_TOOL_OUTPUT_SIZE`,
    `PILOTHOUSE_LOG_LEVEL`); `args` are command-line options (the tool filter's).
    """
    return stdio_server(MODULE, {**connection.env(), **(extra_env or {})}, args)
