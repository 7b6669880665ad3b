"""Findings: the unit of policy reasoning, and the interface guards call back through."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pilothouse.tools.shell.paths import Access, Action

if TYPE_CHECKING:
    from pathlib import Path

    from pilothouse.tools.shell.git_secrets import TrackedSecrets
    from pilothouse.tools.shell.tree_walk import Skips, TreeWalk

SEVERITY: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
NO_CODE = "Use the plain command without this option."


@dataclass(frozen=True)
class Finding:
    """One reason to allow, ask or deny, with what to do instead."""

    action: Action
    reason: str
    suggestion: str | None = None
    #: Options that, put right after the program's name, make a refused command one the
    #: policy may allow (a recursive read with its secret files excluded).
    repair: tuple[str, ...] = ()
    #: Whether the repair goes after the command's last word instead (git's pathspecs).
    repair_at_end: bool = False


class GuardContext(Protocol):
    """What a guard may ask of the policy: judge an inner command, a script, a path, and
    walk the tree under a folder the way a recursive read opens it (the links leaving the
    workspace and the secret files it meets: one walk serves every check of a command), and
    list the secret files git tracks in a folder's repository."""

    def check_argv(self, argv: Sequence[str]) -> Finding: ...
    def check_script(self, script: str) -> Finding: ...
    def path(self, value: str, access: Access, command: str) -> Finding: ...
    def tree(self, value: str, skips: Skips, follows_links: bool) -> TreeWalk: ...
    def directory(self, value: str | None) -> Path: ...
    def git_tracked(self, directory: Path) -> TrackedSecrets: ...
    def is_secret(self, value: str) -> bool: ...


Guard = Callable[[Sequence[str], GuardContext], list[Finding]]


def combine(findings: Iterable[Finding]) -> Finding:
    """The strictest finding wins; its reasons are joined, its first suggestion kept."""
    items = list(findings) or [Finding("allow", "")]
    worst = max(SEVERITY[f.action] for f in items)
    top = [f for f in items if SEVERITY[f.action] == worst]
    reasons = list(dict.fromkeys(f.reason for f in top if f.reason))
    suggestion = next((f.suggestion for f in top if f.suggestion), None)
    repair = tuple(dict.fromkeys(option for f in top for option in f.repair))
    at_end = any(f.repair_at_end for f in top if f.repair)
    return Finding(top[0].action, "; ".join(reasons), suggestion, repair=repair,
                   repair_at_end=at_end)


def runs(what: str, inner: Sequence[str], ctx: GuardContext) -> Finding:
    """A command that runs `inner`: at least ask; deny when `inner` itself is denied."""
    if not inner:
        return Finding("ask", f"{what} runs a command")
    verdict = ctx.check_argv(inner)
    shown = " ".join(inner)
    if verdict.action == "deny":
        return Finding("deny", f"{what} would run `{shown}`: {verdict.reason}", verdict.suggestion)
    return Finding("ask", f"{what} runs `{shown}`", "Run the inner command directly instead.")
