"""Evidence-bound approval of shell commands, end to end.

Scripted model -> the DevOps agent's evidence gate -> the real shell MCP server over stdio. The
person approves `bash scripts/step.sh` as it was shown (its sha256); when the script changes
between the prompt and the approval, the server runs nothing, says which file changed, and the
next call is asked about again with the new digest. The script only appends to a canary file
in the test's temporary directory.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.devops import open_devops_toolkit
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.shell_approval import ShellPolicy
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import ApprovalRequest, ToolResult
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import tool_call

COMMAND = "bash scripts/step.sh"


def workspace_with_script(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace whose scripts/step.sh appends to a canary outside it, and the canary."""
    workspace, canary = tmp_path / "ws", tmp_path / "canary.txt"
    (workspace / "scripts").mkdir(parents=True)
    (workspace / "scripts" / "step.sh").write_text(f"echo first >> {canary}\n")
    return workspace, canary


def short_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def prompts(events: list[Any]) -> list[str]:
    return [str(e.value["description"]) for e in events if isinstance(e, ApprovalRequest)]


async def tool_payloads(conversation: Conversation) -> list[dict[str, Any]]:
    """Each tool result's payload, with `seen`: the text the model was given."""
    payloads = []
    for message in await conversation.history():
        if isinstance(message, ToolMessage):
            artifact = message.artifact
            payload = artifact if isinstance(artifact, dict) else json.loads(str(message.content))
            payloads.append({**payload, "seen": str(message.content)})
    return payloads


async def test_a_script_changed_after_the_prompt_does_not_run_and_is_asked_again(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    workspace, canary = workspace_with_script(tmp_path)
    script = workspace / "scripts" / "step.sh"
    settings = dataclasses.replace(make_settings(MAX_CONTEXT_TOKENS="32000"),
                                   workspace=workspace)
    steps = [tool_call("run_command", command=COMMAND, approval_token="forged"),
             tool_call("run_command", command=COMMAND), "It ran."]
    setup = scripted_setup(steps, window=32_000, settings=settings)
    async with open_devops_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        conversation = Conversation(graph, "shell-evidence")

        first = [e async for e in conversation.ask("run the step script")]
        approved_digest = short_digest(script)
        assert prompts(first) and not any(isinstance(e, ToolResult) for e in first)
        assert f"scripts/step.sh  {approved_digest}" in prompts(first)[0]

        script.write_text(f"echo second >> {canary}\n")  # behind the person's back
        second = [e async for e in conversation.decide({"type": "approve"})]
        refused = (await tool_payloads(conversation))[-1]
        assert not canary.exists(), "the changed script must not run"
        assert refused["kind"] == "EvidenceChanged", refused
        assert "scripts/step.sh changed" in refused["reason"]
        assert f"approved sha256 {approved_digest}" in refused["reason"]
        assert "Nothing ran; you will be asked again" in refused["reason"]
        assert "scripts/step.sh changed" in refused["seen"] and "Not run" in refused["seen"]
        asked_again = prompts(second)
        assert len(asked_again) == 1, "the retried call stops for a person again"
        assert f"scripts/step.sh  {short_digest(script)}" in asked_again[0]
        assert approved_digest not in asked_again[0]

        third = [e async for e in conversation.decide({"type": "approve"})]
        ran = (await tool_payloads(conversation))[-1]

    assert any(isinstance(e, ToolResult) for e in third)
    assert ran["status"] == "ok", ran
    assert canary.read_text() == "second\n"  # the script the person saw the second time


def test_the_prompt_shows_command_directory_files_and_fingerprint(tmp_path: Path) -> None:
    workspace, _ = workspace_with_script(tmp_path)
    (workspace / "k8s").mkdir()
    (workspace / "k8s" / "app.yaml").write_text("kind: Deployment\n")
    policy = ShellPolicy(workspace, None)
    record = policy.record("kubectl apply -f k8s/app.yaml")
    call = {"name": "run_command", "args": {"command": "kubectl apply -f k8s/app.yaml"},
            "id": "call-1"}
    prompt = policy.describe(call, {"approval_evidence": {"call-1": record}}, None)

    assert "command: kubectl apply -f k8s/app.yaml\n" in prompt
    assert f"working directory: {workspace.resolve()}\n" in prompt
    assert f"k8s/app.yaml  {short_digest(workspace / 'k8s' / 'app.yaml')}  (17 bytes)" in prompt
    assert f"Evidence {record['evidence']}:" in prompt
    assert "scripts/step.sh" not in prompt  # only the files the command names
    # The fingerprint is of this evidence: another file content gives another one.
    (workspace / "k8s" / "app.yaml").write_text("kind: Service\n")
    assert policy.record("kubectl apply -f k8s/app.yaml")["evidence"] != record["evidence"]
