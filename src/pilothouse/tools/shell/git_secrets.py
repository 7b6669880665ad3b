"""A git command reads git's own copies of files: a committed secret is read as `cat` reads it.

`cat .env` is refused (`paths.Workspace.verdict`: secrets are never read), and so is a
recursive grep that would open one (`secret_trees`). But git keeps every version of every
file it tracks, whatever the working tree holds now, and prints them: `git show HEAD:.env`,
`git cat-file -p <blob>`, the matching lines of `git grep`, a patch of `git log -p`, `git
show` or `git diff`. So the files git tracks now (its index) or tracked once (its history)
whose names are secret names are listed from git itself, names and blob ids only
(`TrackedSecrets`), and a git command that would print one is refused like `cat`:

- an object named by a secret's path (`HEAD:.env`, `:.env`, `v1:config/id_rsa`) or by a blob
  id a secret had;
- a command whose output depends on file contents (grep, a patch, a pickaxe search) over
  pathspecs that cover a secret: refused with its repair, the same command with each
  secret excluded by a pathspec (`':(top,exclude).env'`), which the service checks again and
  runs;
- a read of object names from the input (`cat-file --batch`), and a grep of files git does
  not track (`--untracked`, `--no-index`): `grep -r` is judged by the tree walk that finds
  secrets, so that is what to use.

Git runs here with none of the repository's programs (no pager, hooks, fsmonitor, signature
check, diff driver or text conversion: the listing prints no patch) and a time bound; names git
cannot list in time ask a person, as a tree too large to walk does.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import posixpath
import shlex
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pilothouse.tools.shell.findings import Finding

#: Seconds the listing may take (every ref's history is read once per repository state).
LIST_SECONDS = 10.0
#: Secret paths a repair excludes one by one; past this many the refusal only says so.
MAX_EXCLUDED = 12
#: Git with the repository's programs switched off, and no user or system configuration.
_GIT = ("git", "--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
        "-c", "log.showSignature=false", "-c", "core.untrackedCache=false")
#: Subcommands whose output can depend on the contents of files, and how.
_PATCH_BY_DEFAULT = frozenset({"show", "diff"})
_PATCH_WHEN_ASKED = frozenset({"log", "reflog", "whatchanged"})
#: Options that print a patch (or search contents) in log, show and diff.
_PATCH_OPTIONS = ("-p", "-u", "--patch", "-U", "--unified", "--cc", "--word-diff",
                  "--patch-with-stat", "--patch-with-raw", "-S", "-G", "--pickaxe-regex", "-L")
#: Options that make show or diff print names or counts instead of a patch.
_NAMES_ONLY = ("-s", "--no-patch", "--stat", "--numstat", "--shortstat", "--name-only",
               "--name-status", "--summary", "--dirstat", "--raw", "--quiet")
#: Values of grep options that are separate arguments (so not the pattern or a path).
_GREP_VALUED = frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "--max-count", "--threads",
                          "--max-depth", "--context", "--after-context", "--before-context"})


@dataclass(frozen=True)
class TrackedSecrets:
    """The secret-named files git tracks now or tracked once, by repository-relative path."""

    top: Path | None = None
    #: Repository-relative paths (posix).
    paths: tuple[str, ...] = ()
    #: Every blob id those paths had.
    blobs: frozenset[str] = field(default_factory=frozenset)
    #: The listing did not finish in time: nothing is known.
    too_large: bool = False


def _git(cwd: Path, *args: str, timeout: float) -> str | None:
    """Git's output, or None when it failed (not a repository, no git)."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nonexistent", "LC_ALL": "C",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run([*_GIT, *args], cwd=cwd, env=env, capture_output=True,
                              timeout=timeout, check=False, stdin=subprocess.DEVNULL)
    except (OSError, ValueError):
        return None
    return done.stdout.decode("utf-8", "surrogateescape") if done.returncode == 0 else None


def git_state(cwd: Path) -> tuple[str, ...] | None:
    """What a listing depends on: the repository's top folder (first), its index and where
    every ref points (a commit anywhere changes it). Empty outside a repository; None when
    git did not answer in time."""
    try:
        paths = _git(cwd, "rev-parse", "--show-toplevel", "--git-path", "index",
                     timeout=LIST_SECONDS)
        if paths is None:
            return ()
        top, _, index = paths.strip().partition("\n")
        refs = _git(cwd, "show-ref", "--head", timeout=LIST_SECONDS) or ""
    except subprocess.TimeoutExpired:
        return None
    try:
        stat = (cwd / index).stat()
        indexed = f"{stat.st_mtime_ns}:{stat.st_size}"
    except OSError:
        indexed = ""
    return top, indexed, refs


