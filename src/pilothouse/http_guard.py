"""Who may address a server: the Host and Origin checks every Pilothouse HTTP server runs first.

A web page on another site can drive a server on this machine in two ways, and a browser
tells both apart by headers only:

- DNS rebinding: a name the attacker controls first resolves to their site, then to
  127.0.0.1; the page is then "same origin" with our server under that name, and reads
  answers. The browser still sends the attacker's name as `Host`.
- Cross-site requests: a page posts to http://127.0.0.1:PORT directly. It cannot read the
  answer without CORS, but a POST still runs; the browser sends the page's `Origin`.

So `HostGuard`, outermost on the REST API and web UI, A2A and MCP over HTTP, answers 421 to a
Host the server does not answer to and 403 to a foreign Origin, before anything else runs:

- Host names: `localhost`, `127.0.0.1`, `[::1]`, the address the server is bound to, names the
  caller adds (`pilothouse serve`: its public URL's host) and PILOTHOUSE_ALLOWED_HOSTS. A name
  matches on any port, because ports change behind port mappings and proxies and rebinding is
  about the name; `name:port` pins the port, `*.example.com` allows subdomains, and `*` any
  Host (for a reverse proxy in front that already checks it).
- Bound to every interface (0.0.0.0, ::), any IP address is accepted as Host too: a request
  that names an address was sent to that address, which no DNS answer rebinds, so probes
  (the kubelet calls a pod by its IP) and `curl http://10.0.0.5:8080` work. Names are listed.
- Origin, when present, is the server's own (the same host and port as Host), one of the CORS
  origins (PILOTHOUSE_CORS_ORIGINS) or on a name added by the caller or PILOTHOUSE_ALLOWED_HOSTS.
  Requests without Origin (curl, A2A and MCP clients) pass: they are not a browser's.

`BearerGuard` is the key check of a server without identities (MCP over HTTP): one of the
configured keys in `Authorization: Bearer`, compared in constant time (`keys.KeyDigests`).
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from pilothouse.errors import ConfigurationError, error_body

log = logging.getLogger("pilothouse.http")

#: The setting that adds names (and browser origins on those names) to every server.
ALLOWED_HOSTS = "PILOTHOUSE_ALLOWED_HOSTS"
CORS_ORIGINS = "PILOTHOUSE_CORS_ORIGINS"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
_SHOWN = 80  # characters of a refused header quoted back: enough to recognise it


def is_loopback(host: str | None) -> bool:
    """True for 127.0.0.0/8, ::1 (bracketed or not) and `localhost`."""
    if not host:
        return False
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None] | None:
    """`name[:port]` or `[v6]:port` as (lower-case name without brackets, port); None if bad."""
    value = value.strip().lower()
    if value.startswith("["):
        name, closed, rest = value[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:]
    elif value.count(":") > 1:  # a bare IPv6 address has no port
        name, port_text = value, ""
    else:
        name, _, port_text = value.partition(":")
    name = name.rstrip(".")  # `localhost.` is `localhost` to DNS
    if not name or any(c in name for c in "/@?#\\ "):
        return None
    if not port_text:
        return name, None
    return (name, int(port_text)) if port_text.isdigit() and int(port_text) < 65536 else None


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostName:
    """One allowed name: exact, `*.domain` (subdomains) or `*`; any port unless pinned."""

    name: str
    port: int | None = None

    @classmethod
    def parse(cls, entry: str, *, setting: str = ALLOWED_HOSTS) -> HostName:
        """An entry of `setting`; a URL or a malformed name is a ConfigurationError."""
        text = entry.strip()
        if "://" in text:
            bare = urlsplit(text).netloc
            shown = bare if bare and split_host(bare) else "pilothouse.example.com"
            raise ConfigurationError(f"{setting} lists a URL ({text}), not a host name.",
                                     hint=f"List the name only: `{setting}={shown}`.")
        any_port = text.endswith(":*")
        parsed = split_host(text.removesuffix(":*"))
        if parsed is None:
            raise ConfigurationError(
                f"{setting} has an entry that is not a host name: {text!r}.",
                hint=f"List names, comma-separated, e.g. "
                     f"`{setting}=pilothouse.example.com,*.internal.example,10.0.0.5:8080`.")
        return cls(parsed[0], None if any_port else parsed[1])

    def matches(self, name: str, port: int | None) -> bool:
        if self.port is not None and port != self.port:
            return False
        if self.name.startswith("*."):
            return name.endswith(self.name[1:])
        return self.name in ("*", name)

    def __str__(self) -> str:
        shown = f"[{self.name}]" if ":" in self.name else self.name
        return shown if self.port is None else f"{shown}:{self.port}"


def parse_allowed_hosts(entries: Sequence[str], *, setting: str = ALLOWED_HOSTS
                        ) -> tuple[str, ...]:
    """`entries` checked (`HostName.parse`), so a bad one stops a process at start."""
    for entry in entries:
        HostName.parse(entry, setting=setting)
    return tuple(entries)


class HostPolicy:
    """The Host names a server answers to and the browser origins that may call it."""

    def __init__(self, names: Sequence[HostName], *, origin_names: Sequence[HostName] = (),
                 cors_origins: Sequence[str] = (), any_address: bool = False) -> None:
        self.names = tuple(names)
        self.origin_names = tuple(n for n in origin_names if n.name != "*")
        self.cors_origins = frozenset(o.strip().rstrip("/").lower() for o in cors_origins)
        self.any_address = any_address

    @classmethod
    def for_server(cls, bind_host: str, allowed_hosts: Sequence[str] = (), *,
                   cors_origins: Sequence[str] = ()) -> HostPolicy:
        """The names of a server bound to `bind_host`: loopback, the bound address and
        `allowed_hosts` (PILOTHOUSE_ALLOWED_HOSTS and names the caller knows it by, e.g. its
        public URL's host; a bad entry is a ConfigurationError)."""
        trusted = [HostName.parse(e) for e in allowed_hosts]
        names = [HostName(n) for n in LOOPBACK_NAMES]
        any_address = bind_host.strip("[]") in WILDCARD_BINDS
        if not any_address and (bound := split_host(bind_host)) is not None:
            names.append(HostName(bound[0]))
        unique = list(dict.fromkeys([*names, *trusted]))
        return cls(unique, origin_names=trusted, cors_origins=cors_origins,
                   any_address=any_address)

    @property
    def any_host(self) -> bool:
        """Whether `*` is configured: the Host check is left to a proxy in front."""
        return any(n.name == "*" and n.port is None for n in self.names)

    def describe(self) -> str:
        """The names, for a start-up line: `localhost, 127.0.0.1, [::1], any IP address`."""
        shown = [str(n) for n in self.names]
        return ", ".join(shown + (["any IP address"] if self.any_address else []))

    def allows_host(self, host: str | None) -> bool:
        parsed = split_host(host) if host else None
        if parsed is None:
            return False
        name, port = parsed
        if self.any_address and _is_address(name):
            return True
        return any(n.matches(name, port) for n in self.names)

    def allows_origin(self, origin: str, host: str) -> bool:
        """Same origin as `host`, a CORS origin, or on a trusted name (never `null`)."""
        normal = origin.strip().rstrip("/").lower()
        if normal in self.cors_origins:
            return True
        parts = urlsplit(normal)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False
        parsed = split_host(parts.netloc)
        if parsed is None:
            return False
        default_port = 443 if parts.scheme == "https" else 80
        ours = split_host(host)
        if ours is not None and (parsed[0], parsed[1] or default_port) == (
                ours[0], ours[1] or default_port):
            return True
        return any(n.matches(parsed[0], parsed[1]) for n in self.origin_names)


def _header(scope: Scope, name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope.get("headers", ()) if k == name]


def _quoted(value: str) -> str:
    printable = "".join(c if c.isprintable() else "?" for c in value)
    return printable if len(printable) <= _SHOWN else printable[:_SHOWN] + "..."


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, error: str,
                  suggestion: str, headers: dict[str, str] | None = None) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})  # policy violation
        return
    response = JSONResponse(error_body(error, suggestion), status_code=status, headers=headers)
    await response(scope, receive, send)


