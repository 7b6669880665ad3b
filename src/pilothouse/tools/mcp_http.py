"""MCP over streamable HTTP: the SDK's app behind the Host/Origin guard and, with keys, a key check.

Over stdio a tool server answers only the process that started it. Over HTTP it answers
whoever reaches its port, and acts with the server's own credentials (the Argo CD token, the
GitHub token, the shell of its workspace). So every MCP CLI serves HTTP through `McpHttp`:

- Host and Origin are checked before anything else (`http_guard.HostGuard`), on loopback too:
  a browser page on another site must not reach it by DNS rebinding;
- with PILOTHOUSE_MCP_KEYS every request needs `Authorization: Bearer <key>` (401 otherwise),
  keys checked in constant time against their digests (`keys.KeyDigests`);
- without keys only a loopback address may be bound: any other is refused before it starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.http_guard import BearerGuard, HostGuard, HostPolicy, is_loopback
from pilothouse.keys import KeyDigests

#: The setting holding the keys MCP clients send over HTTP (bare keys, comma-separated).
MCP_KEYS = "PILOTHOUSE_MCP_KEYS"
#: Where the SDK's streamable HTTP app answers.
MCP_PATH = "/mcp"


@dataclass(frozen=True)
class McpHttp:
    """A tool server's HTTP app, ready to run, and what to say about it at start."""

    app: ASGIApp
    host: str
    port: int
    keyed: bool
    policy: HostPolicy

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}{MCP_PATH}"

    def summary(self) -> str:
        """One line for stderr: where, whether a key is needed, which Host names answer."""
        access = (f"bearer key from {MCP_KEYS} required" if self.keyed
                  else f"no key ({MCP_KEYS} unset), this machine only")
        return f"{self.url} ({access}; Host names: {self.policy.describe()})"

    def run(self, log_level: str = "warning") -> None:
        """Serve until Ctrl-C (uvicorn runs the app's lifespan: the MCP session manager)."""
        import uvicorn  # here: a stdio server never pays for it

        config = uvicorn.Config(self.app, host=self.host, port=self.port, lifespan="on",
                                ws="none", log_level=log_level.lower())
        uvicorn.Server(config).run()


def mcp_http(server: MCPServer[Any], settings: Settings, *, host: str, port: int) -> McpHttp:
    """`server` as streamable HTTP behind the Host/Origin guard and the keys of `settings`.

    Raises ConfigurationError, before anything listens, for a bad key or for a non-loopback
    `host` without keys: whoever reached it would act with this server's credentials.
    """
    keys = KeyDigests.parse(settings.mcp_keys, setting=MCP_KEYS)
    if not keys and not is_loopback(host):
        raise ConfigurationError(
            f"No MCP keys are configured, so this MCP server may only listen on 127.0.0.1, "
            f"not {host}: anyone who reached it would use its credentials.",
            hint=f"Set {MCP_KEYS}=<key> (make one with `pilothouse keys new`; several: "
                 f"comma-separated) and have clients send 'Authorization: Bearer <key>', or "
                 f"bind to 127.0.0.1.")
    policy = HostPolicy.for_server(host, settings.allowed_hosts,
                                   cors_origins=settings.cors_origins)
    # The SDK checks Host itself on loopback, against loopback names only: it would refuse
    # the names PILOTHOUSE_ALLOWED_HOSTS adds, in another error shape. The guard decides.
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    if keys:
        app = BearerGuard(app, keys, setting=MCP_KEYS)
    return McpHttp(HostGuard(app, policy), host, port, bool(keys), policy)