def secret_pathspecs(patterns: Sequence[str]) -> list[str]:
    """Git pathspecs for the secret-file patterns that can name a file in a repository, so
    git lists only those (its output stays small however large the history): a name
    pattern anywhere in the tree, `*/x` as `**/x`, a folder's `/*` as everything under it.
    Absolute and home patterns (`/etc/shadow`, `~/.ssh/*`) name nothing in a repository."""
    specs = []
    for pattern in patterns:
        if pattern.startswith(("/", "~")):
            continue
        body = pattern.removeprefix("*/")
        body = body[:-2] + "/**" if body.endswith("/*") else body
        specs.append(f":(glob,icase)**/{body}")
    return specs


def list_tracked_secrets(top: Path, patterns: Sequence[str], is_secret: Callable[[str], bool],
                         timeout: float = LIST_SECONDS) -> TrackedSecrets:
    """The secrets git tracks for the repository whose top folder is `top` (`git_state`):
    the files matching `patterns` that git lists, each checked again by `is_secret`."""
    specs = ["--", *secret_pathspecs(patterns)]
    if len(specs) == 1:
        return TrackedSecrets()
    try:
        index = _git(top, "ls-files", "--stage", "-z", *specs, timeout=timeout) or ""
        history = _git(top, "log", "--all", "--root", "--raw", "--no-abbrev", "--no-renames",
                       "--no-ext-diff", "--no-textconv", "--format=", "-z", *specs,
                       timeout=timeout) or ""
    except subprocess.TimeoutExpired:
        return TrackedSecrets(too_large=True)
    found: dict[str, set[str]] = {}
    for entry in filter(None, index.split("\0")):  # "<mode> <blob> <stage>\t<path>"
        meta, _, path = entry.partition("\t")
        if is_secret(path):
            found.setdefault(path, set()).add(meta.split(" ")[1])
    tokens = history.split("\0")
    for record, path in itertools.pairwise(tokens):  # ":<m> <m> <old> <new> <S>", path
        if record.startswith(":") and is_secret(path):
            found.setdefault(path, set()).update(record[1:].split(" ")[2:4])
    blobs = frozenset(b for ids in found.values() for b in ids if b.strip("0"))
    return TrackedSecrets(top, tuple(sorted(found)), blobs)


def _options(args: Sequence[str]) -> list[str]:
    """The options before `--`, short clusters split (`-pS` is `-p`, `-S`)."""
    found: list[str] = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            found.append(arg.partition("=")[0])
        elif arg.startswith("-") and len(arg) > 1 and arg[1].isalpha():
            found.append(arg[:2])
            found += [f"-{c}" for c in arg[2:] if c.isalpha()] if arg[2:].isalpha() else []
    return found


def _reads_contents(sub: str, options: Sequence[str]) -> bool:
    if sub == "grep":
        return True  # even a list of matching files says what the files hold
    patch = any(o.startswith(_PATCH_OPTIONS) for o in options)
    if sub in _PATCH_WHEN_ASKED:
        return patch
    return sub in _PATCH_BY_DEFAULT and (patch or not any(o in _NAMES_ONLY for o in options))


def _object_path(arg: str) -> str | None:
    """The path of an object named `REV:PATH`, `:PATH` or `:N:PATH` (None: no such form;
    `:(exclude)x`, `:!x` and `:/text` are pathspec magic and commit searches)."""
    if arg.startswith("-") or ":" not in arg:
        return None
    rev, _, path = arg.partition(":")
    if not rev:
        if path[:1] in ("(", "!", "^", "/", ""):
            return None
        if len(path) > 1 and path[0] in "0123" and path[1] == ":":
            path = path[2:]
    return path or None


@dataclass(frozen=True)
class _Scope:
    """The pathspecs of a command, repository-relative."""

    included: tuple[str, ...]
    excluded: tuple[str, ...]
    #: Whether `--` was given (a repair then only appends).
    separated: bool
    #: Whether a path was given without `--` (a repair cannot append `--` after it).
    bare_paths: bool

    def covers(self, secret: str) -> bool:
        def under(spec: str) -> bool:
            spec = spec.rstrip("/")
            return spec in ("", ".") or secret == spec or secret.startswith(spec + "/") \
                or fnmatch.fnmatchcase(secret, spec)
        return (not self.included or any(under(s) for s in self.included)) \
            and not any(under(s) for s in self.excluded)


def _pathspec(spec: str, here: str) -> tuple[str | None, bool]:
    """(repository-relative pattern, excluded) of one pathspec run in the folder `here`;
    None: it covers everything, as far as can be told here."""
    top = excluded = False
    if spec.startswith(":(") and ")" in spec:
        magic, _, spec = spec[2:].partition(")")
        words = set(magic.split(","))
        excluded, top = "exclude" in words, "top" in words
        if words - {"exclude", "top", "literal"}:  # glob, icase, attr: taken as covering all
            return None, excluded
    elif spec[:2] in (":!", ":^"):
        excluded, spec = True, spec[2:]
    elif spec.startswith(":/"):
        top, spec = True, spec[2:]
    joined = posixpath.normpath(posixpath.join("" if top else here, spec))
    return ("" if joined == "." else joined), excluded


