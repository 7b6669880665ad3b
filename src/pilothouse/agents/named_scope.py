"""A question that names exactly one application (or project, or repository) is about it.

The live inventory says whether a word of the question is an application's name; no word list
can (one world calls its apps `shop-api-blue`, another `shopfront`). When the question names
exactly one, the turn's first call is offered only the tools about one application, and each
such call is about that application, spelled as the inventory spells it: a name the model
has never seen is otherwise just a word to it, one to search for or to take for a project.
Which of the one-app tools answers the question (status, events, logs, history) stays the
model's choice, by what each tool's description says it answers. A repository named without
its owner is the one repository of that name the token can see: its tools get that owner,
not one the model filled in. A question naming one project and no application is about many
applications: its first call is offered the tools over many (the project's listings and the
search, since a project's name can be an ordinary word: "search", "default"), and a project
filter the model gives is spelled as the inventory spells it. Whether to filter by the project
stays the model's: "the full inventory" names no project called "inventory". A question
naming one ApplicationSet and no application is about the applications it generates, many
and none of them called by the set's name: its first call is the search for the set's name,
the one tool that takes it (measured on dev questions: "are the <set> apps healthy?" came as
`get_application(name=<set>)`, an application that does not exist; offered the listings as
well, as every set, or every healthy application of the fleet).

A later question that names none and points back at one ("when did it last get deployed?")
is about what the agent's own newest call was about: the agent keeps its thread, and one
resource that call named is the one "it" means; after a listing, "them" is its items, so no
other tool's call scopes anything (measured on a held-out dev follow-up:
after a status question about one app, "when did it last get deployed and what was in that
deploy" came as a listing of every ApplicationSet).

A question naming no application, or several, is left as it is: a typo is not a name here, so
the tools themselves answer it with the closest names ("did you mean"); several are the
model's to take one by one. Later calls of the turn see every tool again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.tool import ToolCall

from pilothouse.agents.inventory import LOOKUP_SECONDS, InventorySource, Mention, candidates
from pilothouse.agents.question_parts import points_elsewhere
from pilothouse.context.rewrite import (
    add_turn_note,
    first_call,
    question_text,
    referred_answers,
    with_revised_calls,
)
from pilothouse.errors import PilothouseError
from pilothouse.models.tokens import turn_start

log = logging.getLogger("pilothouse.agents.named_scope")


#: The arguments that name a resource, from the inventory's name for it.
Subject = Callable[[str], dict[str, Any]]


def by_name(name: str) -> dict[str, str]:
    """An application's tools name it by `name`."""
    return {"name": name}


def by_project(name: str) -> dict[str, str]:
    """A project's listings filter by `project`."""
    return {"project": name}


def by_query(name: str) -> dict[str, Any]:
    """A search for a group's resources searches every kind for its name: the group, and
    what it holds (measured: told the name was an ApplicationSet's, the local model searched
    the sets alone for "are the <set> apps healthy?")."""
    return {"query": name, "resource_types": None}


def by_owner_and_repo(name: str) -> dict[str, str]:
    """A repository's tools name it by `owner` and `repo` (`owner/repo` in the inventory)."""
    owner, _, repo = name.partition("/")
    return {"owner": owner, "repo": repo}


def acted_on_before(messages: Sequence[BaseMessage], tools: Collection[str]) -> str:
    """The names the agent's newest call before this turn was about, when it called `tools`:
    their string arguments, and an `owner/repo` pair as the inventory spells it; "" when that
    call was another tool's (a listing: "which of them" means its items) or there is none."""
    earlier = messages[:max(turn_start(messages), 0)]
    newest = next((m for m in reversed(earlier) if isinstance(m, AIMessage) and m.tool_calls),
                  None)
    calls = [c for c in newest.tool_calls if c["name"] in tools] if newest else []
    values = [v for c in calls for v in c["args"].values() if isinstance(v, str)]
    pairs = [f"{c['args']['owner']}/{c['args']['repo']}" for c in calls
             if isinstance(c["args"].get("owner"), str) and isinstance(c["args"].get("repo"), str)]
    return " ".join([*pairs, *values])


class OneNamedResource(AgentMiddleware):
    """When the question names exactly one resource of `kind` in `source`'s inventory, each
    call of a turn's first model call to `tools` is about it (its `subject` arguments; with
    `adds_subject=False` only the subject arguments the model gave are respelled), and with
    `narrow` that call is offered only `tools` and `offered_with`."""

    def __init__(self, source: InventorySource, kind: str, tools: Collection[str], *,
                 subject: Subject = by_name, narrow: bool = True,
                 offered_with: Collection[str] = (), adds_subject: bool = True,
                 timeout_seconds: float = LOOKUP_SECONDS) -> None:
        super().__init__()
        self.source = source
        self.kind = kind
        self.scoped_tools = frozenset(tools)
        self.subject = subject
        self.narrow = narrow
        self.offered = self.scoped_tools | frozenset(offered_with)
        self.adds_subject = adds_subject
        self.timeout_seconds = timeout_seconds

    @property
    def name(self) -> str:
        """One per kind: an agent scopes its applications and its projects separately."""
        return f"{type(self).__name__}[{self.kind}]"

    async def named(self, question: str) -> list[Mention]:
        """The resources of `kind` that `question` names, one mention per inventory name."""
        words = candidates(question)
        if not words:
            return []
        try:
            found = await asyncio.wait_for(self.source.resolve(words), self.timeout_seconds)
        except (PilothouseError, OSError, TimeoutError) as exc:
            log.debug("The inventory was not read (%s); the question keeps every tool.", exc)
            return []
        return list({m.name: m for m in found if m.kind == self.kind}.values())

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        if not first_call(request):
            return await handler(request)
        scoped = [t for t in request.tools if getattr(t, "name", None) in self.scoped_tools]
        named = await self.named(question_text(request)) if scoped else []
        if scoped and not named and (answers := referred_answers(request.messages)):
            # A question naming none ("what PRs came from its last deploy?") refers to what
            # the agents asked before it answered, passed along by the supervisor: one
            # resource named there is the one it means. Measured on dev questions: asked
            # for the commit an app runs, with Argo CD's answer showing the app's source
            # repository, the local model called an example's repository.
            named = await self.named(answers)
        if scoped and not named and points_elsewhere(question_text(request)):
            named = await self.named(acted_on_before(request.messages, self.scoped_tools))
        if len(named) != 1:
            return await handler(request)
        subject = self.subject(named[0].name)

        def about_it(call: ToolCall) -> ToolCall:
            args = call["args"]
            if call["name"] not in self.scoped_tools:
                return call
            given = subject if self.adds_subject else {
                key: value for key, value in subject.items() if args.get(key) is not None}
            return call if given.items() <= args.items() else {
                **call, "args": {**args, **given}}

        if self.narrow:
            request = request.override(tools=[t for t in request.tools if getattr(
                t, "name", None) in self.offered], tool_choice="required")
        # The model is told what the name is, for this call only: a note kept in the
        # conversation was copied into later questions, about other resources (measured).
        request = add_turn_note(request, f"Resolved against the live inventory: "
                                         f"{named[0].describe()}.")
        return with_revised_calls(await handler(request), about_it)
