"""The REST API and web UI in one FastAPI app, over any agent graph with a checkpointer."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi_offline import FastAPIOffline
from starlette.types import ASGIApp

from pilothouse import __version__
from pilothouse.http_guard import HostGuard, HostPolicy
from pilothouse.interfaces.api import conversations, operations
from pilothouse.interfaces.api.errors import install_error_handlers
from pilothouse.interfaces.api.identity import KeyRing
from pilothouse.interfaces.api.limits import ApiLimits
from pilothouse.interfaces.api.registry import ConversationRegistry, ConversationStore
from pilothouse.interfaces.api.runtime import ApiRuntime, describe_agent
from pilothouse.interfaces.api.security import AuthMiddleware, BodyLimitMiddleware, check_exposure
from pilothouse.interfaces.web import mount_web_ui
from pilothouse.runtime.handle import OpenAgent
from pilothouse.runtime.turn_locks import TurnLocks

logger = logging.getLogger("pilothouse.api")

DESCRIPTION = """Ask Pilothouse's agents questions and answer their approval requests.

Answers stream as server-sent events (`text/event-stream`), one JSON object per event with
`kind`, `text` and `data`. Every error is JSON `{error, suggestion}`. Authenticate with
`Authorization: Bearer <key>` (keys from `PILOTHOUSE_API_KEYS`); a caller sees and acts on
its own conversations only.
"""


def _metrics() -> Any:
    try:
        from pilothouse.interfaces.api.metrics import ApiMetrics
    except ImportError:  # prometheus_client is not installed: no /metrics
        return None
    return ApiMetrics()


def create_api_app(
    open_agent: OpenAgent,
    *,
    api_keys: Sequence[str] = (),
    bind_host: str,
    registry_path: Path | None = None,
    open_registry: Callable[[], AbstractAsyncContextManager[ConversationStore]] | None = None,
    admin_keys: Sequence[str] = (),
    keyring: KeyRing | None = None,
    max_body_bytes: int = 64_000,
    body_timeout_seconds: float = 30.0,
    cors_origins: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
    fallback: ASGIApp | None = None,
    locks: TurnLocks | None = None,
    limits: ApiLimits | None = None,
) -> FastAPI:
    """The REST API and web UI over the agent that `open_agent()` yields.

    `open_agent()` is entered in the app's lifespan and yields the factory's `AgentHandle`
    (its graph has a checkpointer); conversations are listed in SQLite at `registry_path`, or
    in the store `open_registry()` opens (PostgreSQL for several replicas).

    Callers are identified by `api_keys` / `admin_keys` (entries `name=key` or `key`), or by
    a `keyring` already checked against `bind_host` by the caller; without keys the app
    refuses a non-loopback `bind_host` (ConfigurationError). Before anything else
    (`http_guard`), a request names the server in `Host` (loopback, `bind_host` or one of
    `allowed_hosts`, else 421) and, from a browser, comes from its own page, a name of
    `allowed_hosts` or one of `cors_origins` (else 403). `fallback` serves every path the API
    does not (e.g. the A2A routes of `pilothouse serve`), behind the same checks; its own
    lifespan is not run, so open what it needs before serving. `locks` are the process's
    running turns, shared with any other door to the same conversations; `limits`
    its rate limits (default: the settings' defaults), shared the same way.
    """
    if keyring is None:
        keyring = KeyRing.parse(api_keys, admin_keys)
        check_exposure(keyring, bind_host)
    hosts = HostPolicy.for_server(bind_host, allowed_hosts, cors_origins=cors_origins)
    turn_locks = locks or TurnLocks()
    metrics = _metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            agent = await stack.enter_async_context(open_agent())
            if open_registry is not None:
                registry = await stack.enter_async_context(open_registry())
            else:
                assert registry_path is not None, "give registry_path or open_registry"
                registry = await stack.enter_async_context(
                    ConversationRegistry.open(registry_path))
            app.state.runtime = ApiRuntime(agent, registry, observer=metrics,
                                           locks=turn_locks)
            info = app.state.agent_info = describe_agent(agent)
            logger.info("serving agent %s (model %s, %d tools)", info["name"], info["model"],
                        len(info["tools"]))
            try:
                yield
            finally:
                app.state.runtime = app.state.agent_info = None

    app = FastAPIOffline(
        title="Pilothouse", version=__version__, description=DESCRIPTION, lifespan=lifespan,
        docs_url="/docs", redoc_url=None, static_url="/docs-static",
    )
    app.state.api_keys = keyring.names  # what the page needs to know: are keys required
    app.state.runtime = None
    app.state.metrics = metrics
    app.state.limits = limits = limits or ApiLimits()
    install_error_handlers(app)
    app.include_router(operations.router)
    app.include_router(conversations.router)
    metrics_routes = operations.metrics_router() if metrics is not None else None
    if metrics_routes is not None:
        app.include_router(metrics_routes)
    mount_web_ui(app)
    if fallback is not None:
        app.mount("/", fallback)  # after every route above, so it only sees the rest
    # Added innermost first: the body limit and authentication run inside CORS (so a 413 or
    # 401 still carries CORS headers), authentication before a body is read, and the request
    # metrics see every response, including rejections.
    app.add_middleware(BodyLimitMiddleware, max_bytes=max_body_bytes,
                       timeout=body_timeout_seconds)
    app.add_middleware(AuthMiddleware, keyring=keyring, failures=limits.auth_failures)
    if cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins),
                           allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type"],
                           expose_headers=["X-Thread-Id"])
    if metrics is not None:
        from pilothouse.interfaces.api.metrics import RequestMetricsMiddleware

        app.add_middleware(RequestMetricsMiddleware, metrics=metrics)
    # Outermost: a request for a name this server does not answer to (DNS rebinding) or from
    # another site's page does no work at all, not even a metric.
    app.add_middleware(HostGuard, policy=hosts)
    return app
