"""A supervisor over in-process specialists for the web UI, SSE and TUI tests.

The specialists are real agents from the factory (LangGraph, SQLite, the approval gates, the
answer layers) over scripted models; the DevOps one gates `run_command` with the real shell
policy, so its approval carries the real description (command, working directory, why).
Tools return rendered views (a page line and a table), as the product's tools do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from langchain_core.tools import tool

from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.shell_approval import ShellPolicy
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup, setup_model
from pilothouse.runtime.checkpoint import open_checkpointer
from pilothouse.runtime.handle import AgentHandle
from pilothouse.runtime.subagent import InProcessSubAgent

APPS_VIEW = ("Showing all 2 applications in project payments.\n\n"
             "| name | health | sync |\n|---|---|---|\n"
             "| payments-api | Degraded | Synced |\n| payments-worker | Healthy | Synced |")
COMMANDS_RUN: list[str] = []
RESTART = "kubectl rollout restart deployment/payments-api -n payments"


@tool
def list_applications(project: str = "") -> str:
    """List Argo CD applications, optionally in one project (a rendered view)."""
    return APPS_VIEW


@tool
def run_command(command: str) -> str:
    """Run a shell command in the workspace (the gate asks a person first)."""
    COMMANDS_RUN.append(command)
    return f"$ {command}\ndeployment.apps/payments-api restarted"


OpenAgent = Callable[[], Any]


def supervisor_agent(settings: Settings, workspace: Path, *,
                     supervisor: ModelSetup, argocd: ModelSetup,
                     devops: ModelSetup) -> OpenAgent:
    """`open_agent` for the API app or the TUI: the supervisor over argocd and devops."""
    COMMANDS_RUN.clear()

    @asynccontextmanager
    async def open_agent() -> AsyncIterator[AgentHandle]:
        async with open_checkpointer(settings) as checkpointer:
            def specialist(setup: ModelSetup, name: str, **kwargs: Any) -> Any:
                toolkit = Toolkit(name=name, prompt=f"You are the {name} agent.", **kwargs)
                return AgentFactory(settings, setup, checkpointer).build(toolkit).graph

            agents = [
                InProcessSubAgent("argocd", "Argo CD applications.",
                                  specialist(argocd, "argocd", tools=[list_applications])),
                InProcessSubAgent("devops", "Shell commands in the workspace.",
                                  specialist(devops, "devops", tools=[run_command],
                                             approvals=ShellPolicy(workspace, None).approval())),
            ]
            try:
                yield AgentFactory(settings, supervisor, checkpointer).supervisor_over(agents)
            finally:
                # A real ChatOpenAI client's pooled connection, closed in the loop that used it.
                for setup in (supervisor, argocd, devops):
                    client = getattr(setup.chat_model, "root_async_client", None)
                    if client is not None:
                        await client.close()

    return open_agent




#: The scripted server's model: it thinks a while, calls a tool, then writes word by word.
LEAD = "Two applications in payments; payments-api is Degraded and worth a look next."
STREAMING_SCRIPT = {
    "rules": [
        {"name": "route", "when": {"last_role": "user"},
         "reply": {"delay": 1.5, "tool_calls": [
             {"name": "list_applications", "arguments": {"project": "payments"}}]}},
        {"name": "answer", "when": {"last_role": "tool"},
         "reply": {"content": LEAD, "chunk_delay": 0.15}},
    ],
    "default": {"content": "No scripted answer."},
}

#: The Argo CD agent's model on the scripted server: a tool call, then a slow answer.
SUB_LEAD = "payments-api is Degraded in payments and payments-worker is Healthy there."
ARGOCD_SLOW = {"rules": [
    {"name": "list", "when": {"last_role": "user"},
     "reply": {"tool_calls": [{"name": "list_applications",
                               "arguments": {"project": "payments"}}]}},
    {"name": "answer", "when": {"last_role": "tool"},
     "reply": {"content": SUB_LEAD, "chunk_delay": 0.15}},
]}


def served_model_settings(home: Path, url: str) -> Settings:
    """Settings whose model is the real ChatOpenAI client on the scripted server at `url`."""
    return Settings.from_env({
        "PILOTHOUSE_HOME": str(home), "PILOTHOUSE_MODEL": "openai-compatible:scripted",
        "OPENAI_BASE_URL": url, "MAX_CONTEXT_TOKENS": "32000"})


def streaming_agent(home: Path, url: str) -> OpenAgent:
    """`open_agent` over the real ChatOpenAI client streaming from the scripted server."""
    settings = served_model_settings(home, url)

    @asynccontextmanager
    async def open_agent() -> AsyncIterator[AgentHandle]:
        setup = setup_model(settings)
        try:
            async with open_checkpointer(settings) as checkpointer:
                toolkit = Toolkit(name="argocd", prompt="You are the argocd agent.",
                                  tools=[list_applications])
                yield AgentFactory(settings, setup, checkpointer).build(toolkit)
        finally:
            # The client's pooled connection, closed here rather than by the GC.
            await setup.chat_model.root_async_client.close()  # type: ignore[attr-defined]

    return open_agent
