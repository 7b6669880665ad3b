"""The environment a command gets (secrets removed) and redaction of what it prints.

The child environment is built from an allow-list, not by deleting known-bad names: an
unknown variable such as `PAYMENTS_DB=postgres://u:pw@host` would survive any deny-list.
Names that look secret are dropped even when allow-listed, and the values of dropped secrets
are then scrubbed from the output in case a command found them another way (a file, /proc).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Variables commands commonly need and that carry no credentials by themselves.
SAFE_VARIABLES = frozenset({
    "PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "TMPDIR",
    "COLUMNS", "LINES", "NO_COLOR", "KUBECONFIG", "AWS_PROFILE", "AWS_REGION",
    "AWS_DEFAULT_REGION", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
})
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|KEY|CREDENTIAL|AUTH(?!OR)|COOKIE|PRIVATE|"
    r"SSH_AUTH_SOCK|GPG_AGENT|DATABASE_URL|DSN",
    re.IGNORECASE,
)
_URL_WITH_PASSWORD = re.compile(r"://[^/\s:@]+:[^/\s@]+@")
#: Fixed settings that keep tools non-interactive and pager-free.
FORCED = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "GIT_CONFIG_NOSYSTEM": "1",
    "LESSSECURE": "1",
    "DEBIAN_FRONTEND": "noninteractive",
    # Command-line git config outranks the repository's own: a cloned repo's .git/config
    # cannot make `git status` run its fsmonitor program, nor enable the ext:: transport.
    "GIT_CONFIG_COUNT": "2",
    "GIT_CONFIG_KEY_0": "core.fsmonitor",
    "GIT_CONFIG_VALUE_0": "false",
    "GIT_CONFIG_KEY_1": "protocol.ext.allow",
    "GIT_CONFIG_VALUE_1": "never",
}
#: Token shapes redacted from any output, whatever produced them.
TOKEN_PATTERNS = (
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),
    re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bsk-(ant-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?P<keep>\b(?i:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?P<keep>(?i:aws_secret_access_key|password|passwd|secret)\s*[=:]\s*)\S+"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)"),
)
REDACTED = "[REDACTED]"
#: Shorter values ("1", "user") would redact ordinary words from every output.
_MIN_SECRET_LENGTH = 6


def is_secret_name(name: str) -> bool:
    """Whether a variable name suggests it holds a credential."""
    return bool(_SECRET_NAME.search(name))


@dataclass(frozen=True)
class CommandEnvironment:
    """The child environment plus the secret values to scrub from output."""

    variables: dict[str, str]
    secret_values: tuple[str, ...] = field(default=(), repr=False)

    def redactor(self) -> Redactor:
        return Redactor(self.secret_values)


def build_environment(
    source: Mapping[str, str],
    *,
    workspace: Path,
    pass_through: Iterable[str] = (),
) -> CommandEnvironment:
    """Keep SAFE_VARIABLES (and `pass_through`) from `source`, minus anything secret."""
    allowed = SAFE_VARIABLES | set(pass_through)
    variables: dict[str, str] = {}
    secrets: list[str] = []
    for name, value in source.items():
        looks_secret = is_secret_name(name) or bool(_URL_WITH_PASSWORD.search(value))
        if looks_secret:
            if len(value) >= _MIN_SECRET_LENGTH:
                secrets.append(value)
            continue
        if name in allowed or name.startswith("LC_"):
            variables[name] = value
    variables["PATH"] = _safe_path(variables.get("PATH", os.defpath), workspace)
    variables.update(FORCED)
    variables["PWD"] = str(workspace)
    # Longest first, so a secret that contains another is replaced whole.
    return CommandEnvironment(variables, tuple(sorted(set(secrets), key=len, reverse=True)))


def _safe_path(value: str, workspace: Path) -> str:
    """PATH without relative entries or workspace dirs, where a planted `ls` would win."""
    kept = []
    for entry in value.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        real = Path(os.path.realpath(entry))
        if real == workspace or workspace in real.parents:
            continue
        kept.append(entry)
    return os.pathsep.join(dict.fromkeys(kept)) or os.defpath


class Redactor:
    """Replaces known secret values and token-shaped strings with [REDACTED]."""

    def __init__(self, secret_values: Iterable[str] = ()) -> None:
        self.secret_values = tuple(v for v in secret_values if len(v) >= _MIN_SECRET_LENGTH)

    def __call__(self, text: str) -> str:
        for value in self.secret_values:
            text = text.replace(value, REDACTED)
        for pattern in TOKEN_PATTERNS:
            # Keep a `Bearer ` / `password=` label so the output still reads sensibly.
            text = pattern.sub(lambda m: (m.groupdict().get("keep") or "") + REDACTED, text)
        return text
