"""How an agent launches this MCP server: the stdio command and the environment it needs.

`argocd_mcp_connection` returns the `StdioConnection` dict langchain-mcp-adapters takes;
`stdio_parameters` the same launch for `mcp.Client`. The child process sees only the Argo CD
settings it needs (plus PATH/HOME), rendered back from a `Settings` object, so settings built in
code (the demo's sandbox URL) reach it as well as ones read from the environment.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment

from pilothouse.config import Settings

MODULE = "pilothouse.tools.argocd"


def settings_env(settings: Settings) -> dict[str, str]:
    """The environment variables that reproduce `settings`' Argo CD part in a child process."""
    env = {
        "ARGOCD_VERIFY_SSL": "true" if settings.argocd_verify_ssl else "false",
        "ARGOCD_TIMEOUT": f"{settings.argocd_timeout_seconds:g}",
        "ARGOCD_READ_ONLY": "true" if settings.argocd_read_only else "false",
        "MAX_SEARCH_RESULTS": str(settings.max_search_results),
        "WARN_SEARCH_RESULTS": str(settings.warn_search_results),
        "MAX_TOOL_OUTPUT_SIZE": str(settings.max_tool_output_size),
        "PILOTHOUSE_LOG_LEVEL": settings.log_level,
    }
    optional = {
        "ARGOCD_URL": settings.argocd_url,
        "ARGOCD_TOKEN": settings.argocd_token,
        "ARGOCD_USERNAME": settings.argocd_username,
        "ARGOCD_PASSWORD": settings.argocd_password,
        "ARGOCD_CA_BUNDLE": str(settings.argocd_ca_bundle) if settings.argocd_ca_bundle else None,
    }
    env.update({k: v for k, v in optional.items() if v})
    return env


def _child_env(settings: Settings) -> dict[str, str]:
    return {**get_default_environment(), **settings_env(settings)}


def argocd_mcp_connection(settings: Settings) -> dict[str, Any]:
    """A langchain-mcp-adapters `StdioConnection` that starts this server as a subprocess."""
    return {"transport": "stdio", "command": sys.executable, "args": ["-m", MODULE],
            "env": _child_env(settings)}


def stdio_parameters(settings: Settings) -> StdioServerParameters:
    """The same launch as `argocd_mcp_connection`, for `mcp.Client`."""
    return StdioServerParameters(command=sys.executable, args=["-m", MODULE],
                                 env=_child_env(settings))
