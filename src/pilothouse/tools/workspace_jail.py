"""The workspace jail: the one answer to "is this path inside the workspace?".

Every tool that touches files asks here: the shell policy for each path a command reads or
writes, the code index for the folder it indexes, searches and quotes. Paths are resolved with
symlinks followed (`os.path.realpath`), so a link inside the workspace that points at `/etc`
counts as `/etc`, and no number of `..` climbs out. A path that does not exist yet resolves as
far as it exists, which is what a later write to it would touch.

The jail says where a path is; each tool decides what that means (the shell asks a person
before reading outside and never writes there; the code index refuses outside folders).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pilothouse.errors import UserInputError


@dataclass(frozen=True)
class WorkspaceJail:
    """The workspace root (resolved, symlinks followed) and the home `~` expands to."""

    root: Path
    home: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str], home: str | None = None) -> WorkspaceJail:
        """The jail of `root`; `home` (default: the user's) is what `~` means in a path."""
        return cls(Path(os.path.realpath(root)), Path(home or Path.home()))

    def resolve(self, value: str | os.PathLike[str], cwd: Path | None = None) -> Path:
        """Absolute, symlink-resolved path of `value` as seen from `cwd` (default: the root)."""
        text = os.fspath(value)
        if text == "~" or text.startswith("~/"):
            text = str(self.home) + text[1:]
        return Path(os.path.realpath(os.path.join(cwd or self.root, text)))

    def contains(self, path: Path) -> bool:
        """Whether the resolved `path` is the root or lies under it."""
        return path == self.root or self.root in path.parents

    def inside(self, value: str | os.PathLike[str], cwd: Path | None = None) -> bool:
        """Whether `value` (as typed, from `cwd`) resolves to a path inside the workspace."""
        return self.contains(self.resolve(value, cwd))

    def require(self, value: str | os.PathLike[str], *, action: str, hint: str) -> Path:
        """The resolved path of `value`, or a UserInputError when it lies outside the root.

        `action` completes "Pilothouse does not <action> outside it"; `hint` says what to do
        instead. The message names `value` as given: where a link in it points stays unsaid.
        """
        path = self.resolve(value)
        if not self.contains(path):
            raise UserInputError(
                f"'{os.fspath(value)}' is outside the workspace ({self.root}): Pilothouse "
                f"does not {action} outside it.",
                hint=hint,
            )
        return path
