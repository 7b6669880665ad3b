"""One factory builds every agent of a process, each with every layer, from Settings.

Every door gets its agents here: the CLI (`ask`, `chat`, `tui`), the REST API and web UI,
`pilothouse serve` (A2A), the evaluation and the demo. So no door can forget a layer: each graph
gets the memory guard (one budget for the process), the context-safety layers, observability,
the model timeout and the toolkit's approval gates, through `runtime.builder`, the only place
that compiles an agent. `open_agent_factory` also opens what the agents share (the model, the
checkpointer) and samples the memory budget while the factory is open.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from pilothouse.agents.example_bank import BANKS, TOOL_ONLY_BANKS
from pilothouse.agents.examples import (
    ExampleSelector,
    FewShotMiddleware,
    MiniLMEmbedder,
    bank_intents,
)
from pilothouse.agents.inventory import inventory_of
from pilothouse.agents.paging import NextPageMiddleware
from pilothouse.agents.registry import SPECIALISTS, Topology, startup_failure
from pilothouse.agents.supervisor import SUPERVISOR, SUPERVISOR_DESCRIPTION, supervisor_toolkit
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError, UserInputError
from pilothouse.models.registry import ModelSetup, setup_model
from pilothouse.observability.memory import MemoryBudget, MemoryMonitor
from pilothouse.runtime.builder import build_layered_agent
from pilothouse.runtime.checkpoint import open_checkpointer
from pilothouse.runtime.handle import AgentHandle
from pilothouse.runtime.held_contexts import Opening, held_open
from pilothouse.runtime.starting_subagent import Started, StartingSubAgent
from pilothouse.runtime.subagent import InProcessSubAgent, SubAgent

log = logging.getLogger("pilothouse.agents")

GENERAL = "pilothouse"
GENERAL_PROMPT = (
    "You are Pilothouse, an assistant for platform engineers (Argo CD, GitHub, Kubernetes, "
    "CI/CD, shell). Answer briefly and precisely. When you do not know, say so and say what "
    "the user can check."
)
#: What `--agent` accepts: "auto" (Argo CD when ARGOCD_URL is set, else a general assistant
#: without tools), any specialist, or the supervisor over every configured one.
AGENT_CHOICES: tuple[str, ...] = ("auto", *SPECIALISTS, SUPERVISOR)

ProgressCallback = Callable[[str, int, int], None]


class AgentFactory:
    """Builds agents over one model, one checkpointer and one memory budget.

    `memory` defaults to PILOTHOUSE_MEMORY_LIMIT (or the container's limit) at
    PILOTHOUSE_MEMORY_HIGH_WATER; `topology` to PILOTHOUSE_AGENTS_* (which agents are remote).
    """

    def __init__(self, settings: Settings, model: ModelSetup, checkpointer: Checkpointer, *,
                 memory: MemoryBudget | None = None, topology: Topology | None = None) -> None:
        self.settings = settings
        self.model = model
        self.checkpointer = checkpointer
        self.memory = memory or MemoryBudget.detect(settings.memory_limit_bytes,
                                                    settings.memory_high_water)
        self.topology = topology or Topology.from_settings(settings)
        #: Samples `memory` while `open_agent_factory` holds the factory open.
        self.monitor: MemoryMonitor | None = None
        #: Whether the supervisor starts a specialist only when it first asks it (a command
        #: that answers one question) rather than at once (a server: its first questions
        #: should not wait, and a specialist that cannot start shows in the log at start-up).
        self.specialists_on_demand = False
        #: One embedding model for every agent's few-shot examples, loaded on first use.
        self.embedder = MiniLMEmbedder()

    def warm_examples(self) -> None:
        """Embed every example bank in the background, if few-shot examples are on. A command
        that answers one question calls this before its tool servers start: the wait for them
        covers the embedding model's load (half a second of the first model call, measured)."""
        if self.settings.layer_enabled("few_shot"):
            self.embedder.warm_in_background(
                [text for bank in BANKS.values() for text in bank_intents(bank)])

    def build(self, toolkit: Toolkit, description: str = "") -> AgentHandle:
        """The agent `toolkit` describes, with every layer `settings` enable."""
        # "Next page" repeats the newest listing's call for that page, before any hint or
        # grounding sees it (an agent without paged tools never finds one to repeat).
        extra = [NextPageMiddleware(toolkit.inventory), *toolkit.extra_middleware]
        if self.settings.layer_enabled("few_shot") and toolkit.name in BANKS:
            selector = ExampleSelector(BANKS[toolkit.name], [t.name for t in toolkit.tools],
                                       self.embedder)
            extra.append(FewShotMiddleware(
                selector, with_arguments=toolkit.name not in TOOL_ONLY_BANKS))
        built = build_layered_agent(
            self.settings, self.model, tools=toolkit.tools, system_prompt=toolkit.prompt,
            checkpointer=self.checkpointer, name=toolkit.name, approvals=toolkit.approvals,
            after_approval=toolkit.after_approval, extra_middleware=extra,
            planning=toolkit.planning, per_tool_timeouts=toolkit.per_tool_timeouts or None,
            memory_budget=self.memory)
        return AgentHandle(toolkit.name, description, built.graph, self.model,
                           list(toolkit.tools), built.middleware)

    def supervisor_over(self, agents: Sequence[SubAgent]) -> AgentHandle:
        """The supervisor over `agents` (in process or remote); it answers about the domain of
        a specialist not configured here itself, naming the setting that adds it."""
        unconfigured = {name: (SPECIALISTS[name].description, why)
                        for name, why in self.topology.left_out().items()}
        toolkit = supervisor_toolkit(self.model, agents,
                                     answer_budget_tokens=self.topology.answer_tokens,
                                     subagent_timeout_seconds=self.topology.timeout_seconds,
                                     workspace=self.settings.workspace,
                                     unconfigured=unconfigured,
                                     inventory=inventory_of(self.settings,
                                                            [a.name for a in agents]))
        return self.build(toolkit, SUPERVISOR_DESCRIPTION)

    @asynccontextmanager
    async def open_specialist(self, name: str) -> AsyncIterator[AgentHandle]:
        """Start a specialist's tool servers and build it; they stop when the context ends."""
        spec = SPECIALISTS[name]
        async with spec.open_toolkit(self.settings) as toolkit:
            yield self.build(toolkit, spec.description)

    @asynccontextmanager
    async def open_supervisor(
        self, local: Mapping[str, AgentHandle] | None = None,
    ) -> AsyncIterator[AgentHandle]:
        """The supervisor over every specialist: remote where a URL is set, else in process.

        `local` are specialists already running here; a configured one that is not is opened
        for the supervisor's own use, and one that fails to start answers as unavailable, with
        the reason (logged).
        """
        local = local or {}
        topology = self.topology
        # The specialists to start here start in the background (or when first asked): the
        # supervisor's first model call needs only their names, and each call to one waits
        # until it is ready (`StartingSubAgent`). On two cores, tool servers starting beside
        # the first generation slowed its first token from 0.1 s to 2 s (measured), so a
        # command that answers one question starts only the specialists it asks.
        starting = {name: partial(self.open_specialist, name) for name in SPECIALISTS
                    if name not in topology.urls and name not in local
                    and name in topology.configured}
        async with AsyncExitStack() as stack:
            openings = await stack.enter_async_context(
                held_open(starting, on_demand=self.specialists_on_demand))
            agents: list[SubAgent] = []
            for name, spec in SPECIALISTS.items():
                if name in topology.urls:
                    # Imported here: the A2A client costs half a second of every command
                    # that has no remote agent.
                    from pilothouse.a2a.remote import RemoteSubAgent

                    remote = RemoteSubAgent(name, topology.urls[name],
                                            description=spec.description,
                                            timeout_seconds=topology.timeout_seconds,
                                            api_key=topology.keys.get(name))
                    stack.push_async_callback(remote.aclose)
                    agents.append(remote)
                elif (handle := local.get(name)) is not None:
                    agents.append(InProcessSubAgent(name, spec.description, handle.graph,
                                                    timeout_seconds=topology.timeout_seconds))
                elif name in openings:
                    agents.append(StartingSubAgent(
                        name, spec.description, _started(name, openings[name]),
                        timeout_seconds=topology.timeout_seconds))
            yield self.supervisor_over(agents)

    @asynccontextmanager
    async def open_agent(self, choice: str = "auto") -> AsyncIterator[AgentHandle]:
        """The agent a person talks to from the CLI, TUI, REST API or demo (`--agent`)."""
        if check_choice(choice) == "auto":
            choice = "argocd" if self.settings.argocd_url else GENERAL
        if choice == "argocd" and not self.settings.argocd_url:
            raise ConfigurationError("The Argo CD agent needs ARGOCD_URL.",
                                     hint="Set ARGOCD_URL and ARGOCD_TOKEN, or run "
                                          "`pilothouse sandbox argocd` for a sandbox.")
        if choice == GENERAL:
            yield self.build(Toolkit(name=GENERAL, prompt=GENERAL_PROMPT),
                             "A general assistant for platform engineers, without tools.")
        elif choice == SUPERVISOR:
            async with self.open_supervisor() as supervisor:
                yield supervisor
        else:
            async with self.open_specialist(choice) as specialist:
                yield specialist


def _started(name: str, opening: Opening[AgentHandle]) -> Started:
    """How a specialist starting in the background becomes its graph, or the reason it could
    not start (logged once, when it is first needed)."""
    logged = False

    async def started() -> CompiledStateGraph[Any, Any, Any, Any] | str:
        nonlocal logged
        outcome = await opening.outcome()
        if not isinstance(outcome, Exception):
            return outcome.graph
        reason = startup_failure(outcome)
        if not logged:
            logged = True
            log.error("The %s agent could not start (%s); the supervisor goes on without it.",
                      name, reason)
        return reason

    return started


@asynccontextmanager
async def open_agent_factory(
    settings: Settings,
    *,
    model: ModelSetup | None = None,
    topology: Topology | None = None,
    progress: ProgressCallback | None = None,
) -> AsyncIterator[AgentFactory]:
    """The factory over `settings`' model and checkpointer, closed (with them) on exit.

    While it is open, a monitor samples the memory budget every PILOTHOUSE_MEMORY_SAMPLE_SECONDS
    (logging a crossing of the high-water mark and exporting the budget to /metrics).
    """
    if model is None:
        model = setup_model(settings, progress=(
            lambda done, total: progress("Preparing the local model (once)", done, total)
        ) if progress else None)
    async with open_checkpointer(settings) as checkpointer:
        factory = AgentFactory(settings, model, checkpointer, topology=topology)
        factory.monitor = MemoryMonitor(factory.memory, settings.memory_sample_seconds)
        try:
            async with factory.monitor:
                yield factory
        finally:
            await asyncio.to_thread(factory.embedder.finish_warming)


@asynccontextmanager
async def open_configured_agent(
    settings: Settings,
    *,
    agent: str = "auto",
    model: ModelSetup | None = None,
    progress: ProgressCallback | None = None,
) -> AsyncIterator[AgentHandle]:
    """The factory and the one agent `agent` names, for a door that serves one agent."""
    check_choice(agent)  # before the model loads
    async with open_agent_factory(settings, model=model, progress=progress) as factory, \
            factory.open_agent(agent) as handle:
        yield handle


def check_choice(agent: str) -> str:
    """`agent` when `--agent` accepts it (checked before anything is opened)."""
    if agent not in AGENT_CHOICES:
        raise UserInputError(f"Unknown agent {agent!r}.",
                             hint="Choose one of " + ", ".join(AGENT_CHOICES) + ".")
    return agent
