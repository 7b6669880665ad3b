"""Approval for shell commands: the policy decides, a person approves, the server verifies.

`check_command` is the same pure decision the shell server makes. Commands it allows run at
once; commands it denies are refused by the server whatever happens here; commands that need
approval stop the run at LangChain's human-in-the-loop gate (a LangGraph interrupt the CLI, web
UI and A2A all answer). Only after approval does `ApprovalTokenMiddleware`, which sits inside
that gate, attach a single-use token signed with the secret the server was started with: the
model cannot approve its own commands, because it never sees the secret.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from pilothouse.tools.shell import check_command, sign_approval

SHELL_TOOL = "run_command"


class ShellPolicy:
    """The shell policy as seen from the agent: which calls need a person."""

    def __init__(self, workspace: Path, policy_file: Path | None) -> None:
        self.workspace = workspace
        self.policy_file = policy_file

    def action(self, command: str) -> str:
        decision = check_command(command, workspace=self.workspace, policy_file=self.policy_file)
        return str(decision.action)

    def needs_approval(self, request: ToolCallRequest) -> bool:
        return self.action(str(request.tool_call["args"].get("command", ""))) == "ask"

    def describe(self, tool_call: Any, state: Any, runtime: Any) -> str:
        command = str(tool_call["args"].get("command", ""))
        decision = check_command(command, workspace=self.workspace, policy_file=self.policy_file)
        # The exact text the signed token will cover, and where it starts: the shell server
        # runs every command from the workspace (a `cd` inside it can only stay within).
        return (f"Run this command?\n  command: {command}\n"
                f"  working directory: {self.workspace}\n  why it needs approval: "
                f"{decision.reason}")

    def approval(self) -> dict[str, InterruptOnConfig]:
        return {SHELL_TOOL: InterruptOnConfig(
            allowed_decisions=["approve", "reject"],
            description=self.describe,
            when=self.needs_approval,
        )}


class ApprovalTokenMiddleware(AgentMiddleware):
    """Signs approved `run_command` calls; place it inside the human-in-the-loop gate."""

    def __init__(self, policy: ShellPolicy, secret: str) -> None:
        super().__init__()
        self.policy = policy
        self.secret = secret

    def _signed(self, request: ToolCallRequest) -> ToolCallRequest:
        call = request.tool_call
        if call["name"] != SHELL_TOOL:
            return request
        args = {k: v for k, v in call["args"].items() if k != "approval_token"}
        command = str(args.get("command", ""))
        if self.policy.action(command) == "ask":
            args["approval_token"] = sign_approval(self.secret, command)
        return request.override(tool_call={**call, "args": args})

    def wrap_tool_call(
        self, request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        return handler(self._signed(request))

    async def awrap_tool_call(
        self, request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        return await handler(self._signed(request))
