"""Access tokens for the orders API: issue, verify, and check roles.

Tokens are JWT-like: `base64url(header).base64url(claims).base64url(signature)`, signed with
HMAC-SHA256 over the first two parts. We do not accept `alg: none` or any algorithm other than
HS256, and every token carries an expiry: TOKEN_TTL_SECONDS (15 minutes) after it was issued.
A small clock skew between services is tolerated (CLOCK_SKEW_SECONDS).

Roles are ordered: an `admin` may do what an `operator` may, and an `operator` what a `viewer`
may. Handlers declare the least role they need with `require_role`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any, TypeVar

TOKEN_TTL_SECONDS = 900
CLOCK_SKEW_SECONDS = 30
ALGORITHM = "HS256"
ISSUER = "orders.acme.internal"
ROLE_HIERARCHY: dict[str, int] = {"viewer": 1, "operator": 2, "admin": 3}

F = TypeVar("F", bound=Callable[..., Any])


class TokenError(Exception):
    """The token is malformed, badly signed, expired, or for another issuer."""


class PermissionDenied(Exception):
    """The caller is authenticated but lacks the role a handler needs."""


@dataclass(frozen=True)
class Principal:
    """Who is calling: the subject of a verified token and its role."""

    subject: str
    role: str
    expires_at: int


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    padding = "=" * (-len(text) % 4)
    return base64.urlsafe_b64decode(text + padding)


def _sign(signing_input: bytes, secret: bytes) -> str:
    return _b64encode(hmac.new(secret, signing_input, hashlib.sha256).digest())


def issue_token(subject: str, role: str, secret: bytes, *, now: int | None = None) -> str:
    """A signed token for `subject` with `role`, valid for TOKEN_TTL_SECONDS."""
    if role not in ROLE_HIERARCHY:
        raise ValueError(f"unknown role {role!r}; known: {', '.join(ROLE_HIERARCHY)}")
    issued = int(time.time()) if now is None else now
    header = {"alg": ALGORITHM, "typ": "JWT"}
    claims = {"sub": subject, "role": role, "iss": ISSUER, "iat": issued,
              "exp": issued + TOKEN_TTL_SECONDS}
    head = _b64encode(json.dumps(header, separators=(",", ":")).encode())
    body = _b64encode(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{head}.{body}".encode()
    return f"{head}.{body}.{_sign(signing_input, secret)}"


def verify_token(token: str, secret: bytes, *, now: int | None = None) -> Principal:
    """The principal of a valid token; raises TokenError otherwise.

    Checks, in order: three parts, the HS256 header, the signature (constant-time compare),
    the issuer, and the expiry with CLOCK_SKEW_SECONDS of tolerance.
    """
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("token must have three dot-separated parts")
    head, body, signature = parts
    try:
        header = json.loads(_b64decode(head))
        claims = json.loads(_b64decode(body))
    except (ValueError, json.JSONDecodeError) as error:
        raise TokenError("token is not valid base64url JSON") from error
    if header.get("alg") != ALGORITHM:
        raise TokenError(f"unsupported algorithm {header.get('alg')!r}")
    expected = _sign(f"{head}.{body}".encode(), secret)
    if not hmac.compare_digest(expected, signature):
        raise TokenError("bad signature")
    if claims.get("iss") != ISSUER:
        raise TokenError("token was issued for another service")
    current = int(time.time()) if now is None else now
    if current > int(claims.get("exp", 0)) + CLOCK_SKEW_SECONDS:
        raise TokenError("token expired")
    role = claims.get("role")
    if role not in ROLE_HIERARCHY:
        raise TokenError(f"token carries unknown role {role!r}")
    return Principal(subject=str(claims.get("sub")), role=role, expires_at=int(claims["exp"]))


def has_role(principal: Principal, needed: str) -> bool:
    """Whether `principal`'s role is at least `needed` in ROLE_HIERARCHY."""
    return ROLE_HIERARCHY[principal.role] >= ROLE_HIERARCHY[needed]


def require_role(needed: str) -> Callable[[F], F]:
    """Decorate a handler `(request, principal, ...)` so it runs only for `needed` or above."""
    if needed not in ROLE_HIERARCHY:
        raise ValueError(f"unknown role {needed!r}")

    def decorate(handler: F) -> F:
        @wraps(handler)
        def wrapper(request: Any, principal: Principal, *args: Any, **kwargs: Any) -> Any:
            if not has_role(principal, needed):
                raise PermissionDenied(f"{handler.__name__} needs role {needed}, "
                                       f"caller {principal.subject} has {principal.role}")
            return handler(request, principal, *args, **kwargs)

        wrapper.required_role = needed  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def bearer_token(headers: dict[str, str]) -> str:
    """The token of an `Authorization: Bearer ...` header; raises TokenError when missing."""
    value = headers.get("authorization") or headers.get("Authorization") or ""
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise TokenError("missing bearer token")
    return token.strip()
