"""The layers every agent from the factory must have, and a check naming the missing ones."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ToolCallLimitMiddleware,
)

from pilothouse.config import Settings
from pilothouse.context.intelligence import CorrelationMiddleware
from pilothouse.context.orphans import OrphanRepairMiddleware
from pilothouse.context.overflow import OverflowRecoveryMiddleware
from pilothouse.context.preflight import PreflightBudgetMiddleware
from pilothouse.context.tool_output import ToolOutputGuardMiddleware
from pilothouse.context.tool_resilience import ToolResilienceMiddleware
from pilothouse.observability.memory import MemoryGuardMiddleware
from pilothouse.observability.middleware import ObservabilityMiddleware
from pilothouse.runtime.handle import AgentHandle
from pilothouse.runtime.model_timeout import ModelTimeoutMiddleware
from pilothouse.sandbox.argocd.server import running_sandbox
from pilothouse.sandbox.github.server import running_github_sandbox

#: Memory guard, every context-safety layer, observability and the model timeout.
EVERY_AGENT_LAYER: frozenset[type] = frozenset({
    MemoryGuardMiddleware, OrphanRepairMiddleware, OverflowRecoveryMiddleware,
    CorrelationMiddleware, PreflightBudgetMiddleware, ToolOutputGuardMiddleware,
    ToolResilienceMiddleware, ModelCallLimitMiddleware, ToolCallLimitMiddleware,
    ObservabilityMiddleware, ModelTimeoutMiddleware,
})
APPROVAL_GATE = HumanInTheLoopMiddleware


def missing_layers(agent: AgentHandle, *, approvals: bool = False) -> set[str]:
    """Names of the layers `agent` lacks (the approval gate too when `approvals`)."""
    wanted = EVERY_AGENT_LAYER | ({APPROVAL_GATE} if approvals else set())
    return {layer.__name__ for layer in wanted - agent.layer_types()}


def memory_guards(agent: AgentHandle) -> list[MemoryGuardMiddleware]:
    """The memory guards of `agent` (exactly one, outermost, when it is built right)."""
    return [m for m in agent.middleware if isinstance(m, MemoryGuardMiddleware)]


@contextmanager
def with_both_sandboxes(make_settings: Callable[..., Settings], **env: str) -> Iterator[Settings]:
    """Settings (from `env`) for the Argo CD agent (writable: its sync is gated) and the GitHub
    agent, each over its sandbox on 127.0.0.1."""
    with running_sandbox(apps=20) as argocd, running_github_sandbox() as github:
        yield dataclasses.replace(
            make_settings(ARGOCD_READ_ONLY="false", **env), argocd_url=argocd.url,
            argocd_token=argocd.token, github_api_url=github.url, github_token=github.token)
