"""API keys worth their name: how to make one, what is refused, and how one is checked.

A key guards a server that may run shell commands and change deployments, so a key a person
could guess ("a", "secret", "alice") is refused at start rather than accepted: it must be at
least `MIN_KEY_LENGTH` characters, which `new_key` exceeds with 256 random bits. Only each
key's SHA-256 is kept in memory, and a presented token is compared against every digest, every
time, in constant time: timing tells neither which key matched nor how much of one.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from pilothouse.errors import ConfigurationError

#: The shortest key accepted: 32 characters of `new_key`'s alphabet carry 192 bits.
MIN_KEY_LENGTH = 32
#: The name of a key's identity in `name=key` entries (it owns conversations, shows in logs).
KEY_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")
#: What every refusal suggests: the command that prints a key.
MAKE_ONE = "Make one with `pilothouse keys new` (or `pilothouse keys new --name NAME`)"


def new_key() -> str:
    """A fresh random key: 32 bytes from the OS's generator, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def check_key(key: str, *, setting: str, position: int) -> None:
    """Refuse an empty or short key; the error names the setting and entry, never the key."""
    if not key:
        raise ConfigurationError(
            f"Entry {position} of {setting} has an empty key.",
            hint=f"Give it a key of at least {MIN_KEY_LENGTH} characters. {MAKE_ONE}.")
    if len(key) < MIN_KEY_LENGTH:
        raise ConfigurationError(
            f"Entry {position} of {setting} is a key of {len(key)} characters; "
            f"at least {MIN_KEY_LENGTH} are required.",
            hint=f"A short key can be guessed. {MAKE_ONE} and use it instead.")


def digest(key: str) -> bytes:
    """The SHA-256 of a key: what is kept in memory instead of the key."""
    return hashlib.sha256(key.encode()).digest()


@dataclass(frozen=True)
class KeyDigests:
    """The digests of a list of keys, and a constant-time check of a presented token."""

    digests: tuple[bytes, ...] = ()

    @classmethod
    def parse(cls, raw_keys: Sequence[str], *, setting: str) -> KeyDigests:
        """Validate each key (`check_key`, positions from 1) and keep only its digest."""
        kept: list[bytes] = []
        for position, raw in enumerate(raw_keys, start=1):
            key = raw.strip()
            check_key(key, setting=setting, position=position)
            kept.append(digest(key))
        return cls(tuple(kept))

    def matches(self, token: str) -> bool:
        """Whether `token` is one of the keys; every digest is compared, whatever matches."""
        given = digest(token)
        found = False
        for known in self.digests:
            found |= hmac.compare_digest(given, known)
        return found

    def __bool__(self) -> bool:
        return bool(self.digests)
