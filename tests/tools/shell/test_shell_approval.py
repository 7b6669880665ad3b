"""Approval tokens: HMAC over the exact normalized command, single use, with expiry."""

from __future__ import annotations

import pytest

from pilothouse.errors import ApprovalRequired
from pilothouse.tools.shell import ApprovalVerifier, normalize_command, sign_approval
from pilothouse.tools.shell.approval import SECRET_ENV_VAR, resolve_secret

SECRET = "shared-secret"


def test_token_approves_its_command_once() -> None:
    verifier = ApprovalVerifier(SECRET)
    token = sign_approval(SECRET, "git push origin main")
    verifier.verify(token, "git push origin main")
    with pytest.raises(ApprovalRequired, match="already used"):
        verifier.verify(token, "git push origin main")


def test_token_covers_the_normalized_command_only() -> None:
    verifier = ApprovalVerifier(SECRET)
    token = sign_approval(SECRET, "git   push origin\tmain")
    with pytest.raises(ApprovalRequired, match="does not match"):
        verifier.verify(token, "git push origin main --force")
    verifier.verify(token, "git push origin main")  # same command, other whitespace


def test_normalization_keeps_quoting_visible() -> None:
    assert normalize_command("echo  'a  b'") == "echo 'a  b'"
    assert normalize_command("ls 2>&1") == normalize_command(normalize_command("ls 2>&1"))


def test_token_from_another_secret_is_rejected() -> None:
    token = sign_approval("other-secret", "git push")
    with pytest.raises(ApprovalRequired, match="does not match"):
        ApprovalVerifier(SECRET).verify(token, "git push")


def test_expired_token_is_rejected_and_a_fresh_one_accepted() -> None:
    verifier = ApprovalVerifier(SECRET)
    old = sign_approval(SECRET, "git push", ttl_seconds=60, now=1_000.0)
    with pytest.raises(ApprovalRequired, match="expired"):
        verifier.verify(old, "git push", now=1_061.0)
    verifier.verify(old, "git push", now=1_059.0)


def test_tampered_expiry_breaks_the_signature() -> None:
    token = sign_approval(SECRET, "git push", ttl_seconds=1, now=1_000.0)
    version, _, nonce, evidence, mac = token.split(".")
    forged = ".".join([version, "9999999999", nonce, evidence, mac])
    with pytest.raises(ApprovalRequired, match="does not match"):
        ApprovalVerifier(SECRET).verify(forged, "git push", now=1_000.0)


def test_token_carries_the_evidence_it_was_signed_with() -> None:
    files = [{"path": "scripts/step.sh", "sha256": "ab" * 32, "bytes": 8}]
    bound = {"cwd": "/work", "files": files, "omitted": 0}
    token = sign_approval(SECRET, "bash scripts/step.sh", evidence=bound)
    assert ApprovalVerifier(SECRET).verify(token, "bash scripts/step.sh") == bound
    assert ApprovalVerifier(SECRET).verify(sign_approval(SECRET, "ls"), "ls")["files"] == []


def test_tampered_evidence_breaks_the_signature() -> None:
    token = sign_approval(SECRET, "bash x.sh", evidence={"cwd": "/w", "files": [], "omitted": 0})
    version, expires, nonce, _, mac = token.split(".")
    other = sign_approval(SECRET, "bash x.sh", evidence={"cwd": "/elsewhere", "files": [],
                                                         "omitted": 0}).split(".")[3]
    with pytest.raises(ApprovalRequired, match="does not match"):
        ApprovalVerifier(SECRET).verify(".".join([version, expires, nonce, other, mac]),
                                        "bash x.sh")


@pytest.mark.parametrize("token", ["", "garbage", "v2.1.a.b", "v1.1.a.b", "v2.x.a.b.c"])
def test_malformed_tokens_are_rejected(token: str) -> None:
    with pytest.raises(ApprovalRequired, match="malformed"):
        ApprovalVerifier(SECRET).verify(token, "git push")


def test_checking_without_consuming_leaves_the_token_usable() -> None:
    verifier = ApprovalVerifier(SECRET)
    token = sign_approval(SECRET, "git push")
    verifier.verify(token, "git push", consume=False)
    verifier.verify(token, "git push")


def test_secret_comes_from_argument_then_environment_then_random() -> None:
    assert resolve_secret("explicit", {SECRET_ENV_VAR: "env"}) == b"explicit"
    assert resolve_secret(None, {SECRET_ENV_VAR: "env"}) == b"env"
    first, second = resolve_secret(None, {}), resolve_secret(None, {})
    assert len(first) == 32 and first != second
