"""The workspace's names: its files, the identifiers its code defines, its top-level packages.

The DevOps agent's domain is the workspace, and the workspace says what its names are. A
question that names one of its files ("deploy/k8s/deployment.yaml", "CHANGELOG.md"), an
identifier its code uses ("RETRY_LIMIT", "parse_headers") or one of its
packages is about this codebase, whatever the words around it (measured: such questions were
answered by the supervisor from nothing, or sent to the agent whose words they shared).

Files and identifiers are looked for only in words shaped like a path or an identifier (a
`/`, a file extension, an `_` inside a word): an ordinary word ("retry", "auth") occurs in any
codebase's text and says nothing. An ordinary word can still name one of its folders ("our
helm values", "the migrations"): a group of its files, which decides the agent only where
nothing else does, as a project's name does (`inventory.GROUP_KINDS`). The walk is bounded
by PILOTHOUSE_INDEX_MAX_FILES and by the bytes read, and skips what is not the workspace's own
(dependencies, build output, hidden directories), so a workspace at a home directory costs a
bounded fraction of a second.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from pilothouse.agents.inventory import FOLDER, Candidate, Mention
from pilothouse.tools.rag.boundaries import PROGRAM_LANGUAGES, language_for
from pilothouse.tools.workspace_dirs import FOREIGN_DIRS

#: Package names too common to say a question is about this codebase.
_GENERIC_PACKAGES = frozenset({
    "src", "lib", "libs", "pkg", "api", "core", "utils", "util", "common", "shared", "main",
    "test", "tests", "testing", "docs", "scripts", "tools", "internal", "cmd", "config"})
#: How far and how much of the workspace the package walk looks at.
_PACKAGE_DEPTH, _MAX_DIRS = 3, 2_000
#: A word shaped like a path (a slash, or a name with an extension).
_PATH_SHAPE = re.compile(r".+/.+|[\w-]+\.[A-Za-z][\w]{0,5}")
#: A word shaped like an identifier: snake_case or SCREAMING_CASE. CamelCase is prose's too
#: ("GitOps", "PostgreSQL"), and a codebase's comments and docs hold such words: measured, a
#: general question about GitOps went to the DevOps agent.
_IDENTIFIER_SHAPE = re.compile(r"[A-Za-z]\w*_\w*[A-Za-z0-9]")
#: Files whose text is searched for identifiers, and how much of it.
_MAX_FILE_BYTES, _MAX_TOTAL_BYTES = 512 * 1024, 64 * 1024 * 1024


def _workspace_dirs(root: Path) -> Iterator[tuple[Path, Path]]:
    """The workspace's own folders (folder, its parent), breadth first, bounded: at most
    `_MAX_DIRS` read, `_PACKAGE_DEPTH` deep."""
    queue, seen = [(root, 0)], 0
    while queue and seen < _MAX_DIRS:
        folder, depth = queue.pop(0)
        seen += 1
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir())
        except OSError:
            continue
        for child in children:
            name = child.name
            if name.startswith(".") or name in FOREIGN_DIRS or name.endswith(".egg-info"):
                continue
            yield child, folder
            if depth + 1 < _PACKAGE_DEPTH:
                queue.append((child, depth + 1))


def workspace_packages(root: Path, taken: Collection[str] = ()) -> tuple[str, ...]:
    """The workspace's top-level Python packages: the DevOps agent's own vocabulary.

    A question naming one ("how does <package> check its input?") is about this codebase even
    without a word like "code". Generic names and words of other domains (`taken`) are left
    out; the walk is bounded, so a workspace at a home directory costs milliseconds.
    """
    names = {child.name.lower() for child, parent in _workspace_dirs(root)
             if (child / "__init__.py").is_file() and child.name.isidentifier()
             and not (parent / "__init__.py").is_file()}  # top-level packages only
    taken = {w.lower() for w in taken}
    # Domain words are matched singular or plural (`routing`): a package "apps" is "app".
    return tuple(sorted(n for n in names if n not in _GENERIC_PACKAGES and n not in taken
                        and n.removesuffix("s") not in taken and len(n) > 2))


def workspace_folders(root: Path) -> dict[str, str]:
    """The workspace's folders by name (lower case) -> the first one's relative path; generic
    names ("src", "tests", "config") left out: every codebase has them."""
    found: dict[str, str] = {}
    for child, _ in _workspace_dirs(root):
        name = child.name.lower()
        if name not in _GENERIC_PACKAGES and len(name) > 2:
            found.setdefault(name, child.relative_to(root).as_posix())
    return found


def folder_entries(root: Path, relative: str, limit: int = 12) -> tuple[list[str], int, bool]:
    """What `ls` shows of the workspace folder `relative`: its first `limit` entries by their
    paths from the workspace's root (folders with a `/`; hidden and dependency folders left
    out), how many there are, and whether any file in it is a program's source."""
    try:
        entries = sorted((e for e in os.scandir(root / relative) if not e.name.startswith(".")
                          and e.name not in FOREIGN_DIRS),
                         key=lambda e: (not e.is_dir(), e.name))
    except OSError:
        return [], 0, False
    code = any(language_for(e.name) in PROGRAM_LANGUAGES for e in entries if e.is_file())
    return ([f"{relative}/{e.name}" + ("/" if e.is_dir() else "") for e in entries[:limit]],
            len(entries), code)


