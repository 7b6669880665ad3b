"""Where the GitHub tools connect, and how an agent launches their MCP server over stdio.

`GitHubConnection` is the GitHub part of the settings (API root, token, time limits).
`github_mcp_connection` returns the `StdioConnection` dict langchain-mcp-adapters takes and
`stdio_parameters` the same launch for `mcp.Client`; the child process sees only these
variables (plus the MCP SDK's safe default environment), rendered back from the object, so a
connection built in code (a sandbox's URL) reaches it as well as one read from the environment.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment

from pilothouse.tools.github.client import DEFAULT_API_URL
from pilothouse.tools.github.errors import display_url

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


def _child_env(connection: GitHubConnection, extra: Mapping[str, str] | None) -> dict[str, str]:
    return {**get_default_environment(), **connection.env(), **(extra or {})}


def github_mcp_connection(connection: GitHubConnection, *,
                          extra_env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A langchain-mcp-adapters `StdioConnection` that starts the server as a subprocess.

    `extra_env` passes other settings the server reads (`MAX_TOOL_OUTPUT_SIZE`,
    `PILOTHOUSE_LOG_LEVEL`).
    """
    return {"transport": "stdio", "command": sys.executable, "args": ["-m", MODULE],
            "env": _child_env(connection, extra_env)}


def stdio_parameters(connection: GitHubConnection, *,
                     extra_env: Mapping[str, str] | None = None) -> StdioServerParameters:
    """The same launch as `github_mcp_connection`, for `mcp.Client`."""
    return StdioServerParameters(command=sys.executable, args=["-m", MODULE],
                                 env=_child_env(connection, extra_env))
