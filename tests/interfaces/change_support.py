"""The real Argo CD agent for the interface tests of diffs and evidence-bound approvals.

Its tools are the Argo CD MCP server's, over the sandbox on 127.0.0.1 (a 20-app fleet); its
gates are the product's, so a rollback's approval carries the description the evidence gate
wrote (the plan, the diff it would apply, the fingerprint). Only the model is scripted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from pilothouse.agents.argocd import open_argocd_toolkit
from pilothouse.agents.factory import AgentFactory
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.checkpoint import open_checkpointer
from pilothouse.runtime.handle import AgentHandle
from pilothouse.sandbox.argocd.server import RunningSandbox

#: Fleet apps of a 20-app sandbox: one drifted by hand, one degraded by its last deploy.
DRIFTED = "analytics-query-production"
DEGRADED = "billing-invoicer-dev"
#: Lines of the diffs the fleet gives them: the drift, and what the rollback would apply.
REMOVED, ADDED = "-  LOG_LEVEL: debug", "+  LOG_LEVEL: info"
ROLLBACK_REMOVED, ROLLBACK_ADDED = "-  DB_POOL_SIZE: '0'", "+  DB_POOL_SIZE: '20'"


def writable(settings: Settings, sandbox: RunningSandbox) -> Settings:
    """`settings` pointed at the sandbox, with the changing tools served."""
    return dataclasses.replace(settings, argocd_url=sandbox.url, argocd_token=sandbox.token,
                               argocd_read_only=False)


def argocd_agent(settings: Settings, setup: ModelSetup) -> Callable[[], Any]:
    """`open_agent` for the API app or the TUI: the Argo CD agent over `setup`'s model."""

    @asynccontextmanager
    async def open_agent() -> AsyncIterator[AgentHandle]:
        async with open_checkpointer(settings) as checkpointer, \
                open_argocd_toolkit(settings) as toolkit:
            yield AgentFactory(settings, setup, checkpointer).build(toolkit)

    return open_agent
