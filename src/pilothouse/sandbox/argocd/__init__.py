"""An Argo CD compatible API over a generated fleet, for the demo, tests and benchmarks.

It is a sandbox, and says so: `/api/version` names it, every response carries
`X-Pilothouse-Sandbox: true`. Entry points: `create_sandbox_app` (a Starlette app),
`serve_sandbox` (foreground), `running_sandbox` (background thread on a free port) and the
Typer app `sandbox_cli` (`pilothouse sandbox argocd`).
"""

from pilothouse.sandbox.argocd.api import create_sandbox_app
from pilothouse.sandbox.argocd.fleet import Fleet, FleetSpec, Marker
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox, serve_sandbox
from pilothouse.sandbox.argocd.state import DEFAULT_PASSWORD, DEFAULT_TOKEN, DEFAULT_USERNAME

__all__ = [
    "DEFAULT_PASSWORD",
    "DEFAULT_TOKEN",
    "DEFAULT_USERNAME",
    "Fleet",
    "FleetSpec",
    "Marker",
    "RunningSandbox",
    "create_sandbox_app",
    "running_sandbox",
    "serve_sandbox",
]
