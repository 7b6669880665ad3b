"""How an agent process launches the shell server: a stdio subprocess sharing the secret.

The agent signs approvals with the same secret it hands the server here, so approvals made in
this process (the LangGraph interrupt) are the only ones the server accepts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from mcp import StdioServerParameters

from pilothouse.tools.shell.approval import SECRET_ENV_VAR
from pilothouse.tools.shell.environment import SAFE_VARIABLES

MODULE = "pilothouse.tools.shell"


def _args(
    workspace: str | os.PathLike[str],
    policy_file: str | os.PathLike[str] | None,
    timeout_seconds: float | None,
) -> list[str]:
    args = ["-m", MODULE, "--workspace", os.fspath(workspace)]
    if policy_file is not None:
        args += ["--policy-file", os.fspath(policy_file)]
    if timeout_seconds is not None:
        args += ["--timeout", str(timeout_seconds)]
    return args


def _env(approval_secret: str, source: Mapping[str, str] | None) -> dict[str, str]:
    # Only what commands may see anyway, plus the secret (which the server keeps to itself).
    source = os.environ if source is None else source
    env = {k: v for k, v in source.items() if k in SAFE_VARIABLES or k.startswith("LC_")}
    env[SECRET_ENV_VAR] = approval_secret
    return env


def shell_stdio_parameters(
    workspace: str | os.PathLike[str],
    *,
    approval_secret: str,
    policy_file: str | os.PathLike[str] | None = None,
    timeout_seconds: float | None = None,
    env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
) -> StdioServerParameters:
    """Start `python -m pilothouse.tools.shell` over `workspace`, for `mcp.Client`.

    `extra_args` are more command-line options (the tool filter's: --read-only, --tools, ...).
    """
    return StdioServerParameters(
        command=sys.executable,
        args=[*_args(workspace, policy_file, timeout_seconds), *extra_args],
        env=_env(approval_secret, env),
    )
