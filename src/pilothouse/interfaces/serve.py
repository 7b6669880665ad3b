"""`pilothouse serve`: the supervisor and its agents over A2A, in one process or one agent alone.

Without `--agent` every configured specialist runs here with the supervisor over them (remote
ones by PILOTHOUSE_AGENTS_<NAME>_URL stay remote); each agent answers at `/a2a/<name>/`, and
the supervisor's card is also at `/.well-known/agent-card.json`. `--agent NAME` (repeatable)
runs just those, so agents scale out as separate services behind one supervisor.

Every mode puts one authentication middleware in front of every route (REST API, web UI, A2A
JSON-RPC and REST bindings): keys from PILOTHOUSE_API_KEYS / PILOTHOUSE_ADMIN_KEYS, or, without
keys, this machine only, and then a non-loopback bind is refused before anything starts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

import typer
import uvicorn
from rich.console import Console
from starlette.applications import Starlette

from pilothouse.a2a.server import AgentEndpoint, a2a_app, agent_endpoint
from pilothouse.a2a.store import open_task_engine
from pilothouse.agents.factory import open_agent_factory
from pilothouse.agents.registry import AGENT_NAMES, SUPERVISOR, Topology, startup_failure
from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError, PilothouseError
from pilothouse.interfaces.api.identity import KeyRing
from pilothouse.interfaces.api.security import (
    AuthMiddleware,
    BodyLimitMiddleware,
    check_exposure,
)
from pilothouse.interfaces.listen import listening_socket
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.handle import AgentHandle
from pilothouse.runtime.shared_locks import open_shared_locks
from pilothouse.runtime.turn_locks import TurnLocks

log = logging.getLogger("pilothouse.serve")


@dataclass
class ServeApp:
    """The ASGI app of `pilothouse serve` and the agents it serves."""

    app: Any
    endpoints: list[AgentEndpoint]
    failed: dict[str, str]


def with_api(settings: Settings, a2a: Starlette, entry: AgentHandle, *, host: str,
             keyring: KeyRing, locks: TurnLocks) -> Any:
    """The REST API and web UI at `/` over `entry`, the A2A routes behind them (and behind
    the API's authentication)."""
    from pilothouse.interfaces.api.app import create_api_app
    from pilothouse.interfaces.api.server import open_registry

    @asynccontextmanager
    async def open_agent() -> AsyncIterator[AgentHandle]:
        yield entry  # already open: the serve process owns its lifetime

    return create_api_app(open_agent, keyring=keyring, bind_host=host, locks=locks,
                          max_body_bytes=settings.api_max_body_bytes,
                          cors_origins=settings.cors_origins,
                          open_registry=lambda: open_registry(settings), fallback=a2a)


def agents_to_run(requested: Sequence[str] | None, topology: Topology) -> list[str]:
    """`--agent` names checked, or by default every local specialist plus the supervisor."""
    if not requested:
        return [*topology.local_specialists(), SUPERVISOR]
    unknown = sorted(set(requested) - set(AGENT_NAMES))
    if unknown:
        raise ConfigurationError(f"Unknown agent(s): {', '.join(unknown)}.",
                                 hint="Choose from " + ", ".join(AGENT_NAMES) + ".")
    return list(dict.fromkeys(requested))


@asynccontextmanager
async def open_serve_app(
    settings: Settings, *, public_url: str, agents: Sequence[str] | None = None,
    topology: Topology | None = None, model: ModelSetup | None = None,
    api: bool = False, host: str = "127.0.0.1", api_keys: Sequence[str] | None = None,
) -> AsyncIterator[ServeApp]:
    """Open the agents (from the one `AgentFactory`: tool servers, checkpointer, memory
    monitor), the task store, and the app serving them.

    A specialist that fails to start is left out with an error in the log when it was not
    asked for by name; asked for by name (`--agent`), its failure is fatal. With `api` the
    REST API and web UI answer at `/` over the entry agent (the supervisor when it runs).
    Callers are identified by `api_keys` (default: the settings') and the settings' admin
    keys; without any, a non-loopback `host` is refused (ConfigurationError) first.
    """
    keyring = KeyRing.parse(settings.api_keys if api_keys is None else api_keys,
                            settings.admin_keys)
    check_exposure(keyring, host)
    topology = topology or Topology.from_settings(settings)
    names = agents_to_run(agents, topology)
    async with AsyncExitStack() as stack:
        # One turn per conversation, whichever door it comes in by (and, on PostgreSQL,
        # whichever replica: the database's advisory locks, and this replica's liveness).
        locks = TurnLocks(await stack.enter_async_context(open_shared_locks(settings)))
        factory = await stack.enter_async_context(
            open_agent_factory(settings, model=model, topology=topology))
        await relax_sqlite_sync(factory.checkpointer)
        engine = await stack.enter_async_context(open_task_engine(settings))
        served: dict[str, AgentHandle] = {}
        failed: dict[str, str] = {}
        for name in (n for n in names if n != SUPERVISOR):
            try:
                served[name] = await stack.enter_async_context(factory.open_specialist(name))
            except Exception as error:
                reason = startup_failure(error)
                if agents:
                    raise ConfigurationError(f"The {name} agent could not start: {reason}",
                                             hint="Check its settings; run `pilothouse doctor`."
                                             ) from error
                failed[name] = reason
                log.error("The %s agent could not start (%s); serving without it.", name,
                          reason)
        if SUPERVISOR in names:
            # A specialist that failed here is not retried for the supervisor's own use.
            factory.topology = dataclasses.replace(
                topology, configured=topology.configured - set(failed))
            served[SUPERVISOR] = await stack.enter_async_context(
                factory.open_supervisor(served))
        if not served:
            raise ConfigurationError("No agent could start.", hint="See the errors above.")
        endpoints = [await agent_endpoint(a, engine, public_url, locks=locks,
                                          requires_key=bool(keyring))
                     for a in served.values()]
        for endpoint in endpoints:
            # Also here: a lifespan of the A2A app does not run when it sits behind the API.
            stack.push_async_callback(endpoint.handler.aclose)
        entry = SUPERVISOR if SUPERVISOR in served else next(iter(served))
        app: Any = a2a_app(endpoints, entry=entry)
        if api:
            app = with_api(settings, app, served[entry], host=host, keyring=keyring,
                           locks=locks)
        else:
            # The same limit as the API's: an A2A message is read whole into memory and the
            # task store, so an unbounded one costs memory and disk before anything checks it.
            app = AuthMiddleware(BodyLimitMiddleware(app, settings.api_max_body_bytes), keyring)
        yield ServeApp(app, endpoints, failed)


async def relax_sqlite_sync(checkpointer: object) -> None:
    """WAL's synchronous=NORMAL on a SQLite checkpointer (no-op for PostgreSQL).

    A turn writes about eight checkpoints; with the default FULL each commit waits for an fsync,
    which measured 150 ms a turn against 17 ms with NORMAL (bench/serve_bench.py). A commit
    still survives a killed process (the restart tests kill -9); only a power cut may lose the
    last ones, and a server that cannot accept that uses PostgreSQL.
    """
    connection = getattr(checkpointer, "conn", None)
    if connection is not None and type(connection).__module__.startswith("aiosqlite"):
        await connection.execute("PRAGMA synchronous=NORMAL")


def default_public_url(host: str, port: int) -> str:
    """Where others reach this server: the host itself, or this machine's name for 0.0.0.0."""
    name = socket.getfqdn() if host in ("0.0.0.0", "::", "") else host
    return f"http://{name}:{port}"


async def run_server(settings: Settings, *, host: str, port: int, public_url: str,
                     agents: Sequence[str] | None, api: bool, api_keys: Sequence[str] | None,
                     err: Console) -> None:
    """Serve until SIGINT/SIGTERM, then close every agent cleanly.

    The port is bound first, so a busy port or a foreign address fails in one line before
    any agent, tool server or database is opened.
    """
    sock = listening_socket(host, port)
    async with open_serve_app(settings, public_url=public_url, agents=agents, api=api,
                              host=host, api_keys=api_keys) as served:
        for endpoint in served.endpoints:
            err.print(f"[bold]{endpoint.agent.name}[/] A2A at {public_url}{endpoint.path}/ "
                      f"({len(endpoint.agent.tools)} skills)", highlight=False)
        if api:
            err.print(f"REST API and web UI at {public_url}/", highlight=False)
        for name, reason in served.failed.items():
            err.print(f"[red]{name} not started:[/] {reason}", highlight=False)
        if not agents:  # by default every configured agent runs: say which are not, and why
            for name, reason in Topology.from_settings(settings).left_out().items():
                err.print(f"[yellow]{name} not started:[/] {reason}", highlight=False)
        config = uvicorn.Config(served.app, host=host, port=port, lifespan="on", ws="none",
                                log_level=settings.log_level.lower(), access_log=False)
        with sock:
            await uvicorn.Server(config).serve(sockets=[sock])


def serve_command(
    port: Annotated[int | None, typer.Option(
        min=1, max=65535, help="Port to listen on [default: PILOTHOUSE_API_PORT or 8080].",
        show_default=False)] = None,
    host: Annotated[str | None, typer.Option(
        help="Interface to bind, 0.0.0.0 in a container [default: PILOTHOUSE_API_HOST or "
             "127.0.0.1].", show_default=False)] = None,
    agent: Annotated[list[str] | None, typer.Option(
        "--agent", help="Run only this agent (repeatable): argocd, github, devops, supervisor.",
    )] = None,
    public_url: Annotated[str | None, typer.Option(
        help="Base URL others reach this server at (agent cards advertise it).")] = None,
    api: Annotated[bool | None, typer.Option(
        "--api/--no-api", help="The REST API and web UI at / (default: when the supervisor "
                               "runs here).")] = None,
    api_keys: Annotated[str, typer.Option(
        envvar="PILOTHOUSE_API_KEYS", show_envvar=True,
        help="Comma-separated API keys, each name=key or a bare key; every route that does "
             "work requires one (needed off 127.0.0.1).")] = "",
) -> None:
    """Serve the supervisor and agents over A2A (each at /a2a/<name>/) until Ctrl-C."""
    from pilothouse.observability.logging import configure_logging
    from pilothouse.redaction import Redactor

    err = Console(stderr=True, soft_wrap=True)  # an error stays one line, whatever the width
    try:
        settings = Settings.from_env()
        configure_logging(settings.log_level, settings.log_json,
                          redactor=Redactor(settings.secret_values()))
        host = host or settings.api_host
        port = port or settings.api_port
        url = (public_url or default_public_url(host, port)).rstrip("/")
        keys = [k.strip() for k in api_keys.split(",") if k.strip()]
        with_api_ui = api if api is not None else (not agent or SUPERVISOR in agent)
        asyncio.run(run_server(settings, host=host, port=port, public_url=url, agents=agent,
                               api=with_api_ui, api_keys=keys, err=err))
    except PilothouseError as error:
        hint = f" [yellow]What to do:[/] {error.hint}" if error.hint else ""
        err.print(f"[bold red]Error:[/] {error.message}{hint}", highlight=False)
        raise typer.Exit(2) from None


def main() -> None:
    """`python -m pilothouse.interfaces.serve`: the same as `pilothouse serve`."""
    typer.run(serve_command)


if __name__ == "__main__":
    main()
