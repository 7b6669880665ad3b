"""Run the sandbox: in the foreground (`serve_sandbox`) or on a free port in a background thread
(`running_sandbox`) for tests, benchmarks and demos.

The background server binds its socket before the thread starts (no race for the port) and the
context manager yields only once uvicorn reports it is serving.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn

from pilothouse.sandbox.argocd.api import create_sandbox_app
from pilothouse.sandbox.argocd.fleet import FleetSpec
from pilothouse.sandbox.argocd.state import DEFAULT_PASSWORD, DEFAULT_TOKEN, DEFAULT_USERNAME

HOST = "127.0.0.1"


@dataclass(frozen=True)
class RunningSandbox:
    """Where a started sandbox listens and the credentials it accepts."""

    url: str
    token: str
    username: str = DEFAULT_USERNAME
    password: str = DEFAULT_PASSWORD

    def __str__(self) -> str:
        return self.url


def _config(app: Any, host: str, port: int, **options: Any) -> uvicorn.Config:
    # ws="none": the sandbox has no websockets, and importing them can raise deprecation
    # warnings that a warnings-as-errors test run would turn into failures.
    return uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off",
                          ws="none", access_log=False, **options)


def serve_sandbox(apps: int = 819, port: int = 8080, token: str = DEFAULT_TOKEN,
                  host: str = HOST, spec: FleetSpec | None = None, **options: Any) -> None:
    """Serve a generated fleet of `apps` applications until interrupted."""
    fleet_spec = spec or FleetSpec(apps=apps)
    uvicorn.Server(_config(create_sandbox_app(fleet_spec, token, **options), host, port)).run()


@contextmanager
def running_app(app: Any, **uvicorn_options: Any) -> Iterator[str]:
    """Serve any ASGI `app` on 127.0.0.1:<free port> in a thread; yields its base URL.

    `uvicorn_options` go to `uvicorn.Config` (e.g. `ssl_certfile` / `ssl_keyfile` for HTTPS,
    in which case the URL starts with https).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, HOST, port, **uvicorn_options))
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # reported to the caller, not lost in the thread
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"sandbox-{port}", daemon=True)
    thread.start()
    try:
        while not server.started and thread.is_alive():
            thread.join(0.01)
        if failure or not server.started:
            raise RuntimeError(f"the sandbox server did not start: {failure[:1]}")
        scheme = "https" if uvicorn_options.get("ssl_certfile") else "http"
        yield f"{scheme}://{HOST}:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@contextmanager
def running_sandbox(spec: FleetSpec | None = None, *, apps: int | None = None,
                    token: str = DEFAULT_TOKEN, **options: Any) -> Iterator[RunningSandbox]:
    """Serve a sandbox on 127.0.0.1:<free port> in a thread; yields its URL and credentials.

    Pass a `FleetSpec` for a test fleet, or just `apps` for the default fleet of that size.
    """
    if spec is None:
        spec = FleetSpec() if apps is None else FleetSpec(apps=apps)
    elif apps is not None:
        raise ValueError("pass either spec or apps, not both")
    with running_app(create_sandbox_app(spec, token, **options)) as url:
        yield RunningSandbox(url=url, token=token,
                             username=options.get("username", DEFAULT_USERNAME),
                             password=options.get("password", DEFAULT_PASSWORD))
