"""Safe shell execution as an MCP tool: parse, check against policy, approve, run, explain.

Entry points:
- `check_command(command, workspace=...)`: the pure allow / ask / deny decision, for the
  agent side to decide whether to interrupt for a person's approval.
- `sign_approval(secret, command)`: the token that lets an "ask" command run once.
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
from pilothouse.tools.shell.policy import ShellPolicy, check_command
from pilothouse.tools.shell.server import RunCommandResult, build_shell_server
from pilothouse.tools.shell.service import ShellService

__all__ = [
    "SECRET_ENV_VAR",
    "ApprovalVerifier",
    "PartDecision",
    "PolicyDecision",
    "RunCommandResult",
    "ShellPolicy",
    "ShellService",
    "build_shell_server",
    "check_command",
    "normalize_command",
    "shell_stdio_parameters",
    "sign_approval",
]
