"""Which agents exist and where each runs: in this process, or at an A2A URL.

`PILOTHOUSE_AGENTS_<NAME>_URL` (e.g. `PILOTHOUSE_AGENTS_ARGOCD_URL=http://argocd:8080/a2a/argocd`)
makes the supervisor call that agent over A2A (with `PILOTHOUSE_AGENTS_<NAME>_KEY`, the API
key the agent's server gave the supervisor, sent as a bearer token); without it the agent runs
in process when it is configured (Argo CD by ARGOCD_URL, GitHub by GITHUB_TOKEN or
GITHUB_API_URL, DevOps by PILOTHOUSE_WORKSPACE: a server should not open a shell on whatever
directory it started in).
A specialist that fails to start is left out of the supervisor with the reason in the log.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

from langgraph.types import Checkpointer

from pilothouse.a2a.remote import RemoteSubAgent
from pilothouse.a2a.server import ServedAgent
from pilothouse.a2a.subagent import InProcessSubAgent, SubAgent
from pilothouse.agents.argocd import open_argocd_toolkit
from pilothouse.agents.devops import open_devops_toolkit
from pilothouse.agents.github import open_github_toolkit
from pilothouse.agents.supervisor import build_supervisor
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError, PilothouseError
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.builder import build_agent

SUPERVISOR = "supervisor"
log = logging.getLogger("pilothouse.agents")


@dataclass(frozen=True)
class AgentSpec:
    """A specialist: what it does (for cards and the supervisor's prompt) and its toolkit."""

    name: str
    description: str
    open_toolkit: Callable[[Settings], AbstractAsyncContextManager[Toolkit]]


SPECIALISTS: dict[str, AgentSpec] = {
    "argocd": AgentSpec(
        "argocd", "Argo CD: applications and their sync and health status, resources, events, "
                  "pod logs, projects, ApplicationSets and clusters; syncs need approval.",
        open_argocd_toolkit),
    "github": AgentSpec(
        "github", "GitHub: pull requests (open, awaiting review, files changed), issues, "
                  "search across repositories, GitHub Actions runs and their logs.",
        open_github_toolkit),
    "devops": AgentSpec(
        "devops", "DevOps: safe shell commands in the workspace (others need approval), "
                  "questions about the codebase, plans for multi-step tasks.",
        open_devops_toolkit),
}
AGENT_NAMES: tuple[str, ...] = (*SPECIALISTS, SUPERVISOR)


@dataclass(frozen=True)
class Topology:
    """Where agents run: remote `urls` by name, and which specialists are configured here."""

    urls: dict[str, str] = field(default_factory=dict)
    configured: frozenset[str] = frozenset()
    keys: dict[str, str] = field(default_factory=dict, repr=False)
    timeout_seconds: float = 180.0
    answer_tokens: int | None = None

    @classmethod
    def from_env(cls, settings: Settings, env: Mapping[str, str] | None = None) -> Topology:
        """Read PILOTHOUSE_AGENTS_<NAME>_URL and _KEY, _TIMEOUT and _ANSWER_TOKENS.

        Stands in until `Settings` has these fields (config.py is not this module's to change).
        """
        env = os.environ if env is None else env
        urls = {name: url.strip() for name in SPECIALISTS
                if (url := env.get(f"PILOTHOUSE_AGENTS_{name.upper()}_URL", "")).strip()}
        for name, url in urls.items():
            if not url.startswith(("http://", "https://")):
                raise ConfigurationError(
                    f"PILOTHOUSE_AGENTS_{name.upper()}_URL={url!r} is not an http(s) URL.",
                    hint=f"e.g. http://{name}:8080/a2a/{name}")
        keys = {name: key.strip() for name in urls
                if (key := env.get(f"PILOTHOUSE_AGENTS_{name.upper()}_KEY", "")).strip()}
        configured = set()
        if env.get("PILOTHOUSE_WORKSPACE", "").strip():
            configured.add("devops")
        if settings.argocd_url:
            configured.add("argocd")
        if any(env.get(k, "").strip() for k in ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL")):
            configured.add("github")
        return cls(urls=urls, configured=frozenset(configured), keys=keys,
                   timeout_seconds=_number(env, "PILOTHOUSE_AGENTS_TIMEOUT", 180.0),
                   answer_tokens=int(_number(env, "PILOTHOUSE_AGENTS_ANSWER_TOKENS", 0)) or None)

    def local_specialists(self) -> list[str]:
        """Specialists to run in this process by default: configured and not remote."""
        return [n for n in SPECIALISTS if n in self.configured and n not in self.urls]


def startup_failure(error: BaseException) -> str:
    """The message of a start-up failure, from inside the exception groups task groups add."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, PilothouseError):
        return error.message
    return f"{type(error).__name__}: {error}"


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigurationError(f"{name}={raw!r} is not a number.") from None
    if value < 0:
        raise ConfigurationError(f"{name}={raw} must not be negative.")
    return value


@asynccontextmanager
async def open_specialist(settings: Settings, name: str, model: ModelSetup,
                          checkpointer: Checkpointer) -> AsyncIterator[ServedAgent]:
    """Open a specialist's toolkit (its tool servers) and build its graph."""
    spec = SPECIALISTS[name]
    async with spec.open_toolkit(settings) as toolkit:
        graph = build_agent(
            settings, model, tools=toolkit.tools, system_prompt=toolkit.prompt,
            checkpointer=checkpointer, name=name, approvals=toolkit.approvals,
            after_approval=toolkit.after_approval, extra_middleware=toolkit.extra_middleware,
            planning=toolkit.planning)
        yield ServedAgent(name, spec.description, graph, list(toolkit.tools))


@asynccontextmanager
async def open_supervisor(
    settings: Settings, model: ModelSetup, checkpointer: Checkpointer, topology: Topology,
    local: Mapping[str, ServedAgent],
) -> AsyncIterator[ServedAgent]:
    """The supervisor over every specialist: remote where a URL is set, else in process.

    `local` are specialists already running here; a configured one that is not is opened for
    the supervisor's own use.
    """
    async with AsyncExitStack() as stack:
        agents: list[SubAgent] = []
        for name, spec in SPECIALISTS.items():
            if name in topology.urls:
                remote = RemoteSubAgent(name, topology.urls[name], description=spec.description,
                                        timeout_seconds=topology.timeout_seconds,
                                        api_key=topology.keys.get(name))
                stack.push_async_callback(remote.aclose)
                agents.append(remote)
                continue
            served = local.get(name)
            if served is None and name in topology.configured:
                try:
                    served = await stack.enter_async_context(
                        open_specialist(settings, name, model, checkpointer))
                except Exception as error:
                    log.error("The %s agent could not start (%s); the supervisor goes on "
                              "without it.", name, startup_failure(error))
            if served is not None:
                agents.append(InProcessSubAgent(name, spec.description, served.graph,
                                                timeout_seconds=topology.timeout_seconds))
        supervisor = build_supervisor(settings, model, agents, checkpointer=checkpointer,
                                      answer_budget_tokens=topology.answer_tokens,
                                      subagent_timeout_seconds=topology.timeout_seconds)
        yield ServedAgent(SUPERVISOR, "Pilothouse supervisor: routes platform questions to "
                          "the Argo CD, GitHub and DevOps agents and combines their answers.",
                          supervisor.graph, supervisor.tools)
