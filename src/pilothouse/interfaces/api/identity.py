"""Who a caller is: API keys parsed into named identities, and the anonymous local caller.

`PILOTHOUSE_API_KEYS` and `PILOTHOUSE_ADMIN_KEYS` hold comma-separated entries, each
`name=key` or a bare `key`, every key at least 32 characters (`pilothouse keys new` prints
one): an empty or short key stops the server at start. A bare key gets a stable generated name
(`key-` and the start of the key's SHA-256), so conversations keep their owner across restarts
without the key itself ever appearing in a log, a thread id or an error. An admin identity may
also list and read everyone's conversations; only an owner may continue, approve, cancel or
delete one.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass

from starlette.authentication import BaseUser

from pilothouse.a2a.namespaces import ANONYMOUS
from pilothouse.errors import ConfigurationError
from pilothouse.keys import KEY_NAME, MIN_KEY_LENGTH, check_key, digest


@dataclass(frozen=True)
class Identity(BaseUser):
    """An authenticated caller: owner of the conversations and tasks it starts."""

    name: str
    admin: bool = False
    anonymous: bool = False

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return self.name

    @property
    def identity(self) -> str:
        return self.name


#: Every request from this machine when no key is configured.
LOCAL = Identity(ANONYMOUS, anonymous=True)


def generated_name(key: str) -> str:
    """The stable name of a bare key: reveals nothing usable about the key."""
    return "key-" + hashlib.sha256(key.encode()).hexdigest()[:10]


def _entry(raw: str, setting: str, position: int) -> tuple[str, str]:
    """`(name, key)` of one entry, the key checked (`pilothouse.keys.check_key`)."""
    name, sep, key = raw.partition("=")
    if not sep:
        name, key = generated_name(raw), raw
    elif not key.strip("=") and len(key) <= 2 and len(raw) >= MIN_KEY_LENGTH:
        # "<43 characters>=" is a bare base64 key with its padding, not a name and no key.
        name, key = generated_name(raw), raw
    else:
        name, key = name.strip(), key.strip()
        if not key.strip("="):
            # "alice=" (or "alice==") is a name whose key was left out: `check_key` refuses
            # it, where it once became the literal key "alice=".
            key = ""
        if not KEY_NAME.match(name):
            raise ConfigurationError(
                f"Entry {position} of {setting} has an invalid name.",
                hint="Use name=key with a name of letters, digits, '.', '_' or '-' "
                     "(at most 40).")
    check_key(key, setting=setting, position=position)
    return name, key


@dataclass(frozen=True)
class KeyRing:
    """The configured keys' digests and whose each is; empty means this machine only.

    Only each key's SHA-256 is kept (`pilothouse.keys.digest`): a memory dump or a debugger
    shows no key, and a presented token is hashed once and compared with every digest.
    """

    entries: tuple[tuple[bytes, Identity], ...] = ()

    @classmethod
    def parse(cls, api_keys: Sequence[str] = (), admin_keys: Sequence[str] = ()) -> KeyRing:
        """Keys from the settings' entries; ConfigurationError for an empty or short key or a
        clash (never echoing a key)."""
        entries: list[tuple[bytes, Identity]] = []
        names: dict[str, bytes] = {}
        for setting, raws, admin in (("PILOTHOUSE_API_KEYS", api_keys, False),
                                     ("PILOTHOUSE_ADMIN_KEYS", admin_keys, True)):
            for position, raw in enumerate((r.strip() for r in raws if r.strip()), start=1):
                name, key = _entry(raw, setting, position)
                secret = digest(key)
                if name == ANONYMOUS:
                    raise ConfigurationError(
                        f"Entry {position} of {setting} uses the reserved name {ANONYMOUS!r}.",
                        hint="Choose another name for this key.")
                if name in names and names[name] != secret:
                    raise ConfigurationError(
                        f"The name {name!r} is given to two different keys.",
                        hint="Give each key its own name in PILOTHOUSE_API_KEYS / "
                             "PILOTHOUSE_ADMIN_KEYS.")
                if any(hmac.compare_digest(secret, known) for known, who in entries
                       if who.name != name):
                    raise ConfigurationError(
                        f"Entry {position} of {setting} reuses a key that has another name.",
                        hint="Each key belongs to one identity.")
                names[name] = secret
                entries.append((secret, Identity(name, admin=admin)))
        return cls(tuple(entries))

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(who.name for _, who in self.entries))

    def identify(self, token: str) -> Identity | None:
        """The identity holding `token`, or None.

        Every digest is compared in constant time, and all of them every time, so timing says
        neither how much of a key matched nor which one.
        """
        given = digest(token)
        found: Identity | None = None
        for secret, who in self.entries:
            if hmac.compare_digest(given, secret) and (found is None or who.admin):
                found = who
        return found
