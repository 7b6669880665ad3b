"""Approval tokens: an HMAC over the normalized command and its evidence, single-use, expiring.

The agent process (where a person approves) and the shell server share a secret. The server
never hands out tokens, so a model cannot approve its own command: it can only pass back a
token the approving side signed. A token covers one command string and the evidence the person
saw (working directory, digests of the files it names; see `evidence.py`), once, for a few
minutes. The evidence travels inside the token, signed, so the server can say which file
changed when the one it computes before running differs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from collections.abc import Mapping
from typing import Any

from pilothouse.errors import ApprovalRequired
from pilothouse.tools.shell.syntax import ShellSyntaxError, parse

SECRET_ENV_VAR = "PILOTHOUSE_APPROVAL_SECRET"
DEFAULT_TTL_SECONDS = 300.0
_VERSION = "v2"
#: The evidence of a token signed without any: no directory, no files.
NO_EVIDENCE: dict[str, Any] = {"cwd": "", "files": [], "omitted": 0}


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


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _mac(secret: bytes, expires: int, nonce: str, evidence: str, command: str) -> str:
    message = f"{_VERSION}|{expires}|{nonce}|{evidence}|{normalize_command(command)}".encode()
    return _b64(hmac.new(secret, message, hashlib.sha256).digest())


def _decode_evidence(field: str) -> dict[str, Any]:
    try:
        body = json.loads(base64.urlsafe_b64decode(field + "=" * (-len(field) % 4)))
    except (binascii.Error, ValueError) as exc:
        raise ApprovalRequired("The approval token is malformed.", hint=_HINT) from exc
    if not isinstance(body, dict):
        raise ApprovalRequired("The approval token is malformed.", hint=_HINT)
    return body


def sign_approval(
    secret: str | bytes,
    command: str,
    *,
    evidence: Mapping[str, Any] | None = None,
    ttl_seconds: float = DEFAULT_TTL_SECONDS,
    now: float | None = None,
) -> str:
    """A token approving `command` (normalized) with `evidence` once, valid for `ttl_seconds`.

    `evidence` is `CommandEvidence.bound()` of what the person was shown; without it the token
    approves the command only while it names no workspace file.
    """
    key = secret.encode() if isinstance(secret, str) else secret
    expires = int((time.time() if now is None else now) + ttl_seconds)
    nonce = secrets.token_hex(12)
    body = json.dumps(dict(evidence or NO_EVIDENCE), sort_keys=True, separators=(",", ":"))
    field = _b64(body.encode())
    return f"{_VERSION}.{expires}.{nonce}.{field}.{_mac(key, expires, nonce, field, command)}"


class ApprovalVerifier:
    """Checks tokens against a command and remembers the ones already spent."""

    def __init__(self, secret: str | bytes) -> None:
        self._secret = secret.encode() if isinstance(secret, str) else secret
        self._spent: dict[str, int] = {}  # nonce -> expiry, pruned once expired
        self._lock = threading.Lock()

    def verify(
        self, token: str, command: str, *, consume: bool = True, now: float | None = None
    ) -> dict[str, Any]:
        """Accept the token for `command` (and spend it), or raise ApprovalRequired.

        Returns the evidence the token was signed with (`CommandEvidence.bound()`), for the
        caller to compare with the evidence it computes now.
        """
        current = time.time() if now is None else now
        fields = token.strip().split(".")
        if len(fields) != 5 or fields[0] != _VERSION or not fields[1].isdigit():
            raise ApprovalRequired("The approval token is malformed.", hint=_HINT)
        _, expires_text, nonce, evidence, mac = fields
        expires = int(expires_text)
        if not hmac.compare_digest(mac, _mac(self._secret, expires, nonce, evidence, command)):
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
        return _decode_evidence(evidence)


_HINT = "Ask the user to approve the command again; each approval runs it once."
