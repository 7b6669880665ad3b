"""Run the GitHub sandbox: in the foreground (`serve_github_sandbox`) or on a free port in a
background thread (`running_github_sandbox`) for tests, benchmarks and demos.

The thread, socket and start-up handshake are `sandbox.serving.running_app`; this module
adds what a GitHub client needs to know (URL and token) and a handle on the rate limits, so a
test can exhaust them while the server runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn

from pilothouse.sandbox.github.api import (
    DEFAULT_TOKEN,
    GitHubSandboxState,
    create_github_sandbox_app,
)
from pilothouse.sandbox.github.limits import RateLimits
from pilothouse.sandbox.github.world import World, WorldSpec
from pilothouse.sandbox.serving import HOST, running_app, uvicorn_config
from pilothouse.sandbox.world_description import WorldDescription


@dataclass(frozen=True)
class RunningGitHubSandbox:
    """Where a started sandbox listens, the token it accepts, and its live state."""

    url: str
    token: str
    state: GitHubSandboxState

    @property
    def limits(self) -> RateLimits:
        """The rate limits: `exhaust`, `throttle` and `restore` them from a test."""
        return self.state.limits

    @property
    def world(self) -> World:
        return self.state.world

    def __str__(self) -> str:
        return self.url


def serve_github_sandbox(port: int = 8090, token: str = DEFAULT_TOKEN, host: str = HOST,
                         spec: WorldSpec | None = None, **options: Any) -> None:
    """Serve the generated organisation until interrupted."""
    app = create_github_sandbox_app(spec, token, **options)
    uvicorn.Server(uvicorn_config(app, host, port)).run()


@contextmanager
def running_github_sandbox(spec: WorldSpec | None = None, *, token: str = DEFAULT_TOKEN,
                           world: WorldDescription | None = None,
                           **options: Any) -> Iterator[RunningGitHubSandbox]:
    """Serve a sandbox on 127.0.0.1:<free port> in a thread; yields its URL, token and state.

    `world` (or a `WorldSpec`) says whose organisation; `options` go to
    `create_github_sandbox_app` (`core_limit`, `search_limit`, ...).
    """
    if world is not None:
        if spec is not None:
            raise ValueError("pass either spec or world, not both")
        spec = WorldSpec.of(world)
    app = create_github_sandbox_app(spec, token, **options)
    with running_app(app) as url:
        yield RunningGitHubSandbox(url=url, token=token, state=app.state.github)
