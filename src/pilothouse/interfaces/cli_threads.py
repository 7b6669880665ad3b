"""Which agent a CLI conversation belongs to: one thread is one agent's or the supervisor's.

The CLI talks to the supervisor (over every configured agent) unless `--agent` names a
specialist. The conversation list the API, web UI and TUI show (`ConversationRegistry`) records
the agent of each thread the first time it is used, so a thread is never answered by two
agents: continuing it with another `--agent` is refused with the command that works, and
continuing it without `--agent` goes to its own agent.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from pilothouse.agents.registry import SPECIALISTS
from pilothouse.agents.supervisor import SUPERVISOR
from pilothouse.config import Settings
from pilothouse.interfaces.api.registry import THREAD_ID, ConversationRegistry, new_thread_id
from pilothouse.interfaces.cli_common import CommandLineMisuse

#: `--agent auto` is the default: the supervisor, which routes to every configured agent.
AUTO = "auto"


def agent_names() -> tuple[str, ...]:
    """What `--agent` accepts besides `auto`: every specialist, and the supervisor."""
    return (*SPECIALISTS, SUPERVISOR)


def chosen_agent(requested: str | None) -> str | None:
    """`--agent` as an agent name (`auto` is the supervisor); None when it was not given."""
    if requested is None:
        return None
    if requested in (AUTO, SUPERVISOR):
        return SUPERVISOR
    if requested in SPECIALISTS:
        return requested
    raise CommandLineMisuse(
        f"Unknown agent {requested!r}.",
        hint="Choose one of " + ", ".join(agent_names()) + " (the default, also called auto).")


def checked_thread(thread: str | None) -> str | None:
    """`--thread` when it is a valid id (the shape the API accepts too)."""
    if thread is not None and not THREAD_ID.match(thread):
        raise CommandLineMisuse(
            f"{thread!r} is not a thread id.",
            hint="Use the id a previous command printed (letters, digits, '-', '_', '.', ':'; "
                 "at most 64), or leave --thread out to start a new conversation.")
    return thread


def command_line(*args: str) -> str:
    """`pilothouse ARGS...`, quoted so that it can be pasted into a shell as it is."""
    return shlex.join(("pilothouse", *args))


def _registry_file(settings: Settings) -> Path:
    # Imported here: the API's server module is heavier than a CLI command needs up front.
    from pilothouse.interfaces.api.server import registry_path

    return registry_path(settings)


def _who(agent: str) -> str:
    return "the supervisor" if agent == SUPERVISOR else f"the {agent} agent"


async def claim_thread(settings: Settings, thread: str | None, requested: str | None, *,
                       command: str, rest: Sequence[str] = (), question: str = "",
                       ) -> tuple[str, str]:
    """(thread id, agent) for a CLI command, the thread recorded as that agent's.

    `requested` is `chosen_agent(--agent)`; `command` and `rest` (its other arguments) build
    the command lines of the refusal when the thread belongs to another agent.
    """
    thread_id = thread or new_thread_id()
    async with ConversationRegistry.open(_registry_file(settings)) as registry:
        record = await registry.get(thread_id) if thread else None
        # A thread of an agent the CLI does not offer (none recorded yet) is open to any.
        recorded = record.agent if record and record.agent in agent_names() else ""
        if recorded and requested and requested != recorded:
            same = command_line(command, "--thread", thread_id, *rest)
            new = command_line(command, "--agent", requested, *rest)
            raise CommandLineMisuse(
                f"Thread {thread_id} belongs to {_who(recorded)}, not to {_who(requested)}: "
                "one conversation is one agent's.",
                hint=f"Continue it with `{same}`, or start a new conversation with `{new}`.")
        agent = recorded or requested or SUPERVISOR
        await registry.touch(thread_id, question, agent=agent)
    return thread_id, agent


async def note_question(settings: Settings, thread_id: str, question: str, agent: str) -> None:
    """Mark the conversation as used now (its title comes from its first question)."""
    async with ConversationRegistry.open(_registry_file(settings)) as registry:
        await registry.touch(thread_id, question, agent=agent)
