"""The git guard: configuration and options that make git run a program of your choosing.

`git status` is read-only, but `git -c core.pager=CMD status`, `git -c alias.x='!CMD' x`,
`git --exec-path=DIR`, `git fetch --upload-pack=CMD` and `git grep -O CMD` all execute
arbitrary commands. Keys that name programs are denied; other `-c` overrides need approval.
What git prints of the secret files it tracks is `git_secrets`' to judge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pilothouse.tools.shell.findings import NO_CODE, Finding, GuardContext
from pilothouse.tools.shell.git_secrets import git_secret_findings

_GIT_CODE_CONFIG = re.compile(
    r"core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|worktree|"
    r"attributesfile)|alias\..+|pager\..+|sequence\.editor|credential\..+|gpg(\..+)?\.program|"
    r"(diff|difftool|merge|mergetool)\..+\.(command|cmd|driver|textconv|path)|"
    r"filter\..+\.(clean|smudge|process)|include\.path|includeif\..+|"
    r"uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack|vcs)|"
    r"protocol(\..+)?\.allow|safe\.directory|core\.sshcommand|ssh\.variant"
)
_GIT_REMOTE_EXEC = ("--upload-pack", "--receive-pack")
_GIT_TRANSPORT_SUBS = {"clone", "fetch", "pull", "push", "ls-remote", "archive", "remote"}


def git_guard(args: Sequence[str], ctx: GuardContext) -> list[Finding]:
    """Findings for `git ARGS`: global options first, then the subcommand's options."""
    found: list[Finding] = []
    sub: str | None = None
    sub_at, directory, elsewhere = len(args), None, False
    i = 0
    while i < len(args):
        arg = args[i]
        if sub is None:
            option, value = _option_value(args, i, ("-c", "--config-env"))
            if option:
                i += 2 if option == arg else 1
                found.append(_git_config_key(value.split("=", 1)[0], via=option))
                continue
            option, value = _option_value(args, i, ("-C", "--git-dir", "--work-tree"))
            if option:
                i += 2 if option == arg else 1
                found.append(ctx.path(value, "write", f"git {option}"))
                directory = value if option == "-C" else directory
                elsewhere = elsewhere or option != "-C"
                continue
            if arg.startswith("--exec-path="):
                found.append(
                    Finding("deny", "git --exec-path=DIR runs programs from DIR", NO_CODE)
                )
            elif arg in ("-p", "--paginate"):
                found.append(Finding("ask", "git --paginate starts a pager", "Drop --paginate."))
            elif not arg.startswith("-"):
                sub, sub_at = arg, i
        else:
            found.extend(_git_sub_option(sub, arg))
        i += 1
    if sub == "config":
        found.extend(_git_config_command(args))
    if sub is not None and elsewhere:
        found.append(Finding("ask", "git --git-dir or --work-tree reads a repository whose "
                             "secret files are not checked here", "Run git in the folder."))
    elif sub is not None:
        here = ctx.directory(directory)
        found.extend(git_secret_findings(sub, args[sub_at + 1:], here,
                                         lambda: ctx.git_tracked(here), ctx.is_secret))
    return found


def _option_value(args: Sequence[str], i: int, options: tuple[str, ...]) -> tuple[str, str]:
    """(option, value) when args[i] is one of `options`, as `-o v`, `--opt=v` or `-ov`."""
    arg = args[i]
    for option in options:
        if arg == option:
            return option, args[i + 1] if i + 1 < len(args) else ""
        if option.startswith("--") and arg.startswith(option + "="):
            return option, arg[len(option) + 1 :]
        if not option.startswith("--") and arg.startswith(option) and len(arg) > len(option):
            return option, arg[len(option) :]
    return "", ""


def _git_config_key(key: str, *, via: str) -> Finding:
    if _GIT_CODE_CONFIG.fullmatch(key.lower()):
        return Finding(
            "deny", f"git {via} {key}=... makes git run a program of your choosing", NO_CODE
        )
    return Finding("ask", f"git {via} {key} overrides configuration for this command")


def _git_sub_option(sub: str, arg: str) -> list[Finding]:
    if (
        arg.startswith(_GIT_REMOTE_EXEC)
        or (sub == "clone" and arg == "-u")
        or (sub in _GIT_TRANSPORT_SUBS and arg.startswith("--exec"))
    ):
        return [Finding("deny", f"git {sub} {arg.split('=')[0]} runs a program of your choosing")]
    if sub == "grep" and (arg.startswith("-O") or arg.startswith("--open-files-in-pager")):
        return [Finding("deny", "git grep -O opens a pager command", "Drop -O.")]
    if "ext::" in arg or arg.startswith("fd::"):
        return [Finding("deny", "git's ext:: transport runs a command", "Use an ssh or https URL.")]
    if arg == "--ext-diff":
        return [Finding("ask", "git --ext-diff runs the repository's external diff program")]
    if sub == "rebase" and (arg == "-x" or arg.startswith("--exec")):
        return [Finding("ask", "git rebase --exec runs a command after each commit")]
    return []


def _git_config_command(args: Sequence[str]) -> list[Finding]:
    found: list[Finding] = []
    for arg in args:
        if arg in ("--global", "--system"):
            found.append(Finding("deny", f"git config {arg} writes outside the workspace"))
        elif _GIT_CODE_CONFIG.fullmatch(arg.lower()):
            found.append(_git_config_key(arg, via="config"))
    return found
