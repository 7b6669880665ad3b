"""Turn a failed run into guidance: what went wrong and what to try next.

The categories follow the seed's error analysis (parse error, command not found, timeout,
permission denied) plus the failures platform engineers hit most (no git repository, no
cluster, no network, limits). Quoting problems are handled before execution, in `repair.py`.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import re
import shutil
import signal

from pilothouse.tools.shell.executor import ExecutionResult
from pilothouse.tools.shell.near_paths import NearPaths

#: command -> (Debian package, pip package); None where that route does not apply.
PACKAGES: dict[str, tuple[str | None, str | None]] = {
    "rg": ("ripgrep", None),
    "fd": ("fd-find", None),
    "fdfind": ("fd-find", None),
    "jq": ("jq", None),
    "yq": ("yq", "yq"),
    "tree": ("tree", None),
    "git": ("git", None),
    "curl": ("curl", None),
    "wget": ("wget", None),
    "make": ("make", None),
    "gcc": ("gcc", None),
    "kubectl": ("kubernetes-client", None),
    "helm": (None, None),
    "gh": ("gh", None),
    "docker": ("docker.io", None),
    "shellcheck": ("shellcheck", None),
    "yamllint": ("yamllint", "yamllint"),
    "unzip": ("unzip", None),
    "zip": ("zip", None),
    "xz": ("xz-utils", None),
    "nc": ("netcat-openbsd", None),
    "dig": ("dnsutils", None),
    "nslookup": ("dnsutils", None),
    "ping": ("iputils-ping", None),
    "ip": ("iproute2", None),
    "ss": ("iproute2", None),
    "ps": ("procps", None),
    "file": ("file", None),
    "node": ("nodejs", None),
    "npm": ("npm", None),
    "go": ("golang-go", None),
    "cargo": ("cargo", None),
    "java": ("default-jre", None),
    "psql": ("postgresql-client", None),
    "mysql": ("default-mysql-client", None),
    "redis-cli": ("redis-tools", None),
    "sqlite3": ("sqlite3", None),
    "python": ("python-is-python3", None),
    "python3": ("python3", None),
    "pip": ("python3-pip", None),
    "http": ("httpie", "httpie"),
    "aws": ("awscli", "awscli"),
    "az": (None, "azure-cli"),
    "pytest": (None, "pytest"),
    "ruff": (None, "ruff"),
    "black": (None, "black"),
    "mypy": (None, "mypy"),
    "terraform": (None, None),
    "argocd": (None, None),
    "kustomize": (None, None),
}
_PERMISSION = re.compile(r"permission denied|operation not permitted|EACCES|EPERM", re.I)
_CHECKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"not a git repository", re.I),
        "This directory is not a git repository: run it inside the repository's folder (cd DIR &&"
        " ...), or ask the user whether to `git init`.",
    ),
    (
        re.compile(
            r"(connection to the server .* was refused|unable to connect to the server|"
            r"no configuration has been provided|current-context is not set)",
            re.I,
        ),
        "kubectl cannot reach a cluster: check the context (kubectl config current-context) and"
        " ask the user whether the cluster is reachable from here.",
    ),
    (
        re.compile(
            r"could not resolve host|network is unreachable|temporary failure in name", re.I
        ),
        "The network is unreachable from the sandbox; work offline or ask the user.",
    ),
    (
        re.compile(r"no such file or directory", re.I),
        "A path does not exist: list the directory first (ls, find . -name ...) and use the exact"
        " name.",
    ),
    (
        re.compile(r"cannot allocate memory|memoryerror|out of memory|std::bad_alloc", re.I),
        "The command hit the memory limit: process less data at once (a smaller file, head, a"
        " filter).",
    ),
)


def suggest_install(name: str, search_path: str | None = None) -> str:
    """Guidance for a program that is not installed: packages, near names, python -m."""
    hints: list[str] = []
    debian, pip = PACKAGES.get(name, (None, None))
    if debian:
        hints.append(f"install it with `apt-get install {debian}` (Debian/Ubuntu)")
    if pip:
        hints.append(f"`pip install {pip}`")
    if not debian and not pip:
        hints.append(f"find its package with `apt-cache search {name}` or its project's docs")
    if importlib.util.find_spec(name.replace("-", "_")) is not None:
        hints.append(f"it is available as a Python module: `python3 -m {name}`")
    near = difflib.get_close_matches(name, sorted(_executables(search_path)), n=3, cutoff=0.75)
    if near:
        hints.append("similar installed commands: " + ", ".join(near))
    return (
        f"`{name}` is not installed here; " + "; ".join(hints) + ". Installing software "
        "needs the user's approval, so ask them."
    )


def _executables(search_path: str | None) -> set[str]:
    found: set[str] = set()
    for directory in (search_path or os.defpath).split(os.pathsep):
        try:
            found.update(e.name for e in os.scandir(directory) if e.is_file())
        except OSError:
            continue
    return found


def missing_programs(argvs: list[tuple[str, ...]], search_path: str, cwd: str) -> list[str]:
    """Programs in `argvs` that cannot be found (checked before anything runs)."""
    missing = []
    for argv in argvs:
        program = argv[0]
        if program == "cd":
            continue
        if "/" in program:
            path = os.path.join(cwd, program)
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                missing.append(program)
        elif shutil.which(program, path=search_path) is None:
            missing.append(program)
    return list(dict.fromkeys(missing))


def stderr_tail(text: str, lines: int = 15) -> str:
    """The last `lines` non-empty lines of stderr."""
    kept = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def diagnose(result: ExecutionResult, *, timeout_seconds: float, max_timeout: float,
             near: NearPaths | None = None) -> str:
    """One paragraph of guidance for a run that failed or timed out; a path that does not
    exist is answered with the workspace's closest paths (`near`) when it has any."""
    if result.timed_out:
        more = (
            f" or raise timeout_seconds (now {timeout_seconds:g} s, at most {max_timeout:g})"
            if timeout_seconds < max_timeout
            else ""
        )
        return (
            "The command did not finish in time and its processes were killed. Split the "
            "work into smaller steps (a narrower path, head -n, a filter)" + more + "."
        )
    if result.start_error is not None and isinstance(result.start_error, PermissionError):
        return _permission(result.failed_program or "the program")
    code = result.exit_code
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else code
        if name == "SIGXCPU":
            return "The command used up its CPU-time limit; give it less work per call."
        return f"The command was killed by {name}; it may have hit the memory or process limit."
    tail = stderr_tail(result.stderr)
    if _PERMISSION.search(tail) or code == 126:
        return _permission(result.failed_program or "the command")
    if near is not None:
        return near.guidance()
    for pattern, advice in _CHECKS:
        if pattern.search(tail):
            return advice
    if code == 127 or "command not found" in tail:
        return "A program was not found; check the name with `which NAME`."
    return (
        f"The command exited with status {code}. Read the error above, fix the arguments,"
        " and try again; do not retry the same command unchanged."
    )


def _permission(what: str) -> str:
    return (
        f"Permission denied for {what}: the sandbox user cannot access it. Do not use sudo"
        " (it never runs here). Check the file's mode with `ls -l`, work on a copy inside"
        " the workspace, or ask the user to fix the permissions."
    )
