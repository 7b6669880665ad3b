"""Which files of a directory tree are worth indexing, and their text.

`.gitignore` files (at every level, plus `.git/info/exclude`) are honoured with `pathspec`, the
same matcher git-aware tools use, so a directory that is not a git checkout (an unpacked release,
a CI workspace) is filtered the same way. Dependency, cache and VCS directories are pruned
before descending, which is what keeps a walk of a JavaScript project from visiting
`node_modules`' hundreds of thousands of files.

What is left out is tallied by reason (`SkipTally`), so `pilothouse index` can say why a folder
gave fewer files than expected, and which .gitignore ignored them.

`survey` says whether a folder may be indexed without anyone asking for it: only a code
repository (a version-control checkout, or a folder holding a build tool's project file), never
the home directory or the filesystem root, and only up to a number of files. What a person
happens to stand in when they ask a first question must not cost minutes of CPU.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from pilothouse.tools.workspace_dirs import PRUNED_DIRS

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
#: Folders of version-control systems: their presence at a folder or above makes it a checkout.
VCS_DIRS = (".git", ".hg", ".svn")
#: The project file of a build tool or package manager: a folder holding one is a project.
PROJECT_FILES = frozenset(
    {
        "pyproject.toml", "setup.py", "setup.cfg", "package.json", "go.mod", "Cargo.toml",
        "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "Gemfile",
        "composer.json", "CMakeLists.txt", "meson.build", "mix.exs", "Package.swift",
        "build.sbt", "stack.yaml", "deno.json", "Chart.yaml", "kustomization.yaml",
        "main.tf", "Makefile",
    }
)
#: Index runs nobody asked for cover at most this many files (PILOTHOUSE_INDEX_MAX_FILES).
DEFAULT_MAX_FILES = 5000
_SNIFF_BYTES = 8192


# Why a file or folder was left out (the keys of a SkipTally, beside "ignored by <file>").
EXCLUDED = "excluded by a pattern passed to the indexer"
DEPENDENCY_DIR = "dependency, cache or tool folder (node_modules, .venv, ...)"
UNSUPPORTED = "unsupported type (lock, minified, media, archive, data)"
TOO_LARGE = f"too large (over {MAX_FILE_BYTES // 1024} KiB)"
BINARY = "binary"
NOT_TEXT = "not UTF-8 text"
UNREADABLE = "unreadable"
OUTSIDE = "symlink to outside the folder"
EMPTY = "empty"


def ignored_by(gitignore: Path) -> str:
    return f"ignored by {gitignore}"


@dataclass
class SkipTally:
    """Files and folders left out of an index, counted by reason, with a few examples each."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    #: The .gitignore that ignores the root itself (every file under it), if one does.
    root_ignored_by: Path | None = None
    keep_examples: int = 3

    def add(self, reason: str, rel: str) -> None:
        self.counts[reason] += 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < self.keep_examples:
            shown.append(rel)


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
        # (scope, prefix, spec, source): applies under the root-relative folder `scope` ('' =
        # all) and sees `prefix` + the path inside that scope; `source` is the file it came
        # from (None for the indexer's own patterns).
        self.rules: list[tuple[str, str, pathspec.GitIgnoreSpec, Path | None]] = []
        if extra:
            self.rules.append(("", "", pathspec.GitIgnoreSpec.from_lines(list(extra)), None))
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
        self.rules.append((scope, prefix, pathspec.GitIgnoreSpec.from_lines(lines), file))

    def enter(self, rel_dir: str, directory: Path) -> None:
        """Pick up `directory`'s own .gitignore before its entries are tested."""
        self._add(rel_dir, "", directory / ".gitignore")

    def ignored(self, rel: str, is_dir: bool) -> str | None:
        """Why the root-relative path `rel` is excluded (a SkipTally reason), or None."""
        candidate = rel + "/" if is_dir else rel
        for scope, prefix, spec, source in self.rules:
            if scope and not candidate.startswith(scope + "/"):
                continue
            local = candidate[len(scope) + 1 :] if scope else candidate
            if spec.match_file(prefix + local):
                return EXCLUDED if source is None else ignored_by(source)
        return None

    def root_ignored_by(self) -> Path | None:
        """The .gitignore above the root that ignores the root folder itself, if any."""
        for scope, prefix, spec, source in self.rules:
            if not scope and prefix and source is not None and spec.match_file(prefix):
                return source
        return None


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


