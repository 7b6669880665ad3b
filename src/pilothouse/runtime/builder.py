"""Build an agent: LangChain `create_agent` with every context-safety layer wired in.

`pilothouse.agents.factory` is the one caller in the product: it decides, from Settings, the
layers every agent gets (memory guard, approvals, ...). Tests of a single layer build a graph
here directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ToolCallLimitMiddleware,
)
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from pilothouse.config import Settings
from pilothouse.context.compression import Compressor
from pilothouse.context.intelligence import CorrelationMiddleware
from pilothouse.context.orphans import OrphanRepairMiddleware
from pilothouse.context.overflow import OverflowRecoveryMiddleware
from pilothouse.context.preflight import Budget, PreflightBudgetMiddleware
from pilothouse.context.summarizer import Summarizer
from pilothouse.context.tool_output import ToolOutputGuardMiddleware, tool_output_limit
from pilothouse.context.tool_resilience import ToolResilienceMiddleware
from pilothouse.models.registry import ModelSetup, model_call_cap
from pilothouse.models.tokens import CHARS_PER_TOKEN_ESTIMATE
from pilothouse.observability.memory import MemoryBudget, MemoryGuardMiddleware
from pilothouse.observability.middleware import ObservabilityMiddleware
from pilothouse.runtime.answer_views import answer_layers
from pilothouse.runtime.model_timeout import ModelTimeoutMiddleware
from pilothouse.runtime.planning import PlanningMiddleware, plan_approval


def context_middleware(
    settings: Settings,
    model: ModelSetup,
    *,
    tools: Sequence[BaseTool] = (),
    system_prompt: str = "",
    summarizer: Summarizer | None = None,
    per_tool_timeouts: Mapping[str, float] | None = None,
) -> list[AgentMiddleware[Any, Any, Any]]:
    """The context-safety layers enabled in `settings`, in the order they must compose.

    Hooks run in list order; wrappers nest with the first outermost. So orphan repair runs
    before the budget check, overflow recovery wraps the request guard (a retry is measured
    again), and the output guard wraps the resilience layer (error results are held too).
    """
    window = model.window.tokens
    budget = Budget(
        window=window,
        reserved_output=min(settings.max_output_tokens, window // 4),
        trigger_ratio=settings.context_trigger_ratio,
        target_ratio=settings.context_target_ratio,
    )
    if summarizer is None:
        summarizer = Summarizer(
            model.chat_model,
            timeout=settings.summary_timeout_seconds,
            max_input_chars=int(window * 0.4 * CHARS_PER_TOKEN_ESTIMATE),
        )
    compressor = Compressor(model.counter, summarizer,
                            prioritize=settings.layer_enabled("prioritization"))
    overhead = model.counter.count_tools(list(tools)) + model.counter.count_message(
        SystemMessage(content=system_prompt)
    )
    layers: list[AgentMiddleware[Any, Any, Any]] = []
    if settings.layer_enabled("orphan_repair"):
        layers.append(OrphanRepairMiddleware())
    if settings.layer_enabled("overflow_recovery"):
        layers.append(OverflowRecoveryMiddleware(budget, model.counter, compressor))
    if settings.layer_enabled("correlation"):
        # Outside the budget guard: the note it adds is counted like the rest of the request.
        layers.append(CorrelationMiddleware())
    if settings.layer_enabled("preflight"):
        layers.append(PreflightBudgetMiddleware(budget, model.counter, compressor, overhead))
    if settings.layer_enabled("tool_output_guard"):
        limit = tool_output_limit(
            settings.max_tool_output_size, window, settings.tool_output_window_share
        )
        layers.append(ToolOutputGuardMiddleware(limit))
    if settings.layer_enabled("tool_resilience"):
        layers.append(ToolResilienceMiddleware(
            timeout=settings.tool_timeout_seconds,
            repeat_limit=settings.repeated_call_limit,
            per_tool_timeouts=per_tool_timeouts,
        ))
        layers.append(ModelCallLimitMiddleware(run_limit=settings.model_call_limit))
        layers.append(ToolCallLimitMiddleware(run_limit=settings.tool_call_limit))
    return layers


@dataclass(frozen=True)
class LayeredAgent:
    """A compiled agent graph and the middleware it was compiled with, outermost first."""

    graph: CompiledStateGraph[Any, Any, Any, Any]
    middleware: tuple[AgentMiddleware[Any, Any, Any], ...]


def build_agent(
    settings: Settings,
    model: ModelSetup,
    **options: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The graph of `build_layered_agent(settings, model, **options)`, for tests of one layer.

    The product builds every agent through `pilothouse.agents.factory.AgentFactory`, which
    adds the memory guard and the toolkit's gates and keeps the middleware list.
    """
    return build_layered_agent(settings, model, **options).graph


def build_layered_agent(
    settings: Settings,
    model: ModelSetup,
    *,
    tools: Sequence[BaseTool] = (),
    system_prompt: str = "",
    checkpointer: Checkpointer | None = None,
    name: str = "pilothouse",
    extra_middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    summarizer: Summarizer | None = None,
    per_tool_timeouts: Mapping[str, float] | None = None,
    planning: bool = False,
    approvals: Mapping[str, InterruptOnConfig] | None = None,
    after_approval: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    memory_budget: MemoryBudget | None = None,
) -> LayeredAgent:
    """An agent graph over `model` and `tools` with the context layers and `extra_middleware`.

    `planning` adds the plan tools; `approvals` names the tools a person must approve (one
    human-in-the-loop gate for all of them); `after_approval` middleware sits inside that gate,
    so it only ever sees calls that were approved or needed no approval. The memory guard goes
    first (it refuses before a summarization spends memory); observability goes innermost, so
    its spans see the request actually sent and every retry.
    """
    gated: dict[str, bool | InterruptOnConfig] = dict(approvals or {})
    # The answer layer sits inside the toolkit's own layers: an answer the supervisor passes
    # on without a model call (`SingleAnswerMiddleware`) is already composed.
    middleware: list[AgentMiddleware[Any, Any, Any]] = [
        *extra_middleware, *answer_layers(settings)]
    if planning:
        middleware.append(PlanningMiddleware())
        gated.update(plan_approval())
    if gated:
        middleware.append(HumanInTheLoopMiddleware(gated, interrupt_mode="per_call"))
    middleware.extend(after_approval)
    if not any(isinstance(m, ObservabilityMiddleware) for m in middleware):
        # Unless the caller brought its own (with other labels), every agent is observed.
        middleware.append(ObservabilityMiddleware(name, model_name=model.name))
    # Innermost of all: each model call (and each retry of an outer layer) is timed alone.
    middleware.append(ModelTimeoutMiddleware(settings.model_timeout_seconds,
                                             model_call_cap(settings)))
    guards: list[AgentMiddleware[Any, Any, Any]] = (
        [MemoryGuardMiddleware(memory_budget)] if memory_budget is not None else [])
    # Planning tools are part of what the model sees, so the budget must count them.
    every_tool = [*tools, *(t for m in middleware for t in getattr(m, "tools", []) or [])]
    layers = context_middleware(
        settings, model, tools=every_tool, system_prompt=system_prompt, summarizer=summarizer,
        per_tool_timeouts=per_tool_timeouts,
    )
    stack = (*guards, *layers, *middleware)
    graph = create_agent(
        model.chat_model,
        tools=list(tools),
        system_prompt=system_prompt or None,
        middleware=list(stack),
        checkpointer=checkpointer,
        name=name,
    )
    return LayeredAgent(graph, stack)
