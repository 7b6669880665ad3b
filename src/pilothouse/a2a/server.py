"""Serve agent graphs over A2A with the SDK's route factories, each agent under its own path.

`/a2a/<name>/` is an agent's base URL: its card at `.well-known/agent-card.json`, JSON-RPC at
the base itself, the REST binding under `rest/`. `/.well-known/agent-card.json` at the root is
the card of the entry agent (the supervisor, or the one agent served alone).

Authentication is not here: `pilothouse serve` puts one middleware in front of every route
(see `interfaces.api.security`), which sets the request's user; the SDK passes it to the
handler in the call context, and every task is stored under that caller's name, so a caller
lists, reads, continues, subscribes to and cancels only its own tasks (another's is "task not
found").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.types.a2a_pb2 import AgentCard
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount

from pilothouse.a2a.card import REST_SUFFIX, agent_card
from pilothouse.a2a.executor import ConversationExecutor
from pilothouse.a2a.handler import CancellingRequestHandler
from pilothouse.a2a.namespaces import caller_name
from pilothouse.a2a.publisher import install_queue_log_filter
from pilothouse.a2a.request_checks import install_client_error_filter
from pilothouse.a2a.store import agent_task_store
from pilothouse.errors import error_body
from pilothouse.observability.incidents import internal_error_response
from pilothouse.rate_limit import RateLimiter
from pilothouse.runtime.handle import AgentHandle
from pilothouse.runtime.turn_locks import TurnLocks


@dataclass
class AgentEndpoint:
    """One agent's A2A surface: card, executor, request handler and routes."""

    agent: AgentHandle
    path: str
    card: AgentCard
    executor: ConversationExecutor
    handler: CancellingRequestHandler
    routes: list[BaseRoute]


def agent_path(name: str) -> str:
    return f"/a2a/{name}"


async def agent_endpoint(agent: AgentHandle, engine: AsyncEngine, public_url: str, *,
                         locks: TurnLocks | None = None, requires_key: bool = False,
                         new_conversations: RateLimiter | None = None) -> AgentEndpoint:
    """The endpoint of `agent`, its tasks kept in its own table of `engine`'s database.

    `locks` are the process's running turns (shared with the REST API); `requires_key`
    makes the card declare the bearer scheme the server's middleware enforces;
    `new_conversations` limits the conversations a caller starts (shared with the REST API's
    `POST /conversations`; None: no limit).
    """
    path = agent_path(agent.name)
    card = agent_card(agent.name, agent.description, agent.tools,
                      public_url.rstrip("/") + path + "/", requires_key=requires_key)
    executor = ConversationExecutor(agent.graph, agent=agent.name, locks=locks)
    shared = locks.shared if locks is not None else None
    store = await agent_task_store(engine, agent.name,
                                   replica_key=shared.replica_key if shared else None)
    store.owner_resolver = caller_name  # the anonymous caller too gets a name, not ''

    # A task parked waiting for an approval is released from memory after five idle minutes;
    # the approval, when it comes, recreates it from the task store.
    handler = CancellingRequestHandler(executor, store, card, agent=agent.name,
                                       new_conversations=new_conversations,
                                       interrupted_task_timeout=300)
    routes: list[BaseRoute] = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        Mount(f"/{REST_SUFFIX}", routes=create_rest_routes(handler)),
    ]
    return AgentEndpoint(agent, path, card, executor, handler, [Mount(path, routes=routes)])


def a2a_app(endpoints: Sequence[AgentEndpoint], *, entry: str | None = None,
            extra_routes: Sequence[BaseRoute] = ()) -> Starlette:
    """A Starlette app serving every endpoint; `entry` names the agent of the root card."""
    install_queue_log_filter()
    install_client_error_filter()
    routes: list[BaseRoute] = []
    by_name = {e.agent.name: e for e in endpoints}
    if entry is not None:
        routes.extend(create_agent_card_routes(by_name[entry].card))
    for endpoint in endpoints:
        routes.extend(endpoint.routes)
    routes.extend(extra_routes)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            for endpoint in endpoints:
                await endpoint.handler.aclose()

    return Starlette(routes=routes, lifespan=lifespan,
                     exception_handlers={HTTPException: _http_error,
                                         Exception: internal_error_response})


async def _http_error(request: Request, exc: Exception) -> Response:
    """Routing errors (404, 405) as JSON, like every other error of the server."""
    assert isinstance(exc, HTTPException)
    agents = "/a2a/<name>/ (argocd, github, devops, supervisor)"
    suggestion = (f"Check the HTTP method: A2A JSON-RPC is POST to {agents}."
                  if exc.status_code == 405 else
                  f"Check the path: each agent answers at {agents}, its card at "
                  "/a2a/<name>/.well-known/agent-card.json.")
    return JSONResponse(error_body(str(exc.detail), suggestion), status_code=exc.status_code,
                        headers=exc.headers)
