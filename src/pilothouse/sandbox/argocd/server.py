"""Run the Argo CD sandbox: in the foreground (`serve_sandbox`) or on a free port in a
background thread (`running_sandbox`, over `sandbox.serving.running_app`) for tests, benchmarks
and demos.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn

from pilothouse.sandbox.argocd.api import create_sandbox_app
from pilothouse.sandbox.argocd.fleet import FleetSpec
from pilothouse.sandbox.argocd.state import DEFAULT_PASSWORD, DEFAULT_TOKEN, DEFAULT_USERNAME
from pilothouse.sandbox.serving import HOST, running_app, uvicorn_config
from pilothouse.sandbox.world_description import WorldDescription


@dataclass(frozen=True)
class RunningSandbox:
    """Where a started sandbox listens and the credentials it accepts."""

    url: str
    token: str
    username: str = DEFAULT_USERNAME
    password: str = DEFAULT_PASSWORD

    def __str__(self) -> str:
        return self.url


def serve_sandbox(apps: int = 819, port: int = 8081, token: str = DEFAULT_TOKEN,
                  host: str = HOST, spec: FleetSpec | None = None, **options: Any) -> None:
    """Serve a generated fleet of `apps` applications until interrupted."""
    fleet_spec = spec or FleetSpec(apps=apps)
    app = create_sandbox_app(fleet_spec, token, **options)
    uvicorn.Server(uvicorn_config(app, host, port)).run()


@contextmanager
def running_sandbox(spec: FleetSpec | None = None, *, apps: int | None = None,
                    world: WorldDescription | None = None, token: str = DEFAULT_TOKEN,
                    **options: Any) -> Iterator[RunningSandbox]:
    """Serve a sandbox on 127.0.0.1:<free port> in a thread; yields its URL and credentials.

    Pass a `FleetSpec` for a test fleet, or `world` and/or `apps` for a world's fleet (default:
    the default world's) of that size.
    """
    if spec is None:
        spec = FleetSpec() if apps is None and world is None else \
            FleetSpec.of(world or FleetSpec().world, apps=apps)
    elif apps is not None or world is not None:
        raise ValueError("pass either spec, or apps and world, not both")
    with running_app(create_sandbox_app(spec, token, **options)) as url:
        yield RunningSandbox(url=url, token=token,
                             username=options.get("username", DEFAULT_USERNAME),
                             password=options.get("password", DEFAULT_PASSWORD))
