"""The memory guard: a process budget, a monitor that samples it, and middleware that enforces it.

The context layers keep each request small; this is the last line when many requests together
are not. Above the high-water mark new work is refused with a retryable error that says what to
do, because a refused question can be asked again and an OOM-killed process loses every
conversation in flight. Work already running is left to finish: that is what frees the memory.
The budget and its monitor live in `memory_budget` (no LangChain there; re-exported here).
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langgraph.runtime import Runtime

from pilothouse.observability import metrics
from pilothouse.observability.memory_budget import MemoryBudget, MemoryMonitor, MemorySample
from pilothouse.sizes import parse_memory_size

__all__ = ["MemoryBudget", "MemoryGuardMiddleware", "MemoryMonitor", "MemorySample",
           "parse_memory_size"]


class MemoryGuardMiddleware(AgentMiddleware):
    """Refuses a new turn, and each further model call, while memory is above the high water.

    Checked before the agent starts and before every model call (the expensive step that grows
    the history); tools already requested still run and return their results.
    """

    def __init__(self, budget: MemoryBudget) -> None:
        super().__init__()
        self.budget = budget
        # Exported now, so `/metrics` shows the budget even where no monitor samples.
        metrics.record_memory_budget(budget.limit_bytes)

    def before_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self.budget.check()
        return None

    async def abefore_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        self.budget.check()
        return None

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self.budget.check()
        return None

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        self.budget.check()
        return None
