"""Approval for shell commands: the policy decides, a person approves evidence, the server checks.

`check_command` is the same pure decision the shell server makes. Commands it allows run at
once; commands it denies are refused by the server whatever happens here; commands that need
approval go through the evidence gate (`agents/evidence_gate.py`, the one Argo CD changes use):
before the pause, `command_evidence` records what the person is shown (the normalized command,
the working directory, a sha256 of each workspace file the command names); after approval the
call gets a single-use token signed over the command and that evidence with the secret the
server was started with. The model cannot approve its own commands (it never sees the secret),
and the server computes the evidence again just before running: if a file changed, nothing
runs and the person is asked again.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.messages import ToolCall

from pilothouse.agents.evidence_gate import (
    EvidenceGate,
    evidence_gate,
    interrupt_config,
    recorded,
)
from pilothouse.tools.shell import (
    CommandEvidence,
    check_command,
    command_evidence,
    sign_approval,
)

SHELL_TOOL = "run_command"
_FILES_SHOWN = 10  # files listed in a prompt; the fingerprint covers every one


def _command(call: Any) -> str:
    return str(call["args"].get("command", ""))


def describe_command(record: dict[str, Any], reason: str) -> str:
    """The approval prompt: the command, where it runs, the files it names, the fingerprint."""
    files = record.get("files") or []
    lines = ["Run this command?", f"  command: {record.get('command', '')}",
             f"  working directory: {record.get('cwd', '')}"]
    if files:
        lines.append("  files it names (sha256):")
        lines += [f"    {f['path']}  {str(f['sha256'])[:12]}  ({f.get('bytes', 0)} bytes"
                  + (", first part hashed" if f.get("partial") else "") + ")"
                  for f in files[:_FILES_SHOWN]]
        more = len(files) - _FILES_SHOWN + int(record.get("omitted") or 0)
        if more > 0:
            lines.append(f"    ... and {more} more")
    else:
        lines.append("  files it names: none in the workspace")
    lines.append(f"  why it needs approval: {reason}")
    lines.append(f"Evidence {record.get('evidence')}: if a file changes before the command "
                 "runs, nothing runs and you are asked again.")
    return "\n".join(lines)


class ShellPolicy:
    """The shell policy as the evidence gate sees it: which calls need a person, on what."""

    tools = frozenset({SHELL_TOOL})

    def __init__(self, workspace: Path, policy_file: Path | None,
                 secret: str | None = None) -> None:
        self.workspace = workspace
        self.policy_file = policy_file
        self.secret = secret  # signs approvals; without it approved commands get no token

    def needs_evidence(self, call: ToolCall) -> bool:
        return call["name"] == SHELL_TOOL and self.reason_to_ask(_command(call)) is not None

    def reason_to_ask(self, command: str) -> str | None:
        """Why `command` would wait for a person; None when it runs at once or is refused."""
        decision = check_command(command, workspace=self.workspace, policy_file=self.policy_file)
        return decision.reason if str(decision.action) == "ask" else None

    def record(self, command: str) -> dict[str, Any]:
        """The evidence of `command` now, as recorded in the conversation state."""
        return command_evidence(command, workspace=self.workspace,
                                policy_file=self.policy_file).to_dict()

    async def evidence(self, call: ToolCall) -> dict[str, Any]:
        # Hashing files blocks; a worker thread keeps the event loop free.
        return await asyncio.to_thread(self.record, _command(call))

    def asks(self, call: ToolCall, record: dict[str, Any]) -> bool:
        """Every command the policy asks about stops for a person, with or without a record."""
        return True

    def describe(self, tool_call: Any, state: Any, runtime: Any) -> str:
        command = _command(tool_call)
        # Without a record (a gate used without its middleware) the prompt computes it now.
        record = recorded(state, tool_call) or self.record(command)
        decision = check_command(command, workspace=self.workspace, policy_file=self.policy_file)
        return describe_command(record, decision.reason)

    def unapproved(self, call: ToolCall) -> dict[str, Any]:
        return {k: v for k, v in call["args"].items() if k != "approval_token"}

    def approved(self, call: ToolCall, record: dict[str, Any]) -> dict[str, Any]:
        args = self.unapproved(call)
        if self.secret is not None:
            bound = CommandEvidence.from_dict(record).bound()  # what the person was shown
            args["approval_token"] = sign_approval(self.secret, _command(call), evidence=bound)
        return args

    def unrecorded(self, call: ToolCall, record: dict[str, Any]) -> dict[str, str]:
        return {"error": "Nothing ran: Pilothouse could not record the evidence an approval "
                         f"must show ({record.get('error', 'none')}).",
                "suggestion": "Call run_command again with the same command to ask again."}

    def approval(self) -> dict[str, InterruptOnConfig]:
        """The approval configuration alone (the gate's prompt, without its middleware)."""
        return {SHELL_TOOL: interrupt_config(self)}


def shell_gate(policy: ShellPolicy) -> EvidenceGate:
    """(approvals, middleware outside the gate, middleware inside it) for `run_command`."""
    return evidence_gate([policy])
