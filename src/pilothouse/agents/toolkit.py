"""What an agent brings to the factory: its tools, prompt, approval gates and extra layers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.tools import BaseTool

from pilothouse.agents.inventory import Inventory


@dataclass
class Toolkit:
    """One specialist's equipment, opened (tool sessions live while the toolkit is open)."""

    name: str
    prompt: str
    tools: list[BaseTool] = field(default_factory=list)
    approvals: dict[str, InterruptOnConfig] = field(default_factory=dict)
    after_approval: list[AgentMiddleware[Any, Any, Any]] = field(default_factory=list)
    extra_middleware: list[AgentMiddleware[Any, Any, Any]] = field(default_factory=list)
    planning: bool = False
    #: Tools that may run longer than PILOTHOUSE_TOOL_TIMEOUT (seconds by tool name).
    per_tool_timeouts: dict[str, float] = field(default_factory=dict)
    #: The names of the agent's domain (a follow-up naming one asks for no other page).
    inventory: Inventory | None = None
