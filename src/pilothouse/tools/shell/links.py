"""Recursive reads that follow symlinks: the jail checks the tree, not just the arguments.

A path argument is resolved before the policy decides, so `cat link/secret` counts as the file
the link points at. A recursive command that follows links (`grep -R`, `find -L`, `diff -r`,
`tree -l`, `du -L`, `ls -RL`) reads whatever the links under its start folders point at, which
no argument shows. So for those, the tree under each start folder inside the workspace is
walked (following the links that stay inside, as the command would) and the first link that
leaves the workspace makes the command wait for a person, with the link and its target shown.
Options that read the names of the files to open from a file (`--files0-from`) cannot be
checked at all and always ask.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pilothouse.tools.shell.arguments import path_roles
from pilothouse.tools.shell.findings import Finding, GuardContext
from pilothouse.tools.workspace_jail import WorkspaceJail

#: Entries a check walks before giving up (and asking): a bound on the policy's own cost.
MAX_WALKED = 20_000


@dataclass(frozen=True)
class Escape:
    """A symlink under a start folder whose target lies outside the workspace."""

    link: Path
    target: Path


def escaping_link(start: Path, jail: WorkspaceJail,
                  limit: int = MAX_WALKED) -> Escape | int | None:
    """The first link under `start` (a resolved folder inside the jail) that leaves the jail.

    Links that stay inside are followed, as the command would; each real folder is walked once.
    Returns the escape, None when there is none, or the walk's size when it reached `limit`.
    """
    pending = [start]
    seen: set[Path] = set()
    walked = 0
    while pending:
        folder = pending.pop()
        real = Path(os.path.realpath(folder))
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = list(os.scandir(real))
        except OSError:  # unreadable for us: the command cannot read it either
            continue
        for entry in entries:
            walked += 1
            if walked > limit:
                return walked
            if entry.is_symlink():
                target = Path(os.path.realpath(entry.path))
                if not jail.contains(target):
                    return Escape(Path(entry.path), target)
                if target.is_dir():
                    pending.append(target)
            elif entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
    return None


def link_finding(command: str, start: Path, jail: WorkspaceJail) -> Finding:
    """Allow when no link under `start` leaves the workspace; otherwise ask, showing it."""
    if not start.is_dir() or not jail.contains(start):
        return Finding("allow", "")  # a file, or outside: the path check covers it
    found = escaping_link(start, jail)
    if found is None:
        return Finding("allow", "")
    if isinstance(found, int):
        return Finding(
            "ask",
            f"{command} follows symlinks under {start}, a tree too large to check for links "
            "that leave the workspace",
            "Drop the option that follows symlinks, or ask the user to approve.",
        )
    return Finding(
        "ask",
        f"{command} follows the symlink {found.link} to {found.target}, outside the workspace",
        "Drop the option that follows symlinks, or ask the user to approve reading there.",
    )


def _short_flags(args: Sequence[str]) -> set[str]:
    """Every single-letter option in `args` (`-Rn` gives R and n), up to `--`."""
    letters: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            letters.update(arg[1:])
    return letters


def follows_links(name: str, args: Sequence[str]) -> str | None:
    """The option by which `name args` follows symlinks while recursing, or None."""
    short, long = _short_flags(args), set(args)
    if name in ("grep", "egrep", "fgrep"):
        if "R" in short or "--dereference-recursive" in long:
            return "-R"
    elif name == "find":
        if "-L" in _find_options(args) or "-follow" in long:
            return "-L"
    elif name == "ls":
        recursive = "R" in short or "--recursive" in long
        if recursive and ("L" in short or "--dereference" in long):
            return "-RL"
    elif name == "du":
        if "L" in short or "--dereference" in long:
            return "-L"
    elif name == "tree":
        if "l" in short:
            return "-l"
    elif name == "diff":
        recursive = "r" in short or "--recursive" in long
        if recursive and "--no-dereference" not in long:
            return "-r"
    return None


def _find_options(args: Sequence[str]) -> list[str]:
    """find's options before its start folders (`-H`, `-L`, `-P`, `-D opts`, `-Olevel`)."""
    leading: list[str] = []
    value_next = False
    for arg in args:
        if value_next:
            value_next = False
        elif arg in ("-H", "-L", "-P") or arg.startswith("-O"):
            leading.append(arg)
        elif arg.startswith("-D"):
            value_next = arg == "-D"
        else:
            break
    return leading


def link_findings(name: str, args: Sequence[str], ctx: GuardContext) -> list[Finding]:
    """Findings for the links a recursive, link-following `name args` would read through."""
    found: list[Finding] = []
    if option := names_from_file(args):
        found.append(Finding(
            "ask", f"{name} {option} opens the files another file names, which the policy "
            "cannot check", "Name the files on the command line instead."))
    option = follows_links(name, args)
    if option is None:
        return found
    starts = [v for v in path_roles(name, args).reads if not v.startswith("-")]
    what = f"{name} {option}"
    found.extend(ctx.links(start, what) for start in starts or ["."])
    return found


def names_from_file(args: Sequence[str]) -> str | None:
    """An option that makes the command open every file named in another file."""
    for arg in args:
        if arg == "--":
            break
        if arg.split("=", 1)[0] == "--files0-from":
            return "--files0-from"
    return None
