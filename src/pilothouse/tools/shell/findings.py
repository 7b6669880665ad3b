"""Findings: the unit of policy reasoning, and the interface guards call back through."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from pilothouse.tools.shell.paths import Access, Action

SEVERITY: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
NO_CODE = "Use the plain command without this option."


@dataclass(frozen=True)
class Finding:
    """One reason to allow, ask or deny, with what to do instead."""

    action: Action
    reason: str
    suggestion: str | None = None


class GuardContext(Protocol):
    """What a guard may ask of the policy: judge an inner command, a script, a path, and the
    symlinks under a folder a command reads recursively through its links."""

    def check_argv(self, argv: Sequence[str]) -> Finding: ...
    def check_script(self, script: str) -> Finding: ...
    def path(self, value: str, access: Access, command: str) -> Finding: ...
    def links(self, value: str, command: str) -> Finding: ...


Guard = Callable[[Sequence[str], GuardContext], list[Finding]]


def combine(findings: Iterable[Finding]) -> Finding:
    """The strictest finding wins; its reasons are joined, its first suggestion kept."""
    items = list(findings) or [Finding("allow", "")]
    worst = max(SEVERITY[f.action] for f in items)
    top = [f for f in items if SEVERITY[f.action] == worst]
    reasons = list(dict.fromkeys(f.reason for f in top if f.reason))
    suggestion = next((f.suggestion for f in top if f.suggestion), None)
    return Finding(top[0].action, "; ".join(reasons), suggestion)


def runs(what: str, inner: Sequence[str], ctx: GuardContext) -> Finding:
    """A command that runs `inner`: at least ask; deny when `inner` itself is denied."""
    if not inner:
        return Finding("ask", f"{what} runs a command")
    verdict = ctx.check_argv(inner)
    shown = " ".join(inner)
    if verdict.action == "deny":
        return Finding("deny", f"{what} would run `{shown}`: {verdict.reason}", verdict.suggestion)
    return Finding("ask", f"{what} runs `{shown}`", "Run the inner command directly instead.")
