"""The one redactor: what a credential looks like, and which names hold one.

Everything that leaves the process passes through it: log lines, exported spans, error
messages, MCP tool results, shell output and `Settings.redacted()`. Three rules:

- secret *shapes* in any text (GitHub, AWS, JWT and `sk-` keys, `Bearer`/`Basic` credentials,
  passwords in URLs, PEM private keys, `password=...`-style assignments);
- secret *values* known at run time (the configured ARGOCD_TOKEN, GITHUB_TOKEN, API keys, the
  environment a shell command must not see), masked wherever they appear, whatever their shape;
- secret *names* (`GITHUB_TOKEN`, `argocd_password`, `X-Api-Key`, `PILOTHOUSE_API_KEYS`): a
  field or setting so named is masked whole. Names are matched by word, not by substring, so
  counts such as `max_output_tokens` or `MAX_CONTEXT_TOKENS` stay readable.

This module is the bottom layer (it imports nothing from Pilothouse), so tool servers,
observability, config and the runtime all share it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "[REDACTED]"
#: Known values shorter than this would mask ordinary words ("1", "admin") in every output.
MIN_SECRET_LENGTH = 6

# -- names ---------------------------------------------------------------------------------
#: A name holding one of these words anywhere is secret (`AWS_SECRET_ACCESS_KEY`,
#: `passwordSecretRef`).
_SECRET_ANYWHERE = frozenset({"password", "passwd", "passphrase", "secret", "secrets",
                              "credential", "credentials"})
#: A name ending in one of these words is secret (`GITHUB_TOKEN`, `OPENAI_API_KEY`, `admin_keys`)
#: but `token_count` or `max_output_tokens` is not: plural "tokens" counts, it does not hold.
_SECRET_LAST = frozenset({"token", "key", "keys", "apikey", "apikeys", "auth",
                          "authorization", "cookie", "cookies", "dsn"})
#: Run-together last words (`githubtoken`, `accessToken` lower-cased) ending like a secret.
_SECRET_ENDINGS = ("token", "password", "passwd", "secret", "apikey")
#: Trailing words that qualify the secret before them: `AWS_ACCESS_KEY_ID`, `TOKEN_VALUE`.
_QUALIFIERS = frozenset({"id", "value", "data", "base", "b64", "base64"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATOR = re.compile(r"[^a-z0-9]+")


def _words(name: str) -> list[str]:
    words = [w for w in _SEPARATOR.split(_CAMEL.sub("_", name).lower()) if w]
    while words and words[-1].isdigit():  # GIT_CONFIG_KEY_0, TOKEN_2
        words.pop()
    return words


def is_secret_name(name: str) -> bool:
    """Whether a setting, variable, header or field called `name` holds a credential."""
    words = _words(name)
    if any(w in _SECRET_ANYWHERE for w in words):
        return True
    while len(words) > 1 and words[-1] in _QUALIFIERS:
        words.pop()
    if not words:
        return False
    last = words[-1]
    return last in _SECRET_LAST or last.endswith(_SECRET_ENDINGS)


# -- shapes ---------------------------------------------------------------------------------
#: Credentials recognisable on their own, masked whole.
_TOKEN_SHAPES = (
    # PEM private keys, to the END line or, when the text was cut, to its end.
    re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
               r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{16,}"),  # GitHub classic: ghp_, gho_, ghu_, ghs_, ghr_
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"),  # GitHub fine-grained
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),  # GitLab
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
    # OpenAI, Anthropic; mixed case, so a lowercase name ("sk-payments-...") is not one.
    re.compile(r"\bsk-(?=[A-Za-z0-9_-]*[A-Z])[A-Za-z0-9_-]{20,}"),
    # JWTs (Argo CD's tokens are JWTs): base64url JSON header, payload, optional signature.
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
)
#: An `Authorization` header's credential, whatever it looks like; the scheme stays.
_AUTH_HEADER = re.compile(r"(?P<keep>(?i:\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?"
                          r"(?:bearer|basic|token|digest)[ \t]+))[^\s\"'\\,;]+")
#: `Bearer x` / `Basic x` anywhere else: the scheme stays, so the text still reads.
_AUTH_SCHEME = re.compile(r"(?P<keep>\b(?i:bearer|basic)\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})")
#: A lowercase word this short after the scheme is prose ("Basic authentication failed").
_PROSE_WORD = re.compile(r"[a-z]{8,16}")
#: `scheme://user:password@host`: user and host stay. Anchored at the start of the scheme
#: (not at any word boundary) so a long dotted run is scanned once, not once per dot.
_URL_PASSWORD = re.compile(r"(?P<keep>(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://"
                           r"[^/\s:@\"'\\]*:)[^/\s@\"'\\]+(?=@)")
#: The `name=` / `name:` / `"name": "` of an assignment; the value follows.
_ASSIGNED_NAME = re.compile(r"(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)"
                            r"[\"']?[ \t]*[=:][ \t]*[\"']?")
_ASSIGNED_VALUE = re.compile(r"[^\s\"'\\,;&<>(){}\[\]]+")
#: Words after `Authorization:` that name the scheme, not the credential.
_SCHEMES = frozenset({"bearer", "basic", "token", "digest"})


def _keep_label(match: re.Match[str]) -> str:
    return match.group("keep") + MASK


def _auth_value(match: re.Match[str]) -> str:
    if _PROSE_WORD.fullmatch(match.group("value")):
        return match.group(0)
    return match.group("keep") + MASK


def _mask_assignments(text: str) -> str:
    """Mask the value of every `name=value` whose name is secret; others are left as they are.

    A hand loop, not `re.sub`: a non-secret assignment must not swallow its value, which may
    hold one (`url=https://h/?access_token=x`).
    """
    parts: list[str] = []
    done = scan = 0
    while (found := _ASSIGNED_NAME.search(text, scan)) is not None:
        scan = found.end()
        if not is_secret_name(found.group("name")):
            continue
        value = _ASSIGNED_VALUE.match(text, found.end())
        if value is None or value.group().lower() in _SCHEMES:
            continue
        parts += [text[done:value.start()], MASK]
        done = scan = value.end()
    return "".join(parts) + text[done:] if parts else text


def _is_empty(value: Any) -> bool:
    return value is None or isinstance(value, bool) or (
        isinstance(value, str | tuple | list | dict | set | frozenset) and not value)


class Redactor:
    """Masks secret shapes and the known secret `values` in text and in structured data.

    Known values are replaced first, longest first, so a secret containing another is masked
    whole; `add` registers one learnt later (a session token obtained by logging in).
    """

    def __init__(self, values: Iterable[str | None] = ()) -> None:
        self._values: list[str] = []
        for value in values:
            self.add(value)

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(self._values)

    def add(self, value: str | None) -> None:
        """Mask `value` from now on (ignored when empty or too short to be a credential)."""
        if value and len(value) >= MIN_SECRET_LENGTH and value not in self._values:
            # A new list, swapped in whole: a concurrent call never sees one half-sorted.
            self._values = sorted([*self._values, value], key=len, reverse=True)

    def __call__(self, text: str) -> str:
        """`text` with every known value and secret shape masked."""
        for value in self._values:
            text = text.replace(value, MASK)
        for pattern in _TOKEN_SHAPES:
            text = pattern.sub(MASK, text)
        text = _AUTH_HEADER.sub(_keep_label, text)
        text = _AUTH_SCHEME.sub(_auth_value, text)
        text = _URL_PASSWORD.sub(_keep_label, text)
        return _mask_assignments(text)

    def field(self, name: str, value: Any) -> Any:
        """One named value for display: masked whole under a secret name, strings redacted.

        Other types are returned as they are; an empty value or a flag reveals nothing and
        stays (`api_keys=()` says none are set).
        """
        if is_secret_name(name) and not _is_empty(value):
            return MASK
        if isinstance(value, str):
            return self(value)
        return value

    def scrub(self, value: Any, name: str | None = None, *, _depth: int = 0) -> Any:
        """`value` as JSON-able data with secrets masked: by field name and inside strings."""
        if name is not None and is_secret_name(name) and not _is_empty(value):
            return MASK
        if isinstance(value, str):
            return self(value)
        if value is None or isinstance(value, bool | int | float):
            return value
        if _depth > 6:  # a pathological nesting is summarized, not walked
            return self(str(value))[:200]
        if isinstance(value, Mapping):
            return {str(k): self.scrub(v, str(k), _depth=_depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self.scrub(v, _depth=_depth + 1) for v in value]
        # Anything else would be rendered with repr() later, past this step: render it here.
        return self(str(value))


#: Shapes only: for code that knows no configured secret values.
_SHAPES = Redactor()


def redact(text: str) -> str:
    """`text` with anything shaped like a credential masked."""
    return _SHAPES(text)


def scrub(value: Any, name: str | None = None) -> Any:
    """`value` (JSON-able data) with secret-named fields and credential shapes masked."""
    return _SHAPES.scrub(value, name)
