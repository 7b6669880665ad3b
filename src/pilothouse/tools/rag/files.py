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
from collections.abc import Iterator, Sequence
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
    """Every .gitignore that applies, each matched relative to the directory it sits in.

    That includes those above the root up to the repository's top, so indexing `src/` of a
    checkout skips what the checkout's own .gitignore skips, as git would.
    """

    def __init__(self, root: Path, extra: Sequence[str] = ()) -> None:
        # (scope, prefix, spec): applies under the root-relative folder `scope` ('' = all) and
        # sees `prefix` + the path inside that scope.
        self.rules: list[tuple[str, str, pathspec.GitIgnoreSpec]] = []
        if extra:
            self.rules.append(("", "", pathspec.GitIgnoreSpec.from_lines(list(extra))))
        for ancestor in _ancestors_in_repository(root):
            prefix = root.relative_to(ancestor).as_posix() + "/"
            self._add("", prefix, ancestor / ".gitignore")
            self._add("", prefix, ancestor / ".git" / "info" / "exclude")
        self._add("", "", root / ".git" / "info" / "exclude")

    def _add(self, scope: str, prefix: str, file: Path) -> None:
        try:
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:  # absent or unreadable: nothing to apply
            return
        self.rules.append((scope, prefix, pathspec.GitIgnoreSpec.from_lines(lines)))

    def enter(self, rel_dir: str, directory: Path) -> None:
        """Pick up `directory`'s own .gitignore before its entries are tested."""
        self._add(rel_dir, "", directory / ".gitignore")

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether any applicable .gitignore excludes the root-relative path `rel`."""
        candidate = rel + "/" if is_dir else rel
        for scope, prefix, spec in self.rules:
            if scope and not candidate.startswith(scope + "/"):
                continue
            local = candidate[len(scope) + 1 :] if scope else candidate
            if spec.match_file(prefix + local):
                return True
        return False


def _ancestors_in_repository(root: Path) -> list[Path]:
    """Folders above `root` up to the git checkout's top; none when `root` is not inside one."""
    chain: list[Path] = []
    if (root / ".git").exists():  # the root is the checkout's top (or a nested repository)
        return chain
    for parent in root.parents:
        chain.append(parent)
        if (parent / ".git").exists():
            return chain
    return []


def _noise(name: str) -> bool:
    return name in NOISE_NAMES or name.lower().endswith(NOISE_SUFFIXES)


def walk_sources(root: Path, exclude: Sequence[str] = ()) -> Iterator[SourceFile]:
    """Candidate files under `root`, sorted, minus ignored, pruned and known-noise paths.

    `exclude` adds gitignore-style patterns, relative to `root`, to those the tree declares.
    """
    rules = _IgnoreRules(root, exclude)
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
