"""The environment a command gets (secrets removed) and redaction of what it prints.

The child environment is built from an allow-list, not by deleting known-bad names: an
unknown variable such as `PAYMENTS_DB=postgres://u:pw@host` would survive any deny-list.
Names that look secret (pilothouse.redaction decides) are dropped even when allow-listed, and
the values of dropped secrets are then scrubbed from the output in case a command found them
another way (a file, /proc).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pilothouse.redaction import MIN_SECRET_LENGTH, Redactor, is_secret_name, redact

#: Variables commands commonly need and that carry no credentials by themselves.
SAFE_VARIABLES = frozenset({
    "PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "TMPDIR",
    "COLUMNS", "LINES", "NO_COLOR", "KUBECONFIG", "AWS_PROFILE", "AWS_REGION",
    "AWS_DEFAULT_REGION", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
})
#: Not secrets themselves but handles to an agent that holds keys: as good as one.
AGENT_SOCKETS = frozenset({"SSH_AUTH_SOCK", "GPG_AGENT_INFO"})
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
        # A value holding a credential shape (`PAYMENTS_DB=postgres://u:pw@h`) counts too.
        looks_secret = is_secret_name(name) or name in AGENT_SOCKETS or redact(value) != value
        if looks_secret:
            if len(value) >= MIN_SECRET_LENGTH:
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