def workspace_files(root: Path, max_files: int) -> Iterator[Path]:
    """The workspace's own files (relative), at most `max_files`, in a stable order."""
    count = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in FOREIGN_DIRS
                         and not d.endswith(".egg-info"))
        for name in sorted(files):
            if count >= max_files:
                return
            count += 1
            yield Path(folder, name).relative_to(root)


def workspace_texts(root: Path, max_files: int) -> Iterator[tuple[Path, str]]:
    """The workspace's own text files (relative path, text), within the walk's bounds: files
    over `_MAX_FILE_BYTES` and binary files are skipped, and reading stops at
    `_MAX_TOTAL_BYTES` read in all."""
    read = 0
    for relative in workspace_files(root, max_files):
        if read >= _MAX_TOTAL_BYTES:
            return
        try:
            path = root / relative
            if path.stat().st_size > _MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        read += len(data)
        if b"\0" not in data[:1024]:  # else not text
            yield relative, data.decode("utf-8", "replace")


class WorkspaceNames:
    """The files and identifiers of the workspace a question names."""

    agent = "devops"

    #: Seconds a walk of the folders serves: a turn looks names up several times (the
    #: frame, recall, the DevOps agent's first call), and a folder made meanwhile is seen by
    #: the next turn.
    FOLDERS_SECONDS = 5.0

    def __init__(self, root: Path, *, max_files: int = 5_000) -> None:
        self.root = root
        self.max_files = max_files
        self._walked: tuple[float, dict[str, str]] | None = None

    async def resolve(self, words: Sequence[Candidate]) -> list[Mention]:
        paths = [w for w in words if _PATH_SHAPE.fullmatch(w.text)]
        identifiers = [w for w in words if _IDENTIFIER_SHAPE.fullmatch(w.text)
                       and w not in paths]
        others = [w for w in words if w not in paths and w not in identifiers]
        return await asyncio.to_thread(self._look, paths, identifiers, others)

    def folders(self, words: Sequence[Candidate]) -> list[Mention]:
        """The words that name a folder of the workspace: a group of its files, named with
        an ordinary word ("helm", "migrations"), so weak evidence (`FOLDER` is a group
        kind), deciding the agent only for a question nothing else decides."""
        if not words:
            return []
        now = time.monotonic()
        if self._walked is None or now - self._walked[0] > self.FOLDERS_SECONDS:
            self._walked = (now, workspace_folders(self.root))
        folders = self._walked[1]
        return [Mention(w.text, w.start, self.agent, FOLDER, folders[w.text.lower()])
                for w in words if w.text.lower() in folders]

    def _look(self, paths: list[Candidate], identifiers: list[Candidate],
              others: list[Candidate]) -> list[Mention]:
        found = self.folders(others)
        wanted = {w.text: w for w in identifiers}
        for relative in workspace_files(self.root, self.max_files):
            text = relative.as_posix()
            for word in paths:
                if text == word.text.strip("/") or text.endswith("/" + word.text.strip("/")) \
                        or relative.name == word.text:
                    found.append(Mention(word.text, word.start, self.agent,
                                         "a file of the workspace", text))
            paths = [w for w in paths if w.text not in {m.text for m in found}]
            if not paths:
                break
        if wanted:
            for _, content in workspace_texts(self.root, self.max_files):
                for name in [n for n in wanted if n in content]:
                    word = wanted.pop(name)
                    found.append(Mention(word.text, word.start, self.agent,
                                         "an identifier in the workspace's code", name))
                if not wanted:
                    break
        return sorted(found, key=lambda m: m.start)
