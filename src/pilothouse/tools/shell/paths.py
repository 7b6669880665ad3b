"""Where a path points: inside the workspace, outside it, at a secret, at git's own hooks.

Inside or outside is the workspace jail's answer (`tools/workspace_jail.py`, shared with the
code index): paths are resolved with symlinks followed, so a link inside the workspace that
points at `~/.ssh` counts as `~/.ssh`. The rules are deliberately asymmetric: reading outside
the workspace needs approval, writing outside it never happens, and secrets are never read.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pilothouse.tools.workspace_jail import WorkspaceJail

Access = Literal["read", "write"]
Action = Literal["allow", "ask", "deny"]

#: Harmless device files a command may name in either direction.
NEUTRAL_PATHS = frozenset({"/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr"})
#: Writing here lets a later, allowed `git` command run code (hooks, aliases, pagers).
GIT_CODE_PATHS = (".git/hooks", ".git/config", ".git/info/attributes")


@dataclass(frozen=True)
class PathVerdict:
    """What touching one path means for the policy."""

    action: Action
    reason: str
    path: Path
    suggestion: str | None = None


@dataclass(frozen=True)
class Workspace(WorkspaceJail):
    """The jail commands run in and may write to, plus the secret-file patterns."""

    secret_patterns: tuple[str, ...] = ()

    @classmethod
    def create(
        cls, root: str | os.PathLike[str], secret_patterns: Iterable[str], home: str | None = None
    ) -> Workspace:
        jail = WorkspaceJail.at(root, home)
        return cls(jail.root, jail.home, tuple(secret_patterns))

    def is_secret(self, path: Path, typed: str = "") -> bool:
        """Whether `path` (or the text as typed) matches a secret-file pattern."""
        home = str(self.home)
        candidates = {str(path), typed}
        # Patterns may say `~/.ssh/*`; compare both the real path and its `~` form.
        for text in list(candidates):
            if text.startswith(home + "/"):
                candidates.add("~" + text[len(home) :])
        names = {path.name, Path(typed).name} - {""}
        by_name, by_path = _secret_matchers(self.secret_patterns)
        return any(by_name.match(n) for n in names) or any(by_path.match(c) for c in candidates)

    def verdict(self, value: str, cwd: Path, access: Access, *, command: str) -> PathVerdict:
        """Decide what `command` reading or writing `value` means."""
        path = self.resolve(value, cwd)
        if str(path) in NEUTRAL_PATHS or value in NEUTRAL_PATHS:
            return PathVerdict("allow", "", path)
        if self.is_secret(path, value):
            return PathVerdict(
                "deny",
                f"{command} would {access} {value}, which holds secrets",
                path,
                "Secrets are never read or written by the agent; ask the user for the "
                "non-secret value you need.",
            )
        if not self.contains(path):
            if access == "write":
                return PathVerdict(
                    "deny",
                    f"{command} would write {path}, outside the workspace",
                    path,
                    f"Write inside the workspace ({self.root}) instead.",
                )
            if not os.path.lexists(path):
                # Nothing is there to approve: a person asked would weigh a read of nothing.
                # Measured on dev: the local model grepped `/path/to/<service>`, a
                # placeholder, and the person was asked to approve it. Refusing runs nothing.
                return PathVerdict(
                    "deny",
                    f"{command} would read {path}, which does not exist (outside the "
                    "workspace)",
                    path,
                    f"Name a path inside the workspace ({self.root}); `ls` or `find . -name "
                    "<name>` finds it.",
                )
            return PathVerdict(
                "ask",
                f"{command} reads {path}, outside the workspace",
                path,
                "Ask the user to approve reading outside the workspace, or copy the file in.",
            )
        relative = path.relative_to(self.root).as_posix()
        if access == "write" and any(
            relative == p or relative.startswith(p + "/") or f"/{p}" in f"/{relative}"
            for p in GIT_CODE_PATHS
        ):
            return PathVerdict(
                "deny",
                f"{command} would change {relative}; git runs code from there on later commands",
                path,
                "Leave git hooks and configuration to the user.",
            )
        return PathVerdict("allow", "", path)


def path_candidates(arg: str) -> list[str]:
    """The parts of one argument that may name a file: itself, and a value after `=`."""
    if arg in ("", "-", "--"):
        return []
    if arg.startswith("-"):
        # `--output=FILE`, `--file=~/x`: only the value may be a path.
        return [arg.split("=", 1)[1]] if "=" in arg and arg.split("=", 1)[1] else []
    candidates = [arg]
    if "=" in arg and arg.split("=", 1)[1]:
        candidates.append(arg.split("=", 1)[1])  # `of=/dev/sda`, `if=~/.ssh/id_rsa`
    return candidates


@functools.lru_cache(maxsize=8)
def _secret_matchers(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """`patterns` as two compiled matchers: the base-name patterns (no `/`), and the path
    patterns, where one for the files in a folder (`*/.ssh/*`) covers the folder too.
    Compiled once: a recursive read checks every file of a tree (`secret_trees`)."""
    by_name = [fnmatch.translate(p) for p in patterns if "/" not in p]
    by_path = [fnmatch.translate(p) for p in patterns if "/" in p]
    by_path += [fnmatch.translate(p[:-2]) for p in patterns if p.endswith("/*")]
    never = r"(?!)"
    return re.compile("|".join(by_name) or never), re.compile("|".join(by_path) or never)
