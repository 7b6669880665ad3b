"""`pilothouse mcp argocd`: run the Argo CD MCP server over stdio or streamable HTTP."""

from __future__ import annotations

from pilothouse.config import Settings
from pilothouse.tools.argocd.server import build_argocd_server
from pilothouse.tools.http_api.cli import serve_app


def _lacking(settings: Settings) -> str | None:
    # Still served: every tool then answers with a clear "ARGOCD_URL is not set" error.
    return None if settings.argocd_url else "ARGOCD_URL is not set; tools will say so until it is."


mcp_cli = serve_app(
    "argocd", title="Argo CD", default_port=8765, build=build_argocd_server, notice=_lacking,
    help="Run the Argo CD MCP server (reads ARGOCD_URL, ARGOCD_TOKEN, ... from the environment).")