def walk_sources(root: Path, exclude: Sequence[str] = (),
                 tally: SkipTally | None = None) -> Iterator[SourceFile]:
    """Candidate files under `root`, sorted, minus ignored, pruned and known-noise paths.

    `exclude` adds gitignore-style patterns, relative to `root`, to those the tree declares.
    What is left out is counted in `tally` (an ignored or pruned folder counts once).
    """
    tally = tally if tally is not None else SkipTally()
    rules = _IgnoreRules(root, exclude)
    tally.root_ignored_by = rules.root_ignored_by()
    for current, dirs, files in os.walk(root):
        here = Path(current)
        rel_dir = here.relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        rules.enter(rel_dir, here)
        kept = []
        for d in sorted(dirs):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d in PRUNED_DIRS:
                if d != ".git":  # always there, never code: not worth a line
                    tally.add(DEPENDENCY_DIR, rel + "/")
            elif reason := rules.ignored(rel, is_dir=True):
                tally.add(reason, rel + "/")
            else:
                kept.append(d)
        dirs[:] = kept  # os.walk descends only into what is left here
        for name in sorted(files):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            path = here / name
            if reason := rules.ignored(rel, is_dir=False):
                tally.add(reason, rel)
            elif _noise(name):
                tally.add(UNSUPPORTED, rel)
            # A symlink may point anywhere on the machine; index only what lives in the root.
            elif path.is_symlink() and not path.resolve().is_relative_to(root):
                tally.add(OUTSIDE, rel)
            else:
                yield SourceFile(rel, path)


def read_source(path: Path, max_bytes: int = MAX_FILE_BYTES) -> tuple[str, str] | None:
    """(text, sha256) of a UTF-8 text file, or None for binary, oversized or unreadable ones."""
    read = read_source_or_reason(path, max_bytes)
    return None if isinstance(read, str) else read


def read_source_or_reason(path: Path, max_bytes: int = MAX_FILE_BYTES) -> tuple[str, str] | str:
    """(text, sha256) of a UTF-8 text file, or why it cannot be indexed (a SkipTally reason)."""
    try:
        if not path.is_file():
            return UNREADABLE
        if path.stat().st_size > max_bytes:
            return TOO_LARGE if max_bytes == MAX_FILE_BYTES else \
                f"too large (over {max_bytes // 1024} KiB)"
        data = path.read_bytes()
    except OSError:
        return UNREADABLE
    if b"\0" in data[:_SNIFF_BYTES]:
        return BINARY
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return NOT_TEXT
    return text, hashlib.sha256(data).hexdigest()


def _never_a_repository(folder: Path) -> bool:
    """The home directory and the filesystem root: whatever they hold (a dotfiles checkout
    at ~), everything on the machine lies under them."""
    return folder == Path(folder.anchor) or folder == Path.home().resolve()


def repository_of(folder: Path) -> Path | None:
    """The code repository `folder` belongs to, or None.

    A repository is a version-control checkout (`folder` or a folder above it holds .git,
    .hg or .svn) or a folder holding a build tool's project file (`PROJECT_FILES`). The
    search upwards stops below the home directory and the filesystem root, which never
    count, so a folder under a home kept in git is not "code" because of it.
    """
    folder = folder.resolve()
    if _never_a_repository(folder):
        return None
    if any((folder / name).is_file() for name in PROJECT_FILES):
        return folder
    for candidate in (folder, *folder.parents):
        if _never_a_repository(candidate):
            return None
        if any((candidate / name).exists() for name in VCS_DIRS):
            return candidate
    return None


def count_sources(root: Path, limit: int) -> int:
    """How many files `walk_sources` yields under `root`, counting no further than `limit`+1.

    Bounded by the cap, not by the folder: a tree of a million files costs as much as `limit`.
    """
    count = 0
    for _ in walk_sources(root):
        count += 1
        if count > limit:
            break
    return count


@dataclass(frozen=True)
class Survey:
    """Whether `root` may be indexed without anyone asking: a repository within the cap."""

    root: Path
    repository: Path | None
    #: Files to index, counted up to `max_files` + 1 (more means over the cap).
    files: int
    max_files: int

    @property
    def indexable(self) -> bool:
        return self.repository is not None and self.files <= self.max_files

    def reason(self) -> str:
        """Why `root` is not indexed on its own ("" when it is)."""
        if self.repository is None:
            return (f"{self.root} is not a code repository (no .git, .hg or .svn at or above "
                    "it, no project file such as pyproject.toml, package.json or go.mod), so "
                    "it is not indexed on its own")
        if self.files > self.max_files:
            return (f"{self.root} has more than {self.max_files:,} files to index "
                    "(PILOTHOUSE_INDEX_MAX_FILES), so it is not indexed on its own")
        return ""


def survey(root: Path, max_files: int = DEFAULT_MAX_FILES) -> Survey:
    """Whether `root` is a code repository, and how many files it would index (bounded)."""
    root = root.resolve()
    repository = repository_of(root)
    files = count_sources(root, max_files) if repository is not None else 0
    return Survey(root, repository, files, max_files)
