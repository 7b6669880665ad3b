"""A command that reads every file under a folder reads the secret files in it too.

`cat .env` is refused (`paths.Workspace.verdict`: secrets are never read), but `grep -rn
password .` opened `.env`, `.netrc` and a `*.pem` key and printed what matched, with no
approval: the output redactor catches assignment-shaped values, not a `.netrc` password or
the lines of a private key (measured). The path check sees the folder `.`, not the files a
recursive read opens, so the tree under each start folder is walked (`tree_walk`, the walk
the symlink check shares: bounded, following links only when the command does), skipping
what the command itself skips (grep's `--include`, `--exclude` and `--exclude-dir`, diff's
`--exclude`: `Skips`). A secret file in it refuses the command, and the refusal carries the
repair: the same command with each secret excluded by name (`Finding.repair`), which the
shell service checks again and runs instead. A tree too large to walk asks a person.

Readers: `grep -r`/`-R`/`-d recurse` (and `egrep`, `fgrep`), `diff -r`, and what `find -exec`
runs (`guards._find`). `git grep` and other git commands read git's own copies of the files
it tracks, judged by `git_secrets` the same way.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pilothouse.tools.shell.arguments import path_roles
from pilothouse.tools.shell.findings import Finding, GuardContext
from pilothouse.tools.shell.tree_walk import Skips

#: Secret names a repair excludes one by one; past this many the refusal only says so.
MAX_EXCLUDED = 12
_GREPS = frozenset({"grep", "egrep", "fgrep"})
#: Short options that take a value (the rest of the cluster, or the next argument).
_VALUED = {"grep": "efmABCdD", "diff": "xXIFLSCUWD"}


@dataclass(frozen=True)
class RecursiveRead:
    """How one command reads the trees under its start folders."""

    option: str
    skips: Skips
    follows_links: bool
    #: The options that exclude a file and a folder by name (None: it has none).
    exclude_file: str | None
    exclude_dir: str | None


def _options(name: str, args: Sequence[str]) -> list[tuple[str, str]]:
    """`(option, value)` pairs before `--`: short clusters split, long `--opt=value` split."""
    valued = _VALUED.get(name, "")
    pairs: list[tuple[str, str]] = []
    i = 0
    while i < len(args) and args[i] != "--":
        arg = args[i]
        if arg.startswith("--"):
            option, equals, value = arg.partition("=")
            if not equals and option in _LONG_VALUED and i + 1 < len(args):
                value, i = args[i + 1], i + 1
            pairs.append((option, value))
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in valued:
                    value = arg[j + 1:]
                    if not value and i + 1 < len(args):
                        value, i = args[i + 1], i + 1
                    pairs.append((f"-{letter}", value))
                    break
                pairs.append((f"-{letter}", ""))
        i += 1
    return pairs


_LONG_VALUED = frozenset({"--include", "--exclude", "--exclude-dir", "--directories",
                          "--exclude-from", "--regexp", "--file", "--max-count"})


def _spelled(given: str, option: str, unique_from: int) -> bool:
    """Whether `given` is `option` or an abbreviation getopt accepts for it (its first
    `unique_from` characters or more: `--recur` is grep's `--recursive`)."""
    return len(given) >= unique_from and option.startswith(given)


def recursive_read(name: str, args: Sequence[str]) -> RecursiveRead | None:
    """How `name args` reads every file under its folders; None when it does not."""
    options = _options(name, args)
    keys = {option for option, _ in options}
    if name in _GREPS:
        # grep reads "recurse" from `-d` by its shortest unique abbreviation too.
        recurse = {"-r", "-R"} & keys | {
            o for o in keys if _spelled(o, "--recursive", 5)
            or _spelled(o, "--dereference-recursive", 5)} | {
            f"{o} {v}" for o, v in options if (o == "-d" or _spelled(o, "--directories", 4))
            and _spelled(v, "recurse", 3)}
        if not recurse:
            return None
        skips = Skips(include=tuple(v for o, v in options if o == "--include"),
                      exclude=tuple(v for o, v in options if o == "--exclude"),
                      exclude_dirs=tuple(v for o, v in options if o == "--exclude-dir"))
        follows = "-R" in keys or any(_spelled(o, "--dereference-recursive", 5) for o in keys)
        return RecursiveRead(sorted(recurse)[0], skips, follows, "--exclude", "--exclude-dir")
    if name == "diff" and ("-r" in keys or any(_spelled(o, "--recursive", 5) for o in keys)):
        excluded = tuple(v for o, v in options if o in ("-x", "--exclude"))
        return RecursiveRead("-r", Skips(exclude=excluded, exclude_dirs=excluded),
                             "--no-dereference" not in keys, "--exclude", "--exclude")
    return None


def secret_findings(name: str, args: Sequence[str], ctx: GuardContext,
                    read: RecursiveRead | None = None) -> list[Finding]:
    """The refusal of a recursive read that would open secret files (with its repair), or a
    question for a tree too large to check. `read` defaults to how `name args` reads."""
    read = read or recursive_read(name, args)
    if read is None:
        return []
    what = f"{name} {read.option}"
    starts = [v for v in path_roles(name, args).reads if not v.startswith("-")] or ["."]
    secrets: list[Path] = []
    for start in starts:
        walk = ctx.tree(start, read.skips, read.follows_links)
        if walk.too_large:
            return [Finding("ask", f"{what} reads every file under {start}, a tree too large "
                            "to check for secret files",
                            "Search a smaller folder, or ask the user to approve.")]
        secrets.extend(walk.secrets)
    if not secrets:
        return []
    names = sorted({p.name for p in secrets})
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    reason = f"{what} would read {shown}, which hold{'s' if len(names) == 1 else ''} secrets"
    if read.exclude_file is None or len(names) > MAX_EXCLUDED:
        return [Finding("deny", reason, "Name the files to read, leaving the secrets out.")]
    folders = {p.name for p in secrets if p.is_dir()}
    repair = tuple(f"{read.exclude_dir if n in folders else read.exclude_file}={glob.escape(n)}"
                   for n in names)
    return [Finding("deny", reason, f"Exclude them: {name} {' '.join(repair)} ...",
                    repair=repair)]
