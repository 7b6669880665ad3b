"""Planning end to end: propose, reject with feedback, revised plan, approve, executed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.events import Answer, ApprovalRequest, Event, PlanUpdate, TurnFailed
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import tool_call

RESTARTED: list[str] = []


@tool
def restart_job(name: str) -> str:
    """Restart a failed job."""
    RESTARTED.append(name)
    return f"job {name} restarted"


def plan(*titles: str) -> Any:
    return tool_call("propose_plan", goal="Restart the failed nightly job",
                     steps=[{"title": t, "tools": ["restart_job"]} for t in titles])


def last_tool_result(messages: list[BaseMessage]) -> str:
    result = messages[-1]
    assert isinstance(result, ToolMessage)
    return str(result.content)


async def collect(stream: Any) -> list[Event]:
    return [e async for e in stream]


async def test_plan_is_revised_after_feedback_then_approved_and_executed(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    seen_feedback: list[str] = []

    def revise(messages: list[BaseMessage]) -> Any:
        seen_feedback.append(last_tool_result(messages))
        return plan("Check the job's last logs", "Restart nightly-etl")

    steps = [
        plan("Restart nightly-etl"),
        revise,
        lambda messages: tool_call("update_plan_step", step=1, status="done",
                                   note=last_tool_result(messages)[:40]),
        tool_call("restart_job", name="nightly-etl"),
        tool_call("update_plan_step", step=2, status="done"),
        "The nightly-etl job was restarted after checking its logs.",
    ]
    setup = scripted_setup(steps)
    graph = build_agent(make_settings(), setup, tools=[restart_job], planning=True,
                        system_prompt="You run DevOps tasks.", checkpointer=InMemorySaver())
    conversation = Conversation(graph, "plan")
    RESTARTED.clear()

    first = await collect(conversation.ask("restart the failed job"))
    approval = [e for e in first if isinstance(e, ApprovalRequest)]
    assert len(approval) == 1 and approval[0].value["name"] == "propose_plan"
    assert RESTARTED == [], "nothing runs before the plan is approved"

    second = await collect(conversation.decide(
        {"type": "reject", "message": "Check the logs before restarting."}))
    assert "Check the logs before restarting." in seen_feedback[0]
    revised = [e for e in second if isinstance(e, ApprovalRequest)]
    assert revised[0].value["args"]["steps"][0]["title"] == "Check the job's last logs"
    assert RESTARTED == []

    third = await collect(conversation.decide({"type": "approve"}))

    assert RESTARTED == ["nightly-etl"]
    # The model's lead, then the restart's result as the tool gave it (the plan is not a view).
    assert [e.text for e in third if isinstance(e, Answer)] == [
        "The nightly-etl job was restarted after checking its logs.\n\n"
        "job nightly-etl restarted"]
    progress = [e for e in third if isinstance(e, PlanUpdate)]
    assert [p.action for p in progress] == ["approved", "step", "step"]
    state = await graph.aget_state(conversation.config)
    assert [s["status"] for s in state.values["plan"]["steps"]] == ["done", "done"]
    # The model saw the plan with its progress on every call after approval.
    system = setup.chat_model.requests[-1].messages[0]  # type: ignore[attr-defined]
    assert "Approved plan: Restart the failed nightly job" in str(system.content)
    assert "2. [done] Restart nightly-etl" in str(system.content)


async def test_decide_without_a_pending_approval_says_so(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    graph = build_agent(make_settings(), scripted_setup(["hi"]), planning=True,
                        checkpointer=InMemorySaver())
    events = await collect(Conversation(graph, "none").decide({"type": "approve"}))
    assert isinstance(events[0], TurnFailed) and "Nothing is waiting" in events[0].message
