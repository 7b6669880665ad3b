"""How an agent launches this MCP server: the stdio command and the environment it needs.

`stdio_parameters` is the launch for `mcp.Client`. The child process sees only the Argo CD
settings it needs (plus the MCP SDK's safe default environment), rendered back from a `Settings`
object, so settings built in code (the demo's sandbox URL) reach it as well as ones read from
the environment.
"""

from __future__ import annotations

from mcp import StdioServerParameters

from pilothouse.config import Settings
from pilothouse.tools.argocd.instances import instances_env
from pilothouse.tools.mcp_support import stdio_server
from pilothouse.tools.tool_filter import cli_arguments

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
    env.update(instances_env(settings))  # issue 18: named instances
    return env


def stdio_parameters(settings: Settings) -> StdioServerParameters:
    """Start `python -m pilothouse.tools.argocd` for `settings`, for `mcp.Client`."""
    return stdio_server(MODULE, settings_env(settings), cli_arguments(settings, "argocd"))
