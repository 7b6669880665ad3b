"""Which arguments of a command name files it reads, and which name files it writes.

The answer feeds the workspace jail in `paths.py`. When unsure, an argument counts as a path:
a harmless word resolves inside the workspace and costs nothing, while a path we failed to
see could be `~/.ssh/id_rsa`. Commands that modify their arguments count them all as writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pilothouse.tools.shell.paths import path_candidates

#: Arguments are text, never files.
NO_PATH_ARGS = frozenset({
    "echo", "printf", "tr", "seq", "true", "false", "test", "[", "basename", "dirname", "id",
    "whoami", "uname", "which", "pwd", "date", "sleep", "kill", "cd",
})
#: Every path-like argument may be modified.
WRITE_ALL = frozenset({
    "rm", "rmdir", "unlink", "shred", "touch", "mkdir", "cp", "mv", "ln", "install", "chmod",
    "chown", "chgrp", "truncate", "tee", "rsync", "tar", "patch", "split", "csplit",
})
#: The first positional argument is a program or pattern, unless one of these options gives it.
PROGRAM_FIRST: dict[str, frozenset[str]] = {
    "grep": frozenset({"-e", "-f", "--regexp", "--file"}),
    "egrep": frozenset({"-e", "-f", "--regexp", "--file"}),
    "fgrep": frozenset({"-e", "-f", "--regexp", "--file"}),
    "sed": frozenset({"-e", "-f", "--expression", "--file"}),
    "awk": frozenset({"-f", "--file"}),
    "jq": frozenset({"-f", "--from-file"}),
    "yq": frozenset({"-f", "--from-file"}),
}
#: Options whose next argument is a value that is not a file name.
TEXT_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "head": frozenset({"-n", "-c"}),
    "tail": frozenset({"-n", "-c"}),
    "cut": frozenset({"-d", "-f", "-c", "-b"}),
    "sort": frozenset({"-k", "-t", "-S"}),
    # Globs matched against base names, not paths (`--exclude=.env` opens nothing).
    "grep": frozenset({"-e", "-m", "-A", "-B", "-C", "--regexp", "--include", "--exclude",
                       "--exclude-dir"}),
    "sed": frozenset({"-e", "-l", "--expression"}),
    "awk": frozenset({"-F", "-v"}),
    "jq": frozenset({"--indent"}),
    "uniq": frozenset({"-f", "-s", "-w"}),
    "diff": frozenset({"-U", "-x", "--exclude"}),
    "ls": frozenset({"-I", "-w"}),
    "find": frozenset(
        [
            "-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-type", "-xtype",
            "-maxdepth", "-mindepth", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime",
            "-cmin", "-user", "-group", "-perm", "-printf", "-fstype", "-links", "-inum", "-uid",
            "-gid", "-wholename", "-iwholename", "-lname", "-ilname",
        ]
    ),
    "kubectl": frozenset({"-n", "--namespace", "--context", "-l", "--selector", "-o", "-c"}),
    "git": frozenset({"-n", "-m", "--format", "--pretty", "--author", "--grep", "--since"}),
}
TEXT_VALUE_OPTIONS["egrep"] = TEXT_VALUE_OPTIONS["fgrep"] = TEXT_VALUE_OPTIONS["grep"]
#: Options (separate or `--opt=value`) whose value is a file the command writes.
WRITE_OPTIONS: dict[str, frozenset[str]] = {
    "sort": frozenset({"-o", "--output"}),
    "curl": frozenset({"-o", "--output", "-c", "--cookie-jar", "--trace", "--trace-ascii"}),
    "wget": frozenset(
        {"-O", "--output-document", "-o", "--output-file", "-P", "--directory-prefix"}
    ),
    "git": frozenset({"--output"}),
    "find": frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"}),
}
IN_PLACE = {"sed": ("-i", "--in-place"), "yq": ("-i", "--inplace"), "perl": ("-i",)}


@dataclass(frozen=True)
class PathRoles:
    """Arguments (or option values) a command reads and writes."""

    reads: tuple[str, ...]
    writes: tuple[str, ...]


def is_in_place(name: str, args: Sequence[str]) -> bool:
    """Whether `name args` edits its file arguments in place (`sed -i`, `yq -i`)."""
    flags = IN_PLACE.get(name)
    if not flags:
        return False
    for arg in args:
        if arg == "--":
            break
        if any(arg == f or arg.startswith(f + "=") for f in flags if f.startswith("--")):
            return True
        if arg.startswith("-") and not arg.startswith("--") and "i" in arg[1:]:
            short = arg[1:]
            # `-ie` is in-place with suffix "e"; `-ni` too; but in `-e...` the rest is a script.
            if short.index("i") < min((short.find(c) for c in "ef" if c in short), default=99):
                return True
    return False


def path_roles(name: str, args: Sequence[str]) -> PathRoles:
    """Classify the file-naming arguments of `name args`."""
    if name in NO_PATH_ARGS:
        return PathRoles((), ())
    reads: list[str] = []
    writes: list[str] = []
    write_all = name in WRITE_ALL or is_in_place(name, args)
    text_options = TEXT_VALUE_OPTIONS.get(name, frozenset())
    write_options = WRITE_OPTIONS.get(name, frozenset())
    program_options = PROGRAM_FIRST.get(name)
    program_pending = program_options is not None and not any(
        a in program_options or a.split("=", 1)[0] in program_options for a in args
    )
    positional = 0
    skip_next: str | None = None
    only_options = False
    for arg in args:
        if skip_next is not None:
            if skip_next == "write":
                writes.append(arg)
            skip_next = None
            continue
        if not only_options and arg.startswith("-") and arg != "-":
            if arg == "--":
                only_options = True
                continue
            option, _, value = arg.partition("=")
            if option in write_options:
                if value:
                    writes.append(value)
                else:
                    skip_next = "write"
                continue
            if option in text_options:
                skip_next = None if value else "text"
                continue
            if name == "sort" and arg.startswith("-o") and len(arg) > 2:
                writes.append(arg[2:])
                continue
            (writes if write_all else reads).extend(path_candidates(arg))
            continue
        if program_pending:
            program_pending = False
            continue
        if name == "git" and arg.startswith(":"):
            continue  # an object (`:path`) or pathspec magic, read from git: `git_secrets`
        positional += 1
        target = writes if write_all or (name == "uniq" and positional == 2) else reads
        if name == "dd":
            key = arg.split("=", 1)[0]
            target = writes if key == "of" else reads
        target.extend(path_candidates(arg))
    return PathRoles(tuple(reads), tuple(writes))
