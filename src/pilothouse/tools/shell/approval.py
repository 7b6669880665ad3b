"""Approval tokens: an HMAC over the exact normalized command, single-use, with expiry.

The agent process (where a person approves) and the shell server share a secret. The server
never hands out tokens, so a model cannot approve its own command: it can only pass back a
token the approving side signed. A token covers one command string, once, for a few minutes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Mapping

from pilothouse.errors import ApprovalRequired
from pilothouse.tools.shell.syntax import ShellSyntaxError, parse

SECRET_ENV_VAR = "PILOTHOUSE_APPROVAL_SECRET"
DEFAULT_TTL_SECONDS = 300.0
_VERSION = "v1"


def normalize_command(command: str) -> str:
    """The canonical text a token covers: parsed tokens joined by single spaces."""
    try:
        return parse(command).normalized
    except ShellSyntaxError:
        return " ".join(command.split())


def resolve_secret(explicit: str | bytes | None, env: Mapping[str, str] | None = None) -> bytes:
    """The secret to use: the argument, else $PILOTHOUSE_APPROVAL_SECRET, else a random one.

    A random secret means nobody outside this process can approve anything, which is the
    safe reading of "no secret was configured".
    """
    if explicit:
        return explicit.encode() if isinstance(explicit, str) else explicit
    value = (os.environ if env is None else env).get(SECRET_ENV_VAR, "")
    return value.encode() if value else secrets.token_bytes(32)


def _mac(secret: bytes, expires: int, nonce: str, command: str) -> str:
    message = f"{_VERSION}|{expires}|{nonce}|{normalize_command(command)}".encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def sign_approval(
    secret: str | bytes,
    command: str,
    *,
    ttl_seconds: float = DEFAULT_TTL_SECONDS,
    now: float | None = None,
) -> str:
    """A token approving `command` (normalized) once, valid for `ttl_seconds`."""
    key = secret.encode() if isinstance(secret, str) else secret
    expires = int((time.time() if now is None else now) + ttl_seconds)
    nonce = secrets.token_hex(12)
    return f"{_VERSION}.{expires}.{nonce}.{_mac(key, expires, nonce, command)}"


class ApprovalVerifier:
    """Checks tokens against a command and remembers the ones already spent."""

    def __init__(self, secret: str | bytes) -> None:
        self._secret = secret.encode() if isinstance(secret, str) else secret
        self._spent: dict[str, int] = {}  # nonce -> expiry, pruned once expired
        self._lock = threading.Lock()

    def verify(
        self, token: str, command: str, *, consume: bool = True, now: float | None = None
    ) -> None:
        """Accept the token for `command` (and spend it), or raise ApprovalRequired."""
        current = time.time() if now is None else now
        fields = token.strip().split(".")
        if len(fields) != 4 or fields[0] != _VERSION or not fields[1].isdigit():
            raise ApprovalRequired("The approval token is malformed.", hint=_HINT)
        _, expires_text, nonce, mac = fields
        expires = int(expires_text)
        if not hmac.compare_digest(mac, _mac(self._secret, expires, nonce, command)):
            raise ApprovalRequired(
                "The approval token does not match this exact command (or this server).",
                hint=_HINT,
            )
        if current > expires:
            raise ApprovalRequired("The approval token has expired.", hint=_HINT)
        with self._lock:
            self._spent = {n: e for n, e in self._spent.items() if e >= current}
            if nonce in self._spent:
                raise ApprovalRequired("The approval token was already used.", hint=_HINT)
            if consume:
                self._spent[nonce] = expires


_HINT = "Ask the user to approve the command again; each approval runs it once."
