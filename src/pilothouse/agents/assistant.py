"""The assistant behind `pilothouse ask` / `chat`: one agent graph with its tools, opened once.

Tools come from MCP servers (Argo CD when configured); the graph gets every context-safety
layer through `build_agent`. Interfaces open it as an async context so tool sessions and the
checkpointer are closed cleanly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.graph.state import CompiledStateGraph

from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError, UserInputError
from pilothouse.models.registry import ModelSetup, setup_model
from pilothouse.observability.memory import MemoryBudget
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.checkpoint import open_checkpointer

GENERAL_PROMPT = (
    "You are Pilothouse, an assistant for platform engineers (Argo CD, GitHub, Kubernetes, "
    "CI/CD, shell). Answer briefly and precisely. When you do not know, say so and say what "
    "the user can check."
)

ProgressCallback = Callable[[str, int, int], None]
AGENT_CHOICES = ("auto", "argocd", "devops")


@dataclass
class Assistant:
    """An opened agent: the graph, its model setup and what it can do."""

    graph: CompiledStateGraph[Any, Any, Any, Any]
    model: ModelSetup
    tools: list[BaseTool]
    name: str


@asynccontextmanager
async def open_assistant(
    settings: Settings,
    *,
    model: ModelSetup | None = None,
    progress: ProgressCallback | None = None,
    agent: str = "auto",
) -> AsyncIterator[Assistant]:
    """Open an assistant with a durable checkpointer; close everything on exit.

    `agent` picks the specialist: "argocd", "devops", or "auto" (Argo CD when ARGOCD_URL is
    set, else a general assistant without tools).
    """
    if agent not in AGENT_CHOICES:
        raise UserInputError(f"Unknown agent {agent!r}.", hint="Choose one of "
                             + ", ".join(AGENT_CHOICES) + ".")
    async with AsyncExitStack() as stack:
        if model is None:
            model = setup_model(settings, progress=(
                lambda done, total: progress("Preparing the local model (once)", done, total)
            ) if progress else None)
        checkpointer = await stack.enter_async_context(open_checkpointer(settings))
        toolkit = Toolkit(name="pilothouse", prompt=GENERAL_PROMPT)
        if agent == "argocd" or (agent == "auto" and settings.argocd_url):
            if not settings.argocd_url:
                raise ConfigurationError("The Argo CD agent needs ARGOCD_URL.",
                                         hint="Set ARGOCD_URL and ARGOCD_TOKEN, or run "
                                              "`pilothouse sandbox argocd` for a sandbox.")
            from pilothouse.agents.argocd import open_argocd_toolkit

            toolkit = await stack.enter_async_context(open_argocd_toolkit(settings))
        elif agent == "devops":
            from pilothouse.agents.devops import open_devops_toolkit

            toolkit = await stack.enter_async_context(open_devops_toolkit(settings))
        graph = build_agent(
            settings, model, tools=toolkit.tools, system_prompt=toolkit.prompt,
            checkpointer=checkpointer, name=toolkit.name, approvals=toolkit.approvals,
            after_approval=toolkit.after_approval, extra_middleware=toolkit.extra_middleware,
            planning=toolkit.planning,
            memory_budget=MemoryBudget.detect(settings.memory_limit_bytes,
                                              settings.memory_high_water),
        )
        yield Assistant(graph, model, toolkit.tools, toolkit.name)
