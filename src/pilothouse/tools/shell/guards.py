"""Argument guards: catch code execution smuggled through otherwise allowed tools.

Rules decide by command and subcommand; guards read the arguments the way the tool itself
would (`git -c core.pager=...`, `find -exec`, `sed e`, `awk system()`, `tar --to-command`,
`xargs rm`, `bash -c '...'`). A guard can only make a decision stricter, and a policy file
cannot turn guards off. Commands that run other commands are checked recursively.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from pilothouse.tools.shell.arguments import WRITE_ALL, is_in_place
from pilothouse.tools.shell.findings import (
    NO_CODE,
    Finding,
    Guard,
    GuardContext,
    combine,
    runs,
)
from pilothouse.tools.shell.git_guard import git_guard
from pilothouse.tools.shell.links import link_finding, link_findings
from pilothouse.tools.shell.paths import NEUTRAL_PATHS
from pilothouse.tools.shell.scripts import ScriptEffects, awk_effects, sed_effects
from pilothouse.tools.shell.secret_trees import secret_findings
from pilothouse.tools.shell.tree_walk import Skips


def _find(args: Sequence[str], ctx: GuardContext) -> list[Finding]:
    found: list[Finding] = []
    starts = []
    for arg in args:
        if arg.startswith("-") or arg in ("(", "!", ","):
            break
        starts.append(arg)
    for i, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            inner = [a for a in args[i + 1 : end] if a != "{}"]
            # A match spliced into a word (`{}/../x`) names files the policy cannot see.
            spliced = any("{}" in a for a in inner)
            if arg == "-exec" and end < len(args) and not spliced:
                found.extend(_find_exec(inner, starts or ["."], args, ctx))
            else:
                found.append(runs("find " + arg, inner, ctx))
            if inner and os.path.basename(inner[0]) in WRITE_ALL:
                # The inner command modifies every match, so the start paths are write targets.
                what = f"find {arg} {inner[0]}"
                found.extend(ctx.path(s, "write", what) for s in starts or ["."])
        elif arg == "-delete":
            found.append(
                Finding("ask", "find -delete removes every match", "List with find first.")
            )
            found.extend(ctx.path(s, "write", "find -delete") for s in starts or ["."])
        elif arg in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            found.append(Finding("ask", f"find {arg} writes a file"))
    return found


def _find_exec(inner: Sequence[str], starts: Sequence[str], args: Sequence[str],
               ctx: GuardContext) -> list[Finding]:
    """`find STARTS ... -exec INNER {} +`: the inner command opens the files find matches.

    An inner command the policy allows on its own (`wc -l`, `grep -l X`) is allowed here
    when what it would open is allowed too: the start folders read as folders, no link
    under them leaving the workspace (the inner command follows links), no secret file
    among the files find passes it (its `-name` tests count when they are the only ones).
    Anything else runs another command: at least ask (`findings.runs`).
    """
    what = "find -exec " + " ".join(inner)
    verdict = ctx.check_argv(inner) if inner else None
    if verdict is None or verdict.action != "allow":
        return [runs("find -exec", inner, ctx)]
    opened = [ctx.path(s, "read", what) for s in starts]
    # `-name` narrows the files opened, not the folders entered, so the links the walk
    # judges are the ones a walk without it would meet: one walk serves both checks.
    walks = [ctx.tree(s, Skips(include=_only_names(args)), True) for s in starts]
    opened += [link_finding(what, walk) for walk in walks]
    for walk in walks:
        if walk.too_large or walk.secrets:
            shown = "files too many to check" if walk.too_large else ", ".join(
                sorted({p.name for p in walk.secrets})[:5]) + ", which hold secrets"
            opened.append(Finding("ask", f"{what} would open {shown}",
                                  "Leave the secret files out with -name, or name the files."))
    found = combine(opened)
    if found.action != "allow":
        return [found]
    return [Finding("allow", f"find -exec runs `{' '.join(inner)}`, a read-only command")]


#: find tests that narrow the files it passes on by more than their names.
_FIND_LOGIC = frozenset({"-o", "-or", "!", "-not", "(", ")", ",", "-a", "-and"})


def _only_names(args: Sequence[str]) -> tuple[str, ...]:
    """The base-name globs of `find`'s `-name` tests when they alone choose the files (no
    `-o`, `!` or parentheses that could widen them); none otherwise (every file counts)."""
    if _FIND_LOGIC & set(args):
        return ()
    return tuple(args[i + 1] for i, a in enumerate(args[:-1]) if a == "-name")


_WRAPPER_VALUES = {
    "xargs": {
        "-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter", "--max-args",
        "--max-procs", "--max-lines", "--max-chars", "--process-slot-var",
    },
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "nice": {"-n", "--adjustment"},
    "stdbuf": {"-i", "-o", "-e"},
    "ionice": {"-c", "-n", "-p", "--class", "--classdata"},
    "nohup": set(),
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
}
_ENV_CODE_VARS = re.compile(
    r"LD_.*|BASH_ENV|ENV|PATH|GIT_.*|PYTHON.*|PERL.*|NODE_OPTIONS|RUBYOPT|.*PAGER|.*EDITOR|IFS"
)


def _wrapper(name: str) -> Guard:
    def guard(args: Sequence[str], ctx: GuardContext) -> list[Finding]:
        found: list[Finding] = []
        takes_value = _WRAPPER_VALUES[name]
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] != "--":
            option = args[i].split("=", 1)[0]
            value = args[i].split("=", 1)[1] if "=" in args[i] else None
            if option in takes_value and value is None:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            if name == "env" and option in ("-S", "--split-string") and value:
                found.append(_as_script(f"env {option}", value, ctx))
            if name == "env" and option in ("-C", "--chdir") and value:
                found.append(ctx.path(value, "write", "env --chdir"))
            i += 1
        i += 1 if i < len(args) and args[i] == "--" else 0
        if name == "timeout" and i < len(args):
            i += 1  # the duration
        while name == "env" and i < len(args) and re.fullmatch(r"[A-Za-z_]\w*=.*", args[i]):
            var = args[i].split("=", 1)[0]
            if _ENV_CODE_VARS.fullmatch(var):
                found.append(Finding("deny", f"env {var}=... changes what code programs load"))
            else:
                found.append(Finding("ask", f"env sets {var} for the command"))
            i += 1
        if args[i:] or name != "env":
            found.append(runs(name, args[i:], ctx))
        return found

    return guard


def _as_script(what: str, script: str, ctx: GuardContext) -> Finding:
    verdict = ctx.check_script(script)
    if verdict.action == "deny":
        return Finding("deny", f"{what} would run {script!r}: {verdict.reason}", verdict.suggestion)
    return Finding("ask", f"{what} runs {script!r} in a new shell", "Run the commands directly.")


def _shell(name: str) -> Guard:
    def guard(args: Sequence[str], ctx: GuardContext) -> list[Finding]:
        for i, arg in enumerate(args):
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
                script = next((a for a in args[i + 1 :] if not a.startswith("-")), "")
                return [_as_script(f"{name} -c", script, ctx)]
            if not arg.startswith("-"):
                break
        return []

    return guard


_TAR_EXEC = (
    "--checkpoint-action", "--to-command", "--use-compress-program", "--info-script",
    "--new-volume-script", "--rsh-command", "--rmt-command", "--index-file",
)


def _tar(args: Sequence[str], ctx: GuardContext) -> list[Finding]:
    found: list[Finding] = []
    for index, arg in enumerate(args):
        bundled = (
            arg[1:]
            if arg.startswith("-") and not arg.startswith("--")
            else (arg if index == 0 and not arg.startswith("-") else "")
        )
        if arg.startswith(_TAR_EXEC) or "I" in bundled or "F" in bundled:
            found.append(Finding("deny", f"tar {arg.split('=')[0]} runs a program", NO_CODE))
    return found


def _effects(tool: str, effects: ScriptEffects, ctx: GuardContext) -> list[Finding]:
    found = [
        Finding("deny", f"{tool} program runs commands ({c})", "Use the tool without it.")
        for c in effects.runs_commands
    ]
    for target in effects.writes:
        found.append(ctx.path(target, "write", tool))
        if target not in NEUTRAL_PATHS:
            found.append(Finding("ask", f"{tool} program writes {target}"))
    found.extend(ctx.path(t, "read", tool) for t in effects.reads if not t.startswith("("))
    if any(t.startswith("(") for t in effects.reads):
        found.append(Finding("ask", f"{tool} program reads other input (getline)"))
    if effects.unreadable:
        found.append(Finding("ask", effects.unreadable))
    return found


def _programs(
    args: Sequence[str], script_options: set[str], plain: set[str], file_options: set[str]
) -> list[str] | None:
    """Scripts given with -e-like options, else the first positional; None when from a file."""
    scripts: list[str] = []
    first: str | None = None
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        option, _, value = arg.partition("=")
        short_cluster = arg.startswith("-") and not arg.startswith("--")
        if option in file_options or (
            short_cluster and any(f[1] in arg[1:] for f in file_options if len(f) == 2)
        ):
            return None
        if option in script_options:
            scripts.append(value if value else (args[i + 1] if i + 1 < len(args) else ""))
            skip = not value
        elif arg in plain:
            skip = True
        elif arg.startswith("-") and not arg.startswith("--") and "e" in arg[1:] and script_options:
            rest = arg[arg.index("e", 1) + 1 :]
            scripts.append(rest or (args[i + 1] if i + 1 < len(args) else ""))
            skip = not rest
        elif first is None and not arg.startswith("-"):
            first = arg
    return scripts or ([first] if first is not None else [])


def _sed(args: Sequence[str], ctx: GuardContext) -> list[Finding]:
    found: list[Finding] = []
    if is_in_place("sed", args):
        found.append(Finding("ask", "sed -i edits files in place", "Print the result instead."))
    scripts = _programs(args, {"-e", "--expression"}, {"-l"}, {"-f", "--file"})
    if scripts is None:
        return [*found, Finding("ask", "sed -f runs a script file we cannot inspect")]
    for script in scripts:
        found.extend(_effects("sed", sed_effects(script), ctx))
    return found


def _awk(args: Sequence[str], ctx: GuardContext) -> list[Finding]:
    programs = _programs(
        args,
        set(),
        {"-F", "-v"},
        {"-f", "--file", "-E", "--exec", "-l", "--load", "-i", "--include"},
    )
    if programs is None:
        return [Finding("ask", "awk -f/--load runs a program file we cannot inspect")]
    return [f for p in programs for f in _effects("awk", awk_effects(p), ctx)]


_QUERY_PAIRS = {"--arg", "--argjson", "--slurpfile", "--rawfile", "--args", "--jsonargs"}
_QUERY_LOAD_PATH = re.compile(r'\bload\w*\s*\(\s*"([^"]+)"')
_QUERY_LOADS = re.compile(r"\b(load(_str|_xml|_props|_base64)?|import|include)\b")


def _query(tool: str) -> Guard:
    """jq / yq: in-place edits, and programs that load other files (yq load(), jq import)."""

    def guard(args: Sequence[str], ctx: GuardContext) -> list[Finding]:
        found = []
        if is_in_place(tool, args):
            found.append(Finding("ask", f"{tool} -i edits files in place", "Print instead."))
        plain: list[str] = []
        skip = 0
        for arg in args:  # `--arg NAME VALUE` and friends take two values
            if skip:
                skip -= 1
            elif arg in _QUERY_PAIRS:
                skip = 2
            else:
                plain.append(arg)
        programs = _programs(plain, set(), {"--indent", "--tab"}, {"-f", "--from-file", "-L"})
        if programs is None:
            return [*found, Finding("ask", f"{tool} reads its program from a file")]
        for program in programs:
            if match := _QUERY_LOADS.search(program):
                found.append(Finding("ask", f"{tool} program loads other files ({match.group()})"))
            found.extend(ctx.path(p, "read", tool) for p in _QUERY_LOAD_PATH.findall(program))
        return found

    return guard


def _sort(args: Sequence[str], ctx: GuardContext) -> list[Finding]:
    return [
        Finding("deny", "sort --compress-program runs a program", NO_CODE)
        for a in args
        if a.startswith("--compress-program")
    ]


def _date(args: Sequence[str], ctx: GuardContext) -> list[Finding]:
    return [
        Finding("ask", "date --set changes the clock")
        for a in args
        if a in ("-s",) or a.startswith("--set")
    ]


GUARDS: dict[str, Guard] = {
    "git": git_guard,
    "find": _find,
    "tar": _tar,
    "sed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "sort": _sort,
    "date": _date,
    "jq": _query("jq"),
    "yq": _query("yq"),
    **{shell: _shell(shell) for shell in ("bash", "sh", "zsh", "dash", "ksh")},
    **{name: _wrapper(name) for name in _WRAPPER_VALUES},
}


def inspect(name: str, args: Sequence[str], ctx: GuardContext) -> list[Finding]:
    """Run the guard for `name` (if any) over its arguments, then the symlink check."""
    guard = GUARDS.get(name)
    return [*(guard(args, ctx) if guard else []), *link_findings(name, args, ctx),
            *secret_findings(name, args, ctx)]
