"""Tests of token issuing, verification and role checks."""

from __future__ import annotations

import pytest

from orders.auth import (
    CLOCK_SKEW_SECONDS,
    TOKEN_TTL_SECONDS,
    PermissionDenied,
    Principal,
    TokenError,
    issue_token,
    require_role,
    verify_token,
)

SECRET = b"test-secret"
NOW = 1_760_000_000


def test_a_fresh_token_verifies() -> None:
    token = issue_token("alice", "operator", SECRET, now=NOW)
    principal = verify_token(token, SECRET, now=NOW + 10)
    assert principal == Principal("alice", "operator", NOW + TOKEN_TTL_SECONDS)


def test_a_token_expires_after_the_ttl_plus_skew() -> None:
    token = issue_token("alice", "viewer", SECRET, now=NOW)
    verify_token(token, SECRET, now=NOW + TOKEN_TTL_SECONDS + CLOCK_SKEW_SECONDS)
    with pytest.raises(TokenError, match="expired"):
        verify_token(token, SECRET, now=NOW + TOKEN_TTL_SECONDS + CLOCK_SKEW_SECONDS + 1)


def test_a_tampered_token_is_refused() -> None:
    head, body, signature = issue_token("alice", "viewer", SECRET, now=NOW).split(".")
    forged = issue_token("alice", "admin", b"other", now=NOW).split(".")[1]
    with pytest.raises(TokenError, match="bad signature"):
        verify_token(f"{head}.{forged}.{signature}", SECRET, now=NOW)


def test_alg_none_is_refused() -> None:
    token = issue_token("alice", "viewer", SECRET, now=NOW)
    none_header = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0"
    with pytest.raises(TokenError, match="unsupported algorithm"):
        verify_token(none_header + token[token.index("."):], SECRET, now=NOW)


def test_roles_are_ordered() -> None:
    @require_role("operator")
    def cancel(request: object, principal: Principal) -> str:
        return "cancelled"

    admin = Principal("root", "admin", NOW)
    viewer = Principal("bob", "viewer", NOW)
    assert cancel(None, admin) == "cancelled"
    with pytest.raises(PermissionDenied, match="needs role operator"):
        cancel(None, viewer)
