"""Safe shell execution as an MCP tool: parse, check against policy, approve, run, explain.

Entry points:
- `check_command(command, workspace=...)`: the pure allow / ask / deny decision, for the
  agent side to decide whether to interrupt for a person's approval.
- `command_evidence(command, workspace=...)`: what a person approving it is shown (the
  command, its directory, digests of the files it names); the server checks it again.
- `sign_approval(secret, command, evidence=...)`: the token that lets an "ask" command run
  once, while its evidence is unchanged.
- `build_shell_server(workspace, ...)`: the MCP server with the `run_command` tool.
- `shell_stdio_parameters(workspace, approval_secret=...)`: launch it for `mcp.Client`.
- `ShellService`: the same use case without MCP.
"""

from pilothouse.tools.shell.approval import (
    SECRET_ENV_VAR,
    ApprovalVerifier,
    normalize_command,
    sign_approval,
)
from pilothouse.tools.shell.connection import shell_stdio_parameters
from pilothouse.tools.shell.decision import PartDecision, PolicyDecision
from pilothouse.tools.shell.evidence import CommandEvidence, FileDigest, command_evidence
from pilothouse.tools.shell.policy import ShellPolicy, check_command
from pilothouse.tools.shell.server import RunCommandResult, build_shell_server
from pilothouse.tools.shell.service import ShellService

__all__ = [
    "SECRET_ENV_VAR",
    "ApprovalVerifier",
    "CommandEvidence",
    "FileDigest",
    "PartDecision",
    "PolicyDecision",
    "RunCommandResult",
    "ShellPolicy",
    "ShellService",
    "build_shell_server",
    "check_command",
    "command_evidence",
    "normalize_command",
    "shell_stdio_parameters",
    "sign_approval",
]