class HostGuard:
    """ASGI middleware: 421 for a Host not in `policy`, 403 for a foreign Origin."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        hosts = _header(scope, b"host")
        host = hosts[0] if len(hosts) == 1 else ""
        if not self.policy.allows_host(host):
            log.info("Refused a request for Host %r: not a name this server answers to.",
                     _quoted(host))
            named = f"the name '{_quoted(host)}'" if host else "a request without one Host"
            await _refuse(
                scope, receive, send, 421, f"This server does not answer to {named}.",
                f"Call it by a name it answers to (localhost, 127.0.0.1 or one configured), "
                f"or, if it should answer to this one, add the name to {ALLOWED_HOSTS} "
                f"(comma-separated; behind a reverse proxy: the name clients use).")
            return
        for origin in _header(scope, b"origin"):
            if not self.policy.allows_origin(origin, host):
                log.info("Refused a request from Origin %r.", _quoted(origin))
                await _refuse(
                    scope, receive, send, 403,
                    f"Requests from web pages at '{_quoted(origin)}' are not allowed.",
                    f"A page of another site may not call this server. To allow a page you "
                    f"trust, add its origin to {CORS_ORIGINS} (e.g. https://ops.example.com), "
                    f"or its host name to {ALLOWED_HOSTS}.")
                return
        await self.app(scope, receive, send)


class KeyCheck(Protocol):
    """What `BearerGuard` needs of a key list (`keys.KeyDigests`)."""

    def matches(self, token: str) -> bool: ...


def bearer_token(scope: Scope) -> str | None:
    """The token of `Authorization: Bearer <token>`; "" for another scheme, None without one."""
    for value in _header(scope, b"authorization"):
        scheme, _, token = value.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else ""
    return None


class BearerGuard:
    """ASGI middleware: 401 with `WWW-Authenticate: Bearer` unless a configured key is sent."""

    def __init__(self, app: ASGIApp, keys: KeyCheck, *, setting: str) -> None:
        self.app = app
        self.keys = keys
        self.setting = setting

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        token = bearer_token(scope)
        if token and self.keys.matches(token):
            await self.app(scope, receive, send)
            return
        await _refuse(scope, receive, send, 401,
                      "Missing key." if token is None else "Invalid key.",
                      f"Send 'Authorization: Bearer <key>' with a key from {self.setting}.",
                      headers={"WWW-Authenticate": "Bearer"})
