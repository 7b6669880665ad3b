"""`pilothouse serve`: the supervisor and its agents over A2A, in one process or one agent alone.

Without `--agent` every configured specialist runs here with the supervisor over them (remote
ones by PILOTHOUSE_AGENTS_<NAME>_URL stay remote); each agent answers at `/a2a/<name>/`, and
the supervisor's card is also at `/.well-known/agent-card.json`. `--agent NAME` (repeatable)
runs just those, so agents scale out as separate services behind one supervisor.

Every mode puts one authentication middleware in front of every route (REST API, web UI, A2A
JSON-RPC and REST bindings): keys from PILOTHOUSE_API_KEYS / PILOTHOUSE_ADMIN_KEYS, or, without
keys, this machine only, and then a non-loopback bind is refused before anything starts.
Outside it, before any work, a Host/Origin guard (`http_guard`): a request must name this
server (loopback names, the bound address, the public URL's host, PILOTHOUSE_ALLOWED_HOSTS),
so a page on another site can neither rebind a name to it nor post to it from the browser.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import typer
import uvicorn
from rich.console import Console
from rich.markup import escape
from starlette.applications import Starlette

from pilothouse.a2a.server import AgentEndpoint, a2a_app, agent_endpoint
from pilothouse.a2a.store import open_task_engine
from pilothouse.agents.factory import open_agent_factory
from pilothouse.agents.registry import AGENT_NAMES, SUPERVISOR, Topology, startup_failure
from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.http_guard import HostGuard, HostPolicy
from pilothouse.interfaces.api.identity import KeyRing
from pilothouse.interfaces.api.limits import ApiLimits
from pilothouse.interfaces.api.security import (
    AuthMiddleware,
    BodyLimitMiddleware,
    check_exposure,
)
from pilothouse.interfaces.listen import header_timeout_protocol, listening_socket
from pilothouse.models.registry import ModelSetup
from pilothouse.private_files import restrict_umask
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
    hosts: HostPolicy | None = None


def with_api(settings: Settings, a2a: Starlette, entry: AgentHandle, *, host: str,
             keyring: KeyRing, locks: TurnLocks, limits: ApiLimits,
             allowed_hosts: Sequence[str] = ()) -> Any:
    """The REST API and web UI at `/` over `entry`, the A2A routes behind them (and behind
    the API's authentication)."""
    from pilothouse.interfaces.api.app import create_api_app
    from pilothouse.interfaces.api.server import open_registry

    @asynccontextmanager
    async def open_agent() -> AsyncIterator[AgentHandle]:
        yield entry  # already open: the serve process owns its lifetime

    return create_api_app(open_agent, keyring=keyring, bind_host=host, locks=locks,
                          limits=limits,
                          max_body_bytes=settings.api_max_body_bytes,
                          body_timeout_seconds=settings.api_body_timeout_seconds,
                          cors_origins=settings.cors_origins, allowed_hosts=allowed_hosts,
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
    # The names a request may give as Host: the settings' and the one agent cards advertise.
    allowed_hosts = [*settings.allowed_hosts, *filter(None, [urlsplit(public_url).hostname])]
    hosts = HostPolicy.for_server(host, allowed_hosts, cors_origins=settings.cors_origins)
    limits = ApiLimits.from_settings(settings)  # one set per process, whichever door
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
                                          requires_key=bool(keyring),
                                          new_conversations=limits.new_conversations)
                     for a in served.values()]
        for endpoint in endpoints:
            # Also here: a lifespan of the A2A app does not run when it sits behind the API.
            stack.push_async_callback(endpoint.handler.aclose)
        entry = SUPERVISOR if SUPERVISOR in served else next(iter(served))
        app: Any = a2a_app(endpoints, entry=entry)
        if api:
            app = with_api(settings, app, served[entry], host=host, keyring=keyring,
                           locks=locks, limits=limits, allowed_hosts=allowed_hosts)
        else:
            # The same limit as the API's: an A2A message is read whole into memory and the
            # task store, so an unbounded one costs memory and disk before anything checks it.
            app = AuthMiddleware(BodyLimitMiddleware(app, settings.api_max_body_bytes,
                                                     settings.api_body_timeout_seconds), keyring,
                                 failures=limits.auth_failures)
            app = HostGuard(app, hosts)  # outermost: a foreign Host or Origin does no work
        yield ServeApp(app, endpoints, failed, hosts)


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
        if served.hosts is not None:
            err.print(f"Answers to Host names: {escape(served.hosts.describe())} "
                      f"(more: PILOTHOUSE_ALLOWED_HOSTS)", highlight=False)
        for name, reason in served.failed.items():
            err.print(f"[red]{name} not started:[/] {reason}", highlight=False)
        if not agents:  # by default every configured agent runs: say which are not, and why
            for name, reason in Topology.from_settings(settings).left_out().items():
                err.print(f"[yellow]{name} not started:[/] {reason}", highlight=False)
        # A client gets so long for each request head (uvicorn has no such limit of its own).
        config = uvicorn.Config(served.app, host=host, port=port, lifespan="on", ws="none",
                                log_level=settings.log_level.lower(), access_log=False,
                                http=header_timeout_protocol(settings.api_header_timeout_seconds))
        with sock:
            await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    """`python -m pilothouse.interfaces.serve`: the same as `pilothouse serve`."""
    from pilothouse.interfaces.serve_cli import serve_command

    restrict_umask()  # as `pilothouse` does: what the server and its tools create is private
    typer.run(serve_command)


if __name__ == "__main__":
    main()
