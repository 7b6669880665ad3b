"""API keys worth their name: made long and random, short or empty ones refused, only digests
kept, and every digest compared every time."""

from __future__ import annotations

import hashlib

import pytest

from pilothouse import keys
from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.keys import MIN_KEY_LENGTH, KeyDigests, check_key, digest, new_key

LONG = "long-enough-key-4b8f2d6a0c5e9b3f7d1a"


def test_a_new_key_is_long_random_and_accepted() -> None:
    made = {new_key() for _ in range(50)}
    assert len(made) == 50
    for key in made:
        assert len(key) >= MIN_KEY_LENGTH == 32
        assert key.isascii() and "," not in key and "=" not in key  # fits a key list as is
        check_key(key, setting="PILOTHOUSE_API_KEYS", position=1)


@pytest.mark.parametrize(("key", "said"), [
    ("", "Entry 3 of PILOTHOUSE_API_KEYS has an empty key."),
    ("a", "Entry 3 of PILOTHOUSE_API_KEYS is a key of 1 characters; at least 32 are required."),
    ("password-password-password-pass", "a key of 31 characters"),
])
def test_an_empty_or_short_key_is_refused_with_how_to_make_one(key: str, said: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        check_key(key, setting="PILOTHOUSE_API_KEYS", position=3)
    assert said in refused.value.message
    assert "`pilothouse keys new`" in (refused.value.hint or "")
    if len(key) > 1:  # a one-letter key is in every sentence; a real one in none
        assert key not in str(refused.value)


def test_thirty_two_characters_are_enough() -> None:
    check_key("k" * 32, setting="PILOTHOUSE_API_KEYS", position=1)


def test_the_digests_match_their_keys_only_and_hold_no_key() -> None:
    other = new_key()
    ring = KeyDigests.parse([f" {LONG} ", other], setting="PILOTHOUSE_AGENT_KEYS")
    assert ring and not KeyDigests() and not KeyDigests.parse([], setting="X")
    assert ring.matches(LONG) and ring.matches(other)
    for wrong in ("", LONG[:-1], LONG + "x", LONG.upper(), f" {LONG}"):
        assert not ring.matches(wrong), wrong
    assert ring.digests == (digest(LONG), digest(other))
    assert digest(LONG) == hashlib.sha256(LONG.encode()).digest()
    assert LONG not in repr(ring) and LONG.encode() not in b"".join(ring.digests)


def test_parse_names_the_entry_that_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="Entry 2 of PILOTHOUSE_X has an empty key"):
        KeyDigests.parse([LONG, " "], setting="PILOTHOUSE_X")


def test_every_digest_is_compared_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    last = new_key()
    ring = KeyDigests.parse([LONG, *(new_key() for _ in range(4)), last], setting="X")
    compared: list[bytes] = []
    real = keys.hmac.compare_digest

    def counting(given: bytes, known: bytes) -> bool:
        compared.append(known)
        return real(given, known)

    monkeypatch.setattr(keys.hmac, "compare_digest", counting)
    for token, found in ((LONG, True), (last, True), (new_key(), False)):
        compared.clear()
        assert ring.matches(token) is found
        # The first key, the last or none: the same six comparisons, so timing says
        # neither whether nor which key matched.
        assert compared == list(ring.digests), token


def test_the_key_sent_to_a_remote_agent_is_checked_at_start() -> None:
    url = {"PILOTHOUSE_AGENTS_ARGOCD_URL": "http://argocd:8080/a2a/argocd"}
    with pytest.raises(ConfigurationError) as refused:
        Settings.from_env({**url, "PILOTHOUSE_AGENTS_ARGOCD_KEY": "supervisor-key"})
    assert "PILOTHOUSE_AGENTS_ARGOCD_KEY" in refused.value.message
    assert "supervisor-key" not in str(refused.value)
    assert "pilothouse keys new" in (refused.value.hint or "")
    settings = Settings.from_env({**url, "PILOTHOUSE_AGENTS_ARGOCD_KEY": LONG})
    assert settings.agent_keys == {"argocd": LONG}
