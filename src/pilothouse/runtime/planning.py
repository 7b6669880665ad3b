"""Interactive planning: a multi-step task gets a plan the person approves before it runs.

The model proposes a plan with `propose_plan` (structured steps, each naming the tools it will
use). The call is gated by LangChain's `HumanInTheLoopMiddleware`, so the person approves it,
edits it, or rejects it with feedback; a rejection reaches the model as the tool result and it
proposes a revised plan. An approved plan is stored in the conversation state (it survives
restarts with the checkpointer), shown to the model on every later call with each step's status,
and the model reports progress with `update_plan_step`, which streams to the interfaces.

We use our own tools rather than `TodoListMiddleware` because a todo list is not approved by
anyone: here the plan is the unit of consent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, NotRequired, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, StructuredTool
from langgraph.config import get_stream_writer
from langgraph.prebuilt import InjectedState
from langgraph.types import Command
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

PLANNING_PROMPT = (
    "For a task with several steps, or any change to a system, first call propose_plan "
    "(each step names the tools it will use) and wait: the user approves, edits or rejects "
    "it. After approval, follow the plan step by step and call update_plan_step when a "
    "step starts and when it ends. For a rejected plan, propose a revised one using the "
    "user's feedback. Answer simple questions directly, without a plan."
)

StepStatus = Literal["pending", "in_progress", "done", "failed", "skipped"]


class PlanStep(BaseModel):
    """One step of a plan."""

    title: str = Field(description="What this step does.")
    tools: list[str] = Field(default_factory=list, description="Tools this step will call.")
    status: StepStatus = "pending"
    note: str = ""


class ProposePlanInput(BaseModel):
    """Arguments of `propose_plan`."""

    goal: str = Field(description="The task, in one sentence.")
    steps: list[PlanStep] = Field(min_length=1, max_length=12)
    tool_call_id: Annotated[str, InjectedToolCallId]


class Plan(TypedDict):
    """The approved plan as stored in the conversation state."""

    goal: str
    steps: list[dict[str, Any]]
    revision: int


class PlanState(AgentState[Any]):
    """Agent state with the current plan."""

    plan: NotRequired[Plan | None]


class UpdateStepInput(BaseModel):
    """Arguments of `update_plan_step`."""

    step: int = Field(ge=1, description="Step number, starting at 1.")
    status: StepStatus
    note: str = ""
    tool_call_id: Annotated[str, InjectedToolCallId]
    plan: Annotated[Plan | None, InjectedState("plan")] = None


def _emit(event: dict[str, Any]) -> None:
    with contextlib.suppress(RuntimeError):  # outside a graph run there is no stream
        get_stream_writer()(event)


def _propose_plan(goal: str, steps: list[PlanStep], tool_call_id: str) -> Command[Any]:
    # Reached only after the person approved (or edited) the plan.
    plan: Plan = {"goal": goal, "steps": [s.model_dump() for s in steps], "revision": 1}
    _emit({"type": "plan", "action": "approved", "plan": plan})
    return Command(update={"plan": plan, "messages": [ToolMessage(
        f"The user approved the plan ({len(steps)} steps). Start with step 1 and call "
        "update_plan_step as each step starts and ends.", tool_call_id=tool_call_id)]})


def _update_step(step: int, status: StepStatus, tool_call_id: str, note: str = "",
                 plan: Plan | None = None) -> Command[Any]:
    if plan is None or step > len(plan["steps"]):
        return Command(update={"messages": [ToolMessage(
            "There is no approved plan with that step. Propose a plan first.",
            tool_call_id=tool_call_id, status="error")]})
    steps = [dict(s) for s in plan["steps"]]
    steps[step - 1].update(status=status, note=note)
    updated: Plan = {**plan, "steps": steps}
    _emit({"type": "plan", "action": "step", "step": step, "status": status, "note": note,
           "plan": updated})
    return Command(update={"plan": updated, "messages": [ToolMessage(
        f"Step {step} is now {status}.", tool_call_id=tool_call_id)]})


def render_plan(plan: Plan) -> str:
    """The plan as the model sees it on every call."""
    lines = [f"Approved plan: {plan['goal']}"]
    for number, step in enumerate(plan["steps"], start=1):
        tools = f" (tools: {', '.join(step['tools'])})" if step.get("tools") else ""
        note = f" - {step['note']}" if step.get("note") else ""
        lines.append(f"{number}. [{step['status']}] {step['title']}{tools}{note}")
    return "\n".join(lines)


class PlanningMiddleware(AgentMiddleware[PlanState, Any, Any]):
    """Adds the planning tools, and shows the approved plan with its progress to the model."""

    state_schema = PlanState

    def __init__(self) -> None:
        super().__init__()
        self.tools = [
            StructuredTool.from_function(
                func=_propose_plan, name="propose_plan", args_schema=ProposePlanInput,
                description="Propose a step-by-step plan for the user to approve before acting.",
                infer_schema=False,
            ),
            StructuredTool.from_function(
                func=_update_step, name="update_plan_step", args_schema=UpdateStepInput,
                description="Report progress on a step of the approved plan.",
                infer_schema=False,
            ),
        ]

    def _with_plan(self, request: ModelRequest) -> ModelRequest:
        plan = cast("Plan | None", request.state.get("plan"))
        text = PLANNING_PROMPT + ("\n\n" + render_plan(plan) if plan else "")
        base = request.system_message.text if request.system_message else ""
        # With no plan there is no step to update (measured: the local model reported
        # progress on a plan it had never proposed, instead of proposing one).
        tools = request.tools if plan else [
            t for t in request.tools if getattr(t, "name", None) != "update_plan_step"]
        return request.override(tools=tools,
                                system_message=SystemMessage(content=f"{base}\n\n{text}".strip()))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(self._with_plan(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return await handler(self._with_plan(request))


def plan_approval() -> dict[str, InterruptOnConfig]:
    """The human-in-the-loop gate for plans: approve, edit the steps, or reject with feedback."""
    return {"propose_plan": InterruptOnConfig(
        allowed_decisions=["approve", "edit", "reject"],
        description="Review this plan. Approve it, edit its steps, or reject it with feedback.",
    )}


