"""The shell MCP server: `run_command` (and a dry-run `check_command`) over one workspace."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import anyio.to_thread
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from pilothouse.tools.mcp_support import tool_result
from pilothouse.tools.shell.service import ShellService
from pilothouse.tools.shell.views import command_view
from pilothouse.tools.tool_server import ToolServer

# What it answers comes first, in the words of what is asked for: the tools' descriptions are
# how a model picks among them (measured on the local model: questions about the files or the
# git history of the workspace went to code retrieval while this said only how commands run).
RUN_COMMAND_DESCRIPTION = """Facts about the workspace's files and git repository, from a shell \
command run in it: how many files or lines (find, wc -l), every file or line that mentions a \
word (grep -rn), a file's whole text (cat, head, tail), the repository's history and state (git \
log, git status, git diff), whether the tests pass.

Supports pipelines (|), &&, ||, ;, redirections (>, >>, <, 2>&1) and cd inside the workspace.
Not supported (refused with a reason): $(...), backticks, subshells, &, here-docs, unknown
$VARIABLES. Read-only commands run at once; commands that change things (git push, kubectl
apply, rm, interpreters...) return status "needs_approval": ask the user, and when they approve,
call again with the same command and the approval_token their approval produces. The approval
covers the files the command names: if one changed since, nothing runs (kind "EvidenceChanged")
and the user is asked again. Denied commands (sudo, rm -rf /, curl | sh, reading secrets,
writing outside the workspace) never run.
Statuses: ok, error, timeout, refused, needs_approval; `guidance` says what to do next."""


class RunCommandResult(BaseModel):
    """The answer of run_command: what happened and what to do next."""

    status: Literal["ok", "refused", "needs_approval", "error", "timeout"]
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    reason: str = ""
    guidance: str = ""
    command: str | None = Field(default=None, description="The normalized command line.")
    policy: dict[str, Any] | None = Field(default=None, description="The policy decision.")
    duration_seconds: float | None = None
    stdout_lines: int | None = Field(
        default=None, description="How many lines the command printed, when all were kept."
    )
    retried_from: str | None = Field(
        default=None, description="The original command, when its repair ran instead."
    )
    retried_because: str | None = Field(
        default=None, description="Why the original command was refused."
    )
    unmatched_pattern: str | None = Field(
        default=None, description="What a grep run alone looked for and no line holds, "
        "also not spelled as code spells its words."
    )
    kind: str | None = Field(
        default=None, description="Why an approved command did not run (EvidenceChanged)."
    )
    missing_path: str | None = Field(
        default=None, description="A path the command could not find."
    )
    closest_paths: list[str] | None = Field(
        default=None, description="The workspace's paths closest to the missing one."
    )
    evidence: dict[str, Any] | None = Field(
        default=None, description="The evidence now: the command, directory and file digests."
    )


def build_shell_server(
    workspace: str | os.PathLike[str],
    *,
    policy_file: str | os.PathLike[str] | None = None,
    approval_secret: str | bytes | None = None,
    timeout_seconds: float = 30.0,
    max_timeout_seconds: float = 600.0,
    output_limit_bytes: int = 64_000,
    memory_limit_bytes: int | None = 2 * 1024**3,
    cpu_limit_seconds: int | None = 120,
    max_processes: int | None = 256,
    base_env: Mapping[str, str] | None = None,
    pass_env: Iterable[str] = (),
    name: str = "pilothouse-shell",
) -> ToolServer:
    """An MCP server exposing safe shell execution confined to `workspace`.

    A command that runs and fails, times out, is refused or needs approval is an answer
    (`status`, `reason`, `guidance`), not a tool error: the tool did its job. Tool errors (bad
    arguments, a crash) come in the one tool-error shape of `ToolServer`.
    """
    service = ShellService(
        workspace,
        policy_file=policy_file,
        approval_secret=approval_secret,
        timeout_seconds=timeout_seconds,
        max_timeout_seconds=max_timeout_seconds,
        output_limit_bytes=output_limit_bytes,
        memory_limit_bytes=memory_limit_bytes,
        cpu_limit_seconds=cpu_limit_seconds,
        max_processes=max_processes,
        base_env=base_env,
        pass_env=pass_env,
    )
    server = ToolServer(
        name,
        instructions=f"Shell commands run in {service.workspace} under an allow/ask/deny policy.",
    )

    @server.tool(
        description=RUN_COMMAND_DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                    open_world_hint=True),
    )
    async def run_command(
        command: str, timeout_seconds: int | None = None, approval_token: str | None = None
    ) -> CallToolResult:
        # The service blocks on subprocesses; a worker thread keeps the session responsive.
        answer = await anyio.to_thread.run_sync(
            functools.partial(service.run, command, timeout_seconds, approval_token)
        )
        payload = RunCommandResult.model_validate(answer).model_dump(mode="json")
        return tool_result(payload, is_error=False, view=command_view)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def check_command(command: str) -> dict[str, Any]:
        """Say whether a command would run (allow), need approval (ask) or never run (deny)."""
        decision = await anyio.to_thread.run_sync(service.policy.check, command)
        return decision.to_dict()

    return server
