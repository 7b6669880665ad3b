"""One walk of the tree a recursive command reads, shared by the checks that need it.

A recursive read opens files no argument names, so two checks look under its start folders:
links that leave the workspace (`links`: the command reads where they point) and secret files
(`secret_trees`: the command prints what they hold). Both want the same tree, read the way
the command reads it, so it is walked once per start folder and command (`_Evaluator.tree`
keeps the result while one command is judged) and each check is a view of the `TreeWalk`.

The walk skips what the command skips (`Skips`: grep's `--include`, `--exclude`,
`--exclude-dir`, diff's `--exclude`), follows links only when the command does, enters each
real folder once (a link loop ends), and gives up after `MAX_WALKED` entries: a bound on the
policy's own cost, which the checks turn into a question for a person.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pilothouse.tools.shell.paths import Workspace

#: Entries a check walks before giving up (and asking): a bound on the policy's own cost.
MAX_WALKED = 20_000


@dataclass(frozen=True)
class Skips:
    """What a recursive read leaves unopened, by base name (fnmatch globs)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    exclude_dirs: tuple[str, ...] = ()

    def opens(self, name: str, is_dir: bool) -> bool:
        """Whether the command opens (a file) or enters (a folder) called `name`.

        A name both included and excluded counts as opened: which wins depends on the
        options' order, and the walk errs toward reading."""
        def matches(patterns: Sequence[str]) -> bool:
            return any(fnmatch.fnmatchcase(name, p) for p in patterns)
        if is_dir:
            return not matches(self.exclude_dirs)
        if self.include and not matches(self.include):
            return False
        return not (matches(self.exclude) and not matches(self.include))


@dataclass(frozen=True)
class Escape:
    """A symlink under a start folder whose target lies outside the workspace."""

    link: Path
    target: Path


@dataclass(frozen=True)
class TreeWalk:
    """What a recursive read of one start folder would meet."""

    #: The start folder, resolved.
    start: Path
    #: Whether `start` lies in the workspace. A start outside it is the path check's to
    #: judge (it asks already), so the link check has nothing to add there.
    inside: bool
    #: The first link met that leads out of the workspace, when the command follows links.
    escape: Escape | None
    #: The secret files the command would open; a secret folder stands for those in it.
    secrets: tuple[Path, ...]
    #: Entries walked, and whether that passed the bound: the walk stopped there, so an
    #: escape or a secret not found may still lie beyond.
    walked: int
    too_large: bool


def walk_tree(start: Path, workspace: Workspace, skips: Skips, follows_links: bool,
              limit: int = MAX_WALKED) -> TreeWalk:
    """Walk the tree under `start` (resolved) as a recursive read would open it.

    A link counts as secret by its name or by its target. An escaping link does not stop
    the walk: the secrets beyond it still decide between asking and refusing. Links are
    judged in every folder the command enters, even those it would not open by name: a
    narrower check would rest on how each tool matches names, and asking costs less."""
    inside = workspace.contains(start)
    escape: Escape | None = None
    found: dict[Path, None] = {}
    # Each folder to walk, with the secret folder it lies in (None: not in one).
    pending: list[tuple[Path, Path | None]] = [(start, None)] if start.is_dir() else []
    seen: set[str] = set()
    walked = 0
    while pending:
        folder, secret_folder = pending.pop()
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = list(os.scandir(folder))
        except OSError:  # unreadable for us: the command cannot read it either
            continue
        for entry in entries:
            walked += 1
            if walked > limit:
                return TreeWalk(start, inside, escape, tuple(found), walked, True)
            link = entry.is_symlink()
            if link and not follows_links:
                continue
            target = Path(os.path.realpath(entry.path)) if link else None
            if target is not None and escape is None and inside and not workspace.contains(
                    target):
                # Named where it really lies, so the same link reads the same every time.
                escape = Escape(Path(real, entry.name), target)
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if not skips.opens(entry.name, is_dir):
                continue
            path = folder / entry.name  # only the name is new: cheaper than Path(entry.path)
            secret = secret_folder or (path if workspace.is_secret(path) or (
                target is not None and workspace.is_secret(target)) else None)
            if is_dir:
                pending.append((path, secret))
            elif secret is not None:
                found[secret] = None
    return TreeWalk(start, inside, escape, tuple(found), walked, False)
