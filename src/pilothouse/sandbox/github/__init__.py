"""A GitHub REST API compatible sandbox over a generated organisation, for demos and tests.

It is a sandbox, and says so: every response carries `X-Pilothouse-Sandbox: true`. Entry points:
`create_github_sandbox_app` (a Starlette app), `serve_github_sandbox` (foreground),
`running_github_sandbox` (background thread on a free port) and the Typer app `sandbox_cli`
(`pilothouse sandbox github`).
"""

from pilothouse.sandbox.github.api import (
    DEFAULT_TOKEN,
    GitHubSandboxState,
    create_github_sandbox_app,
)
from pilothouse.sandbox.github.limits import RateLimits
from pilothouse.sandbox.github.records import RepoSpec
from pilothouse.sandbox.github.server import (
    RunningGitHubSandbox,
    running_github_sandbox,
    serve_github_sandbox,
)
from pilothouse.sandbox.github.world import DEFAULT_REPOS, World, WorldSpec

__all__ = [
    "DEFAULT_REPOS",
    "DEFAULT_TOKEN",
    "GitHubSandboxState",
    "RateLimits",
    "RepoSpec",
    "RunningGitHubSandbox",
    "World",
    "WorldSpec",
    "create_github_sandbox_app",
    "running_github_sandbox",
    "serve_github_sandbox",
]
