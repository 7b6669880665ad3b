"""The listening socket of a server, bound before anything else starts.

uvicorn binds only after the app is built; in `pilothouse serve` that is after every agent,
tool server and database has been opened, and a busy port then surfaced as a long traceback
from the shutdown of all of them. Binding first turns it into one line and a non-zero exit
before any work is done; the socket is then handed to uvicorn.
"""

from __future__ import annotations

import errno
import socket

from pilothouse.errors import ConfigurationError

_BACKLOG = 2048  # uvicorn's default


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` and listening, or a ConfigurationError that says why."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as error:
        raise ConfigurationError(
            f"Cannot listen on {host}: the name does not resolve ({error.strerror}).",
            hint="Use an address of this machine: 127.0.0.1, or 0.0.0.0 for every interface.",
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(_BACKLOG)
    except OSError as error:
        sock.close()
        raise _bind_error(error, host, port) from None
    sock.set_inheritable(True)
    return sock


def _bind_error(error: OSError, host: str, port: int) -> ConfigurationError:
    if error.errno == errno.EADDRINUSE:
        return ConfigurationError(
            f"Port {port} on {host} is already in use.",
            hint=f"Stop the server that holds it (e.g. `ss -ltnp 'sport = :{port}'`) or choose "
                 "another with --port.")
    if error.errno == errno.EADDRNOTAVAIL:
        return ConfigurationError(
            f"{host} is not an address of this machine, so nothing can listen on it.",
            hint="Use 127.0.0.1, or 0.0.0.0 for every interface.")
    if error.errno == errno.EACCES:
        return ConfigurationError(
            f"Not allowed to listen on port {port} of {host}.",
            hint="Ports below 1024 need privileges: choose a port of 1024 or above with --port.")
    return ConfigurationError(f"Cannot listen on {host}:{port}: {error.strerror}.",
                              hint="Check --host and --port.")
