"""The one handle on an opened agent, whichever door serves it (CLI, TUI, REST API, A2A).

The factory (`pilothouse.agents.factory`) builds every agent and returns this; interfaces and
the A2A server only read it. `middleware` is the stack the graph was compiled with, outermost
first, so a test (or `pilothouse doctor`) can see which layers an agent really runs with.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.tools import BaseTool
from langgraph.graph.state import CompiledStateGraph

from pilothouse.models.registry import ModelSetup


@dataclass(frozen=True)
class AgentHandle:
    """An opened agent: its graph (with a checkpointer), model, tools and what it does."""

    name: str
    description: str
    graph: CompiledStateGraph[Any, Any, Any, Any]
    model: ModelSetup
    tools: list[BaseTool] = field(default_factory=list)
    middleware: tuple[AgentMiddleware[Any, Any, Any], ...] = ()

    def layer_types(self) -> set[type[Any]]:
        """The classes of the middleware this agent runs with."""
        return {type(layer) for layer in self.middleware}


#: How a door that serves one agent gets it: entered when the door opens, left when it closes.
OpenAgent = Callable[[], AbstractAsyncContextManager[AgentHandle]]
