"""The one redactor: credentials are known by their values, so all else reads as written.

Everything that leaves the process passes through it: log lines, exported spans, error
messages, MCP tool results (retrieved source code among them), shell output and
`Settings.redacted()`. A name alone never masks text: source that merely names a secret
(`secret_key: str | bytes`, `password=password`, `token = get_token()`) comes out unchanged.
The rules:

- secret *shapes* in any text (GitHub, GitLab, Slack, AWS, JWT and `sk-` keys, PEM private
  keys, `Bearer`/`Basic` credentials, passwords in URLs);
- secret *values* known at run time (the configured ARGOCD_TOKEN, GITHUB_TOKEN, API keys, the
  environment a shell command must not see), masked wherever they appear, whatever their shape;
- *assignments* (`password=...`, `"api_key": "..."`, `TOKEN: ...`): the value is masked when
  it is a literal holding a credential (`_holds_secret`), never when it is a reference, a
  template, a placeholder, prose or a number;
- secret *names* in structured data (`Redactor.field`, `Redactor.scrub`): a field the program
  itself calls `GITHUB_TOKEN` or `argocd_password` is masked whole. Names are matched by word,
  not by substring, so counts such as `max_output_tokens` or `MAX_CONTEXT_TOKENS` stay readable.

This module is the bottom layer (it imports nothing from Pilothouse), so tool servers,
observability, config and the runtime all share it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

MASK = "[REDACTED]"
#: Known values shorter than this would mask ordinary words ("1", "admin") in every output;
#: an assigned literal this short (`SECRET_KEY = "dev"`) carries no credential worth hiding.
MIN_SECRET_LENGTH = 6

# -- names ---------------------------------------------------------------------------------
#: A name holding one of these words anywhere always names a secret (`AWS_SECRET_ACCESS_KEY`,
#: `passwordSecretRef`): whatever literal it is given is one.
_SECRET_ANYWHERE = frozenset({"password", "passwd", "passphrase", "secret", "secrets",
                              "credential", "credentials"})
#: A name ending in one of these words is secret (`GITHUB_TOKEN`, `OPENAI_API_KEY`, `admin_keys`)
#: but `token_count` or `max_output_tokens` is not: plural "tokens" counts, it does not hold.
#: These words also name dictionary keys, lexer tokens and auth schemes, so only a literal
#: that looks generated is taken for a credential under them.
_SECRET_LAST = frozenset({"token", "key", "keys", "apikey", "apikeys", "auth",
                          "authorization", "cookie", "cookies", "dsn"})
#: Run-together last words (`dbpassword`, `accessToken` lower-cased) ending like a secret.
_ALWAYS_ENDINGS = ("password", "passwd", "secret")
_CONTEXT_ENDINGS = ("token", "apikey")
#: Trailing words that qualify the secret before them: `AWS_ACCESS_KEY_ID`, `TOKEN_VALUE`.
_QUALIFIERS = frozenset({"id", "value", "data", "base", "b64", "base64"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATOR = re.compile(r"[^a-z0-9]+")
_NOT_SECRET, _CONTEXT, _ALWAYS = 0, 1, 2


def _words(name: str) -> list[str]:
    words = [w for w in _SEPARATOR.split(_CAMEL.sub("_", name).lower()) if w]
    while words and words[-1].isdigit():  # GIT_CONFIG_KEY_0, TOKEN_2
        words.pop()
    return words


@lru_cache(maxsize=4096)  # every identifier followed by `=` or `:` in an output asks
def _secret_kind(name: str) -> int:
    words = _words(name)
    if any(w in _SECRET_ANYWHERE for w in words):
        return _ALWAYS
    while len(words) > 1 and words[-1] in _QUALIFIERS:
        words.pop()
    if not words:
        return _NOT_SECRET
    last = words[-1]
    if last.endswith(_ALWAYS_ENDINGS):
        return _ALWAYS
    if last in _SECRET_LAST or last.endswith(_CONTEXT_ENDINGS):
        return _CONTEXT
    return _NOT_SECRET


def is_secret_name(name: str) -> bool:
    """Whether a setting, variable, header or field called `name` holds a credential."""
    return _secret_kind(name) != _NOT_SECRET


# -- values ----------------------------------------------------------------------------------
#: An identifier or attribute path: in code, a reference to where the secret is kept.
_REFERENCE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
#: Letters only (a word, a type, a dotted name): as far as its text tells, a label.
_PLAIN_WORD = re.compile(r"[A-Za-z_]+(?:\.[A-Za-z_]+)*")
#: A count, size or duration (`4096`, `1.5`, `30s`, `8Gi`).
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?[A-Za-z]{0,3}")
#: Filled in later: `{token}`, `${TOKEN}`, `$TOKEN`, `%(password)s`, `%s`, `<api-key>`.
#: Prose (`"Enter your password"`) has spaces; no credential written in a slot does.
_TEMPLATE = re.compile(r"[{}\s]|^\$|%\(|%[sdr]|^<.*>$")
#: What generated credentials are written in: base64, base64url, hex, URL-safe text.
_TOKEN_ALPHABET = re.compile(r"[A-Za-z0-9+/=_.~:-]+")
_CODE_PARTS = re.compile(r"[_.]+")
_LETTER_OR_DIGIT_RUN = re.compile(r"[A-Za-z]+|[0-9]+")
_ALNUM, _DIGIT, _LOWER, _UPPER = (re.compile(c) for c in ("[A-Za-z0-9]", "[0-9]", "[a-z]", "[A-Z]"))
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")


def _is_placeholder(value: str) -> bool:
    """A template, prose, one repeated character (`********`) or punctuation (`...`)."""
    return (_TEMPLATE.search(value) is not None or value.count(value[0]) == len(value)
            or _ALNUM.search(value) is None)


def _looks_generated(value: str) -> bool:
    """Machine-made: letters and digits interleaved (`7f3c9a0e`), or all three kinds at length.

    Words, versions and code names switch between letters and digits at most twice
    (`sha256`, `k8s-app`, `python3.11`, `Ed25519PrivateKey`); hex digests and random keys
    many times. A code name is judged by its parts (`pb2_v10.AuthInfo`), and a long run mixing
    upper, lower and digits is a key unless it is a code name. Only a token alphabet counts:
    a regular expression or markup is not a credential, however mixed.
    """
    if len(value) < 8 or _TOKEN_ALPHABET.fullmatch(value) is None:
        return False
    code_name = _REFERENCE.fullmatch(value) is not None
    parts = _CODE_PARTS.split(value) if code_name else [_NON_ALNUM.sub("", value)]
    if any(len(_LETTER_OR_DIGIT_RUN.findall(part)) > 3 for part in parts):  # 3 switches
        return True
    return (not code_name and len(value) >= 16 and all(
        kind.search(value) is not None for kind in (_DIGIT, _LOWER, _UPPER)))


def _names_a_secret(value: str) -> bool:
    """Whether `value` says what belongs there (`your-api-key`, `PASSWORD`, `my_token`)."""
    return any(_secret_kind(word) for word in _words(value))


def _holds_secret(value: str, kind: int, *, literal: bool) -> bool:
    """Whether `value`, written in a slot named as secret of `kind`, is a credential.

    `literal` says the syntax makes it one (a quoted string); bare text may instead be code
    naming where the secret is kept. What this cannot tell from code is left: a one-word
    password (`password: letmein` reads like `password: Secret`) and a quoted passphrase with
    spaces (it reads like a help text). Configured values are masked whatever they look like.
    """
    if len(value) < MIN_SECRET_LENGTH or _is_placeholder(value) or _NUMBER.fullmatch(value):
        return False
    if _looks_generated(value):
        return True
    if kind != _ALWAYS or _names_a_secret(value):
        return False
    if literal:
        return _PLAIN_WORD.fullmatch(value) is None
    # Bare: a code name is letters (`password`, `newPassword`) or joined by `_`/`.`
    # (`self.secret_key`, `key_2`); `hunter2` or `correct-horse-battery` is not one.
    return not (_REFERENCE.fullmatch(value) and (value.isalpha() or "_" in value or "." in value))


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
                          r"(?:bearer|basic|token|digest)[ \t]+))(?P<value>[^\s\"'\\,;]+)")
#: `Bearer x` / `Basic x` anywhere else: the scheme stays, so the text still reads.
_AUTH_SCHEME = re.compile(r"(?P<keep>\b(?i:bearer|basic)\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})")
#: Words this short after the scheme are prose ("Basic authentication failed", "HTTP Basic
#: Authentication.", "basic username/password"); a credential is longer or not a word.
_PROSE = re.compile(r"[A-Za-z][a-z]{1,15}(?:[/_-][A-Za-z][a-z]{1,15})*[.-]?")
#: `scheme://user:password@host`: user and host stay. Anchored at the start of the scheme
#: (not at any word boundary) so a long dotted run is scanned once, not once per dot.
_URL_PASSWORD = re.compile(r"(?P<keep>(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://"
                           r"[^/\s:@\"'\\]*:)(?P<value>[^/\s@\"'\\]+)(?=@)")
#: The `name=` / `name:` / `"name": ` of an assignment; the value follows. `==` compares and
#: `:=` binds an expression, neither assigns a literal.
_ASSIGNED_NAME = re.compile(r"(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)"
                            r"(?:\\?[\"'])?[ \t]*(?P<sep>[=:])(?!=)[ \t]*")
#: A Python annotation before the default it annotates: `password: str | None = `. The
#: space before `=` (PEP 8) tells it from base64 padding (`password: cGFzcw==`).
_ANNOTATION = re.compile(r"[A-Za-z_][\w.]{0,100}(?:\[[^\]\n]{0,200}\])?"
                         r"(?:[ \t]*\|[ \t]*[A-Za-z_][\w.]{0,100}(?:\[[^\]\n]{0,200}\])?)*"
                         r"[ \t]+=(?!=)[ \t]*")
#: A quoted value's opening: string prefix (`b"`, `f'`) and the quote (`\"` inside JSON text).
_OPENING_QUOTE = re.compile(r"(?P<prefix>[rRbBuUfF]{0,2})(?P<quote>\\?[\"'])")
#: A bare value runs to a space, quote, delimiter or markdown backtick. Only its start is
#: judged (a credential shows what it is in its first characters), so text packed with
#: names (`a_key:b_key:...`) costs a bounded look per name, not one to the end of the run.
_JUDGED = 64
_VALUE_CHAR = r"[^\s\"'`\\,;&<>(){}\[\]]"
_BARE_VALUE = re.compile(_VALUE_CHAR + "{1,%s}" % _JUDGED)  # noqa: UP031 (braces in a regex)
_BARE_REST = re.compile(_VALUE_CHAR + "*")
#: A quoted credential longer than this is not one (a document, a certificate bundle).
_QUOTED_LIMIT = 4096
#: Words after `Authorization:` that name the scheme, not the credential.
_SCHEMES = frozenset({"bearer", "basic", "token", "digest"})


def _header_value(match: re.Match[str]) -> str:
    if _is_placeholder(match.group("value")):  # `Bearer {token}`, `Bearer <token>`
        return match.group(0)
    return match.group("keep") + MASK


def _scheme_value(match: re.Match[str]) -> str:
    value = match.group("value")
    if _PROSE.fullmatch(value) or _is_placeholder(value):
        return match.group(0)
    return match.group("keep") + MASK


def _url_password(match: re.Match[str]) -> str:
    value = match.group("value")
    if _is_placeholder(value) or _names_a_secret(value):  # `{password}`, `user:password@`
        return match.group(0)
    return match.group("keep") + MASK


def _assigned_value(text: str, start: int, kind: int, sep: str) -> tuple[int, int] | None:
    """The span of the credential assigned at `start`, or None when what is there holds none."""
    if (opening := _OPENING_QUOTE.match(text, start)) is not None:
        quote, begin = opening.group("quote"), opening.end()
        end = text.find(quote, begin, begin + _QUOTED_LIMIT)
        if end != -1 and "\n" not in text[begin:end]:
            if "f" in opening.group("prefix").lower():  # an f-string is an expression
                return None
            return (begin, end) if _holds_secret(text[begin:end], kind, literal=True) else None
        start = begin  # unclosed (the text was cut): the run that is there
    if sep == ":" and (annotated := _ANNOTATION.match(text, start)) is not None:
        return _assigned_value(text, annotated.end(), kind, "=")  # the annotated default
    found = _BARE_VALUE.match(text, start)
    if found is None:
        return None
    end = found.end()
    if end - start < _JUDGED and text[end:end + 1] in ("(", "["):
        return None  # a call or a subscript: code computing the secret
    value = found.group().rstrip(".:")  # a sentence's full stop or colon is not part of it
    if value.lower() in _SCHEMES or not _holds_secret(value, kind, literal=False):
        return None
    if end - start == _JUDGED and (rest := _BARE_REST.match(text, end)) is not None:
        end = rest.end()  # judged by its start, masked whole
    while text[end - 1] in ".:":
        end -= 1
    return start, end


def _mask_assignments(text: str) -> str:
    """Mask the credential assigned to every secret name; every other value stays as written.

    A hand loop, not `re.sub`: a non-secret assignment must not swallow its value, which may
    hold one (`url=https://h/?access_token=x`).
    """
    parts: list[str] = []
    done = scan = 0
    while (found := _ASSIGNED_NAME.search(text, scan)) is not None:
        scan = found.end()
        kind = _secret_kind(found.group("name"))
        if kind == _NOT_SECRET:
            continue
        span = _assigned_value(text, found.end(), kind, found.group("sep"))
        if span is None:
            continue
        parts += [text[done:span[0]], MASK]
        done = scan = span[1]
    return "".join(parts) + text[done:] if parts else text


def _reveals_nothing(value: Any) -> bool:
    """A value that cannot be a credential whatever its field is called: empty, a flag, or a
    number too short to be a PIN (a count of `Secret` resources, `token_ttl: 30`)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return len(str(abs(int(value)))) < MIN_SECRET_LENGTH
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
        text = _AUTH_HEADER.sub(_header_value, text)
        text = _AUTH_SCHEME.sub(_scheme_value, text)
        text = _URL_PASSWORD.sub(_url_password, text)
        return _mask_assignments(text)

    def field(self, name: str, value: Any) -> Any:
        """One named value for display: masked whole under a secret name, strings redacted.

        Other types are returned as they are; an empty value, a flag or a small number
        reveals nothing and stays (`api_keys=()` says none are set).
        """
        if is_secret_name(name) and not _reveals_nothing(value):
            return MASK
        if isinstance(value, str):
            return self(value)
        return value

    def scrub(self, value: Any, name: str | None = None, *, _depth: int = 0) -> Any:
        """`value` as JSON-able data with secrets masked: by field name and inside strings."""
        if name is not None and is_secret_name(name) and not _reveals_nothing(value):
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
