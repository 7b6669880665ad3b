"""A path that is not there: the workspace's paths it most likely meant.

A model that has not listed the workspace writes the paths it expects (`deploy_configs/`,
`config/settings.yaml`, `your-chart`), and the command fails with "No such file or
directory". Told only to list the directory first, it spends a call on `ls` or guesses again;
the workspace itself knows the candidates. Each missing path a failed command's stderr names
is compared, by its last component, with the workspace's own files and folders (a bounded
walk, hidden and dependency folders skipped), by the measure every "did you mean" of the tools
uses (`tools.closeness`), and the closest are named. Nothing is picked: the model reruns with
a path that exists, or says what is not there.
"""

from __future__ import annotations

import heapq
import os
import re
from dataclasses import dataclass
from pathlib import Path

from pilothouse.tools.closeness import closeness
from pilothouse.tools.workspace_dirs import FOREIGN_DIRS

#: How many candidates guidance names, and how much of the workspace is looked at.
MAX_CANDIDATES, MAX_ENTRIES = 4, 20_000
#: The path in a GNU tool's "No such file or directory" line, however the tool words it
#: (`grep: x: ...`, `ls: cannot access 'x': ...`, `head: cannot open 'x' for reading: ...`,
#: `sed: can't read x: ...`, `find: 'x': ...`, `cd: x: ...`).
_MISSING = re.compile(r"^(?:[\w./-]+(?: \d+)?: )+"
                      r"(?:cannot access |cannot open |can't read |can't open )?"
                      r"['‘\"]?(?P<path>[^'’\"\n]+?)['’\"]?(?: for reading)?: "
                      r"No such file or directory", re.M)


def missing_paths(stderr: str) -> list[str]:
    """The paths a failed command's stderr says do not exist, first mention first."""
    return list(dict.fromkeys(m.group("path").strip() for m in _MISSING.finditer(stderr)))


def near_paths(root: Path, wanted: str, limit: int = MAX_CANDIDATES) -> list[str]:
    """The workspace's paths (relative, folders with a `/`) whose last component is closest
    to `wanted`'s, closest first; none when nothing is close."""
    name = Path(wanted.rstrip("/")).name
    if not name:
        return []
    best: list[tuple[float, int, str]] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in FOREIGN_DIRS)
        here = Path(folder).relative_to(root)
        for entry, suffix in [*((d, "/") for d in dirs), *((f, "") for f in sorted(files))]:
            seen += 1
            score = closeness(name, entry)
            if score > 0:
                path = (here / entry).as_posix() + suffix
                item = (score, -len(path), path)  # closer, then shorter, kept
                if len(best) < limit:
                    heapq.heappush(best, item)
                elif item > best[0]:
                    heapq.heapreplace(best, item)
        if seen >= MAX_ENTRIES:
            break
    return [path for _, _, path in sorted(best, reverse=True)]


@dataclass(frozen=True)
class NearPaths:
    """A path a command could not find, and the workspace's closest paths to it."""

    missing: str
    closest: tuple[str, ...]

    def guidance(self) -> str:
        shown = ", ".join(f"`{c}`" for c in self.closest)
        return (f"`{self.missing}` does not exist; the closest paths in the workspace are "
                f"{shown}. Use one of them, or `find . -name '<name>'` for another.")


def nearest_missing(stderr: str, root: Path) -> NearPaths | None:
    """The first missing path of `stderr` that the workspace has close paths to (None: stderr
    names no missing path, or nothing in the workspace is close)."""
    for wanted in missing_paths(stderr)[:2]:
        candidates = near_paths(root, wanted)
        if candidates:
            return NearPaths(wanted, tuple(candidates))
    return None
