"""The policy's answer for one command string, and the checked plan the executor runs.

The executor only ever runs a `PolicyDecision.plan`: the argv lists and resolved redirection
paths exactly as the policy saw them, so nothing is re-parsed or re-expanded in between.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pilothouse.tools.shell.paths import Action

RedirectMode = Literal["read", "write", "append", "dup"]


@dataclass(frozen=True)
class PlannedRedirect:
    """Open `path` (absolute, checked) onto `fd`, or make `fd` a copy of `source_fd`."""

    fd: int
    mode: RedirectMode
    path: Path | None = None
    source_fd: int | None = None


@dataclass(frozen=True)
class PlannedCommand:
    """One stage of a pipeline: the expanded argv and its redirections."""

    argv: tuple[str, ...]
    redirects: tuple[PlannedRedirect, ...] = ()


@dataclass(frozen=True)
class PlannedStep:
    """A pipeline (or a `cd`) preceded by its connector (``, `;`, `&&`, `||`).

    `cwd` is the directory the step was checked in; the executor refuses to run it anywhere
    else (a failed `cd` would otherwise shift every relative path the policy approved).
    """

    connector: str
    cwd: Path
    commands: tuple[PlannedCommand, ...] = ()
    chdir: Path | None = None


@dataclass(frozen=True)
class PartDecision:
    """The verdict on one simple command of the line."""

    argv: tuple[str, ...]
    action: Action
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"argv": list(self.argv), "action": self.action, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class PolicyDecision:
    """allow / ask / deny for a whole command line, why, and what to do instead."""

    action: Action
    reason: str
    command: str
    parts: tuple[PartDecision, ...] = ()
    suggestion: str | None = None
    #: An unambiguous fix the caller may check and run instead: a quoting mistake mended,
    #: or a recursive read with the secret files it would open excluded.
    repaired: str | None = None
    plan: tuple[PlannedStep, ...] = field(default=(), repr=False, compare=False)

    @property
    def allowed(self) -> bool:
        return self.action == "allow"

    @property
    def needs_approval(self) -> bool:
        return self.action == "ask"

    @property
    def denied(self) -> bool:
        return self.action == "deny"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form for tool results and the approval middleware."""
        body: dict[str, Any] = {
            "action": self.action,
            "reason": self.reason,
            "command": self.command,
            "parts": [p.to_dict() for p in self.parts],
        }
        if self.suggestion:
            body["suggestion"] = self.suggestion
        if self.repaired:
            body["repaired"] = self.repaired
        return body
