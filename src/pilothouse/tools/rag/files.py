"""Which files of a directory tree are worth indexing, and their text.

`.gitignore` files (at every level, plus `.git/info/exclude`) are honoured with `pathspec`, the
same matcher git-aware tools use, so a directory that is not a git checkout (an unpacked release,
a CI workspace) is filtered the same way. Dependency, cache and VCS directories are pruned
before descending, which is what keeps a walk of a JavaScript project from visiting
`node_modules`' hundreds of thousands of files.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

#: Never descended into, ignored or not: VCS data, virtualenvs, caches, dependency trees.
PRUNED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
        ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", ".idea", ".vscode",
        ".eggs", ".terraform", ".gradle", "target", ".next", ".cache",
    }
)
#: Generated or data files that are text but drown real code in search results.
NOISE_NAMES = frozenset(
    {
        "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "uv.lock",
        "Cargo.lock", "go.sum", "composer.lock", "Gemfile.lock", "Pipfile.lock",
    }
)
NOISE_SUFFIXES = (
    ".min.js", ".min.css", ".map", ".svg", ".lock", ".csv", ".tsv", ".log", ".ipynb",
    ".pyc", ".pyo", ".so", ".dll", ".dylib", ".exe", ".o", ".a", ".class", ".jar", ".whl",
    ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".tar", ".png", ".jpg", ".jpeg", ".gif",
    ".ico", ".webp", ".pdf", ".onnx", ".bin", ".gguf", ".safetensors", ".pt", ".sqlite",
    ".db", ".woff", ".woff2", ".ttf", ".eot", ".mp3", ".mp4", ".wav",
)
#: Files above this size are data dumps or generated code, not something to read in chunks.
MAX_FILE_BYTES = 512 * 1024
_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class SourceFile:
    """A file to index: `rel` is its POSIX path relative to the root."""

    rel: str
    path: Path


class _IgnoreRules:
    """The .gitignore files seen on the way down, each applied relative to its directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.specs: dict[str, pathspec.GitIgnoreSpec] = {}
        exclude = root / ".git" / "info" / "exclude"
        if exclude.is_file():
            self._add("", exclude)

    def _add(self, rel_dir: str, file: Path) -> None:
        try:
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        previous = self.specs.get(rel_dir)
        self.specs[rel_dir] = spec if previous is None else previous + spec

    def enter(self, rel_dir: str, directory: Path) -> None:
        """Pick up `directory`'s own .gitignore before its entries are tested."""
        gitignore = directory / ".gitignore"
        if gitignore.is_file():
            self._add(rel_dir, gitignore)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether any applicable .gitignore excludes the root-relative path `rel`."""
        candidate = rel + "/" if is_dir else rel
        for base, spec in self.specs.items():
            if base and not candidate.startswith(base + "/"):
                continue
            local = candidate[len(base) + 1 :] if base else candidate
            if spec.match_file(local):
                return True
        return False


def _noise(name: str) -> bool:
    return name in NOISE_NAMES or name.lower().endswith(NOISE_SUFFIXES)


def walk_sources(root: Path) -> Iterator[SourceFile]:
    """Candidate files under `root`, sorted, minus ignored, pruned and known-noise paths."""
    rules = _IgnoreRules(root)
    for current, dirs, files in os.walk(root):
        here = Path(current)
        rel_dir = here.relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        rules.enter(rel_dir, here)
        kept = []
        for d in sorted(dirs):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d not in PRUNED_DIRS and not rules.ignored(rel, is_dir=True):
                kept.append(d)
        dirs[:] = kept  # os.walk descends only into what is left here
        for name in sorted(files):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            path = here / name
            if _noise(name) or rules.ignored(rel, is_dir=False):
                continue
            # A symlink may point anywhere on the machine; index only what lives in the root.
            if path.is_symlink() and not path.resolve().is_relative_to(root):
                continue
            yield SourceFile(rel, path)


def read_source(path: Path, max_bytes: int = MAX_FILE_BYTES) -> tuple[str, str] | None:
    """(text, sha256) of a UTF-8 text file, or None for binary, oversized or unreadable ones."""
    try:
        if not path.is_file() or path.stat().st_size > max_bytes:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:_SNIFF_BYTES]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text, hashlib.sha256(data).hexdigest()
