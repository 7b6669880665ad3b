"""Serve a sandbox's ASGI app: on 127.0.0.1:<free port> in a background thread, for tests,
benchmarks and demos; both sandboxes (Argo CD, GitHub) and the scripted model server use it.

The background server binds its socket before the thread starts (no race for the port) and the
context manager yields only once uvicorn reports it is serving.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

HOST = "127.0.0.1"


def uvicorn_config(app: Any, host: str, port: int, **options: Any) -> uvicorn.Config:
    """Quiet defaults (no lifespan, no websockets) that `options` may override."""
    # ws="none": the sandbox has no websockets, and importing them can raise deprecation
    # warnings that a warnings-as-errors test run would turn into failures.
    settings = {"log_level": "warning", "lifespan": "off", "ws": "none", "access_log": False,
                **options}
    return uvicorn.Config(app, host=host, port=port, **settings)


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
    server = uvicorn.Server(uvicorn_config(app, HOST, port, **uvicorn_options))
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