def _scope(sub: str, args: Sequence[str], cwd: Path, top: Path) -> _Scope:
    try:
        here = cwd.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        here = ""
    here = "" if here == "." else here
    if "--" in args:
        specs, separated, bare = list(args[args.index("--") + 1:]), True, False
    else:
        positional = _positionals(sub, args)
        specs = [a for a in positional if (cwd / a).exists()
                 or (a.startswith(":") and _object_path(a) is None)]
        separated, bare = False, bool(specs)
    included: list[str] = []
    excluded: list[str] = []
    for spec in specs:
        pattern, is_excluded = _pathspec(spec, here)
        if pattern is None and not is_excluded:
            return _Scope((), (), separated, bare)
        if pattern is not None:
            (excluded if is_excluded else included).append(pattern)
    if sub == "grep" and not included and here:
        included.append(here)  # grep searches the folder it runs in
    return _Scope(tuple(included), tuple(excluded), separated, bare)


def _positionals(sub: str, args: Sequence[str]) -> list[str]:
    """The arguments that are revisions or paths (grep's pattern left out)."""
    found: list[str] = []
    skip = False
    pattern_given = any(a in ("-e", "-f") or a.startswith(("--regexp", "--file")) for a in args)
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = sub == "grep" and arg in _GREP_VALUED
        else:
            found.append(arg)
    return found[1:] if sub == "grep" and not pattern_given else found


def git_secret_findings(sub: str, args: Sequence[str], cwd: Path,
                        tracked: Callable[[], TrackedSecrets],
                        is_secret: Callable[[str], bool]) -> list[Finding]:
    """Refusals of `git SUB ARGS` run in `cwd` printing a secret git tracks."""
    options = _options(args)
    if sub == "cat-file" and any(o.startswith("--batch") and o != "--batch-check"
                                 for o in options):
        return [Finding("deny", "git cat-file --batch prints objects named on its input, "
                        "which cannot be checked for secrets",
                        "Name the object: git cat-file -p <rev>:<path>.")]
    untracked = [o for o in options if o in ("--untracked", "--no-index")]
    if sub == "grep" and untracked:
        return [Finding("deny", f"git grep {untracked[0]} reads files git does not track, "
                        "which are not checked for secrets here",
                        "Use grep -rn PATTERN PATH: it leaves secret files out.")]
    named = [p for a in args if (p := _object_path(a)) and is_secret(p)]
    named += [v.rpartition(":")[2] for a in args if a.startswith("-L")
              for v in [a[2:]] if is_secret(v.rpartition(":")[2])]
    if named:
        return [Finding("deny", f"git {sub} would read {named[0]}, which holds secrets",
                        "Secrets are never read or written by the agent; ask the user for "
                        "the non-secret value you need.")]
    objects = [a for a in args if not a.startswith("-") and len(a) >= 7
               and all(c in "0123456789abcdef" for c in a.lower())]
    if not objects and not (sub in ("grep", *_PATCH_BY_DEFAULT, *_PATCH_WHEN_ASKED)
                            and _reads_contents(sub, options)):
        return []
    listing = tracked()
    if listing.too_large:
        return [Finding("ask", f"git {sub} reads what git tracks, a history too large to "
                        "check for secret files in time", "Ask the user to approve.")]
    if any(b.startswith(o.lower()) for o in objects for b in listing.blobs):
        return [Finding("deny", f"git {sub} would print a version of a file that holds "
                        "secrets", "Secrets are never read or written by the agent.")]
    revisions = [a for a in args if not a.startswith("-")]
    if revisions and all(_object_path(a) for a in revisions):
        return []  # `show HEAD:path`, `diff A:path B:path`: those objects alone, checked above
    if listing.top is None or not listing.paths or not _reads_contents(sub, options):
        return []
    scope = _scope(sub, args, cwd, listing.top)
    covered = [p for p in listing.paths if scope.covers(p)]
    if not covered:
        return []
    shown = ", ".join(covered[:5]) + (f" and {len(covered) - 5} more" if len(covered) > 5
                                      else "")
    reason = (f"git {sub} would read {shown}, which git tracks and which "
              f"hold{'s' if len(covered) == 1 else ''} secrets")
    excludes = tuple(f":(top,exclude){p}" for p in covered)
    if len(covered) > MAX_EXCLUDED or scope.bare_paths:
        return [Finding("deny", reason, "Leave the secrets out with pathspecs after --: "
                        f"git {sub} ... -- <paths> {shlex.join(excludes[:3])}")]
    repair = excludes if scope.separated else ("--", *excludes)
    return [Finding("deny", reason, f"Exclude them: git {sub} ... {shlex.join(repair)}",
                    repair=repair, repair_at_end=True)]
