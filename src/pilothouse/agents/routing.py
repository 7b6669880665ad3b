"""Routing: the supervisor's first call of a turn sees only the agents the question names.

Measured with `pilothouse eval` on the local model: asked "Show me production applications",
the supervisor called all three agents at once; they queued for the one local model, the Argo
CD agent ran out of time, and the answer was invented. What a question names says which agents
it needs: the resources it names, resolved against the live inventories, and the words of each
domain ("PR", "workflow" -> GitHub; "app", "sync", "degraded" -> Argo CD; "run", "file", "code"
-> DevOps). Both are read once per turn into its request frame (`agents.request_frame`), and
the supervisor asks exactly those agents, one after the other; a question that names none
leaves the choice of agent to the model.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage

from pilothouse.agents.answers_note import with_answers_before, with_answers_so_far
from pilothouse.agents.direct_answer import DIRECT
from pilothouse.agents.inventory import Inventory
from pilothouse.agents.paging import PAGE_LINE, asks_for_a_page
from pilothouse.agents.passthrough import awaits_approval
from pilothouse.agents.question_parts import joined_words, points_elsewhere, split_by_agent
from pilothouse.agents.recall import earlier_words, recalled_mentions
from pilothouse.agents.request_frame import FrameBuilder, RequestFrame
from pilothouse.agents.shell_intent import FILE_PATH
from pilothouse.context.rewrite import (
    TURN_NOTE,
    RequestRewriteMiddleware,
    before_notes,
    calling,
    final_message,
    first_call,
    question_text,
    with_revised_calls,
)
from pilothouse.models.tokens import turn_messages, turn_start
from pilothouse.runtime.answer_views import shown_text

#: Words (whole, any case, singular or plural) that put a question in an agent's domain.
DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "argocd": ("argo", "argocd", "argo cd", "application", "app", "applicationset", "appset",
               "sync", "synced", "outofsync", "out of sync", "degraded", "healthy", "health",
               "progressing", "cluster", "project", "gitops", "rollback",
               # Issue 18: change safety (not bare "deploy" or "history": workspace paths
               # like deploy/k8s and "git history" are DevOps questions).
               "deploy history", "deployment history", "deploys", "deployed", "roll back",
               "rolled back", "diff", "revision", "live state", "desired state"),
    "github": ("github", "pull request", "pr", "review", "reviewer", "workflow", "ci",
               "actions", "run logs", "issue", "merge", "merged"),
    "devops": ("command", "run", "shell", "file", "code", "codebase",
               "module", "function", "class", "explain", "grep", "ls", "cat", "git log",
               "makefile", "workspace", "directory", "folder", "script", "plan", "readme",
               "changelog", "source", "restart", "delete", "rm"),
}


#: Words that point back at what the person said before ("I said", and its question's form,
#: "did I say"): a question saying them and naming no agent's domain is answered from the
#: conversation (`DIRECT`).
POINTS_BACK = re.compile(
    r"\bI\s+(?:said|say|mentioned|mention|named|name|gave|give|told|tell|noted|note|pasted|"
    r"paste|shared|share)\b|"
    r"\b(?:earlier|at\s+the\s+(?:very\s+)?(?:start|beginning)|my\s+first\s+message|"
    r"(?:we|you)\s+(?:discussed|noted|talked\s+about)|(?:this|our)\s+(?:conversation|chat))\b",
    re.IGNORECASE)

#: "#37", "owner/repo#37", "PR 37", "issue 37": an issue or a pull request cited by its number,
#: in GitHub's notation or with its kind's name, in any world. Measured on held-out dev
#: questions: "who put up <name> #37?" and "has <name> #43 been reviewed?" named a repository
#: that is also an ApplicationSet, and asked Argo CD as well; "whos blocking pr 46 on <repo>?"
#: was answered with the repository's review queue, which does not say.
GITHUB_REFERENCE = re.compile(
    r"(?<![&#])#\d+\b|\b(?:pr|pull\s+request|issue)\s*#?\s*\d+\b", re.IGNORECASE)

#: A follow-up about the items an agent just listed ("the oldest of those", "which of
#: them ..."): measured, the local supervisor answered one itself, with an empty log tail.
_ITEMS_SHOWN = re.compile(
    r"(?<![\w-])(?:(?:of|from|among|in)\s+(?:those|these|them|that\s+list)|"
    r"(?:the\s+)?(?:newest|latest|oldest|first|second|third|last|top)\s+(?:one|of\s+(?:those|"
    r"these|them)))(?![\w-])", re.IGNORECASE)

#: Domain words that name the domain only in one use. "run" is a command's verb ("run the
#: tests", "run `ls`"), not what an app or a cluster does: a question of how many apps a
#: cluster runs sent a recalled wall of text to the DevOps agent as a 12-step plan (measured).
_WORD_USES = {"run": r"run(?=\s+(?!on\b|in\b|at\b|for\b)[\w`'\"./-])"}


def _spelled(word: str) -> str:
    """`word` as a regex: singular or plural, any space between its words."""
    return re.escape(word).replace(r"\ ", r"\s+") + "s?"


def _pattern(words: Sequence[str]) -> re.Pattern[str]:
    """Any of `words` as a whole word, singular or plural ("app", "apps")."""
    alternatives = sorted((_WORD_USES.get(w) or _spelled(w) for w in words),
                          key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?![\w-])", re.IGNORECASE)


def _first_question(messages: Sequence[BaseMessage]) -> bool:
    """Whether the conversation so far is its first question (and this turn's work)."""
    return sum(isinstance(m, HumanMessage) for m in messages) == 1


class DomainRouter:
    """Which agents a text names by the words of each agent's domain; a text naming no domain
    but a file by its path ("deploy/k8s/deployment.yaml") names the DevOps agent, which reads
    files (measured: "show me <that file>: which image does it run?" went to Argo CD, which
    took "deploy/k8s" for an application).

    A domain word that another agent's description also uses (`descriptions`: what each agent
    covers, as the supervisor's prompt and the agent cards say it) is shared: a pull request
    has "files" as the workspace has. Shared words still name their domain, except where the
    caller asks for the words only one domain uses (`request_frame.RequestFrame.agents_for`).
    """

    def __init__(self, domains: Mapping[str, Sequence[str]],
                 descriptions: Mapping[str, str] | None = None) -> None:
        descriptions = descriptions or {}
        self.patterns = {agent: _pattern(words) for agent, words in domains.items() if words}
        distinct = {agent: [w for w in words if not any(
            _described(w, text) for other, text in descriptions.items() if other != agent)]
            for agent, words in domains.items()}
        self.distinct = {agent: _pattern(words) for agent, words in distinct.items() if words}

    def words_at(self, text: str, shared: bool = True) -> dict[str, int]:
        """Each agent whose domain words occur in `text`, with where they first occur;
        without `shared`, only the words no other agent's description uses."""
        patterns = self.patterns if shared else self.distinct
        found = {agent: match.start() for agent, pattern in patterns.items()
                 if (match := pattern.search(text)) is not None}
        if "github" in self.patterns and (reference := GITHUB_REFERENCE.search(text)):
            found["github"] = min(found.get("github", reference.start()), reference.start())
        if not found and "devops" in self.patterns and (path := FILE_PATH.search(text)):
            return {"devops": path.start()}
        return found


def _described(word: str, description: str) -> bool:
    """Whether `description` uses `word`, singular or plural ("file" in "files changed")."""
    spelled = _spelled(word.removesuffix("s"))
    return re.search(rf"(?<![\w-]){spelled}(?![\w-])", description, re.IGNORECASE) is not None


def _turn_key(request: ModelRequest) -> str:
    """Which turn `request` belongs to: its question message (id and text)."""
    index = turn_start(request.messages)
    message = request.messages[index] if index >= 0 else None
    return f"{getattr(message, 'id', None)}:{question_text(request)}"


class RoutingHintMiddleware(RequestRewriteMiddleware):
    """Has the supervisor ask each agent the question names, one call at a time.

    While a named agent has not been asked this turn, a call is offered only the named agents
    still to ask, and must call one; once all of them have answered, the model writes its
    answer without another call (an agent that failed or waits for an approval leaves the
    choice free, as does a question that names no agent; one naming a resource must ask some
    agent).
    One call at a time, because the local model makes one tool call per turn: a question
    that names Argo CD and GitHub got only the first agent's half of the answer otherwise.

    On a conversation's first turn, a question that names one agent reaches it in the person's
    own words, with no model call (`answer_without_model`): there is nothing earlier to
    resolve, and the local model's rewording lost or added detail (measured: a request for a
    diff was passed on as a question about "sync status, health status, and any relevant
    events or pod logs", and a request to restart a Deployment's pods as a rollout of the
    application).
    Later turns keep the model's wording, which can name what "it" refers to.
    """

    def __init__(self, router: DomainRouter, inventory: Inventory | None = None, *,
                 workspace_agent: str | None = None, status_words: Sequence[str] = ()) -> None:
        super().__init__()
        self.router = router
        self.frames = FrameBuilder(router.words_at, inventory, workspace_agent)
        self.inventory = inventory
        self.workspace_agent = workspace_agent
        self.status_words = _pattern(status_words) if status_words else None

    def _names_no_other(self, question: str) -> bool:
        """Whether a question whose frame names no agent names nothing else another agent's
        facts are reached by: no name the person typed that no inventory holds
        (`jdoe-oncall`, `#37`: the model reads whose it is), and no word of a status those
        agents filter by ("broken", "red": a question about everything's state)."""
        return not (joined_words(question) or GITHUB_REFERENCE.search(question)
                    or (self.status_words is not None and self.status_words.search(question)))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        # The turn's names are resolved once, before its first call needs them (the sync
        # path, which no door uses, routes by the words alone).
        if turn_start(request.messages) >= 0:
            key, question = _turn_key(request), question_text(request)
            follows_up = not _first_question(request.messages)
            frame = await self.frames.build(key, question, follows_up)
            if (follows_up and first_call(request) and self.inventory is not None
                    and not frame.agents and not any(c.isdigit() for c in question)
                    and not POINTS_BACK.search(question)):
                # A later question naming nothing to act on (no agent's word, resource or
                # number) points back at what the person named before: the agent of what the
                # earlier words it points at name (recall's sentences) is the one to ask. A
                # question about what was said stays the conversation's (`POINTS_BACK`).
                # Measured on held-out dev long conversations: "back to that manifest
                # security asked about. what uid does it run as ...?" and "ok the token thing
                # the partner is blaming ..." were asked of Argo CD, chosen by the model, when
                # the first message had named the workspace's file and function.
                self.frames.refer(key, await recalled_mentions(
                    question, earlier_words(request.messages), self.inventory))
        return await super().awrap_model_call(request, handler)

    def frame(self, request: ModelRequest) -> RequestFrame:
        """The turn's request frame."""
        return self.frames.get(_turn_key(request), question_text(request),
                               not _first_question(request.messages))

    def _named(self, request: ModelRequest) -> list[str]:
        """The agents the turn's question names: by the resources it names and its words."""
        return self.frame(request).agents

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        messages = request.messages
        if turn_start(messages) < 0 or not request.tools:
            return request
        turn = turn_messages(messages)
        asked = {call["name"] for m in turn if isinstance(m, AIMessage) for call in m.tool_calls}
        named = {f"ask_{agent}" for agent in self._named(request)}
        pending = [t for t in request.tools if getattr(t, "name", None) in named - asked]
        # A resource an inventory holds names its agent: it is looked up, never answered from
        # memory (measured: the local supervisor answered a request for an app's logs itself).
        if pending:
            return request.override(tools=pending, tool_choice="required")
        direct = [t for t in request.tools if getattr(t, "name", None) == DIRECT]
        workspace = [t for t in request.tools
                     if getattr(t, "name", None) == f"ask_{self.workspace_agent}"]
        if (workspace and not named and _first_question(messages) and first_call(request)
                and self._names_no_other(question_text(request))):
            # A first question naming nothing the other agents' facts are reached by (their
            # resources, kinds and statuses, all of which the frame reads) asks about the
            # workspace in everyday words (a setting's default, a timeout, a count of tests),
            # or is the supervisor's own to answer ("hello", general knowledge). Measured on
            # held-out dev questions with every agent offered: 7 of 10 such workspace
            # questions went to Argo CD or GitHub, and 7 to 9 of 10 with the workspace's
            # agent offered first, described otherwise or named otherwise; offered it and the
            # direct answer alone, 10 of 10 reached it, and general questions were answered
            # directly as often as before (3 of 7 either way).
            return request.override(tools=[*direct, *workspace], tool_choice="required")
        if (not named and not asked and direct and turn_start(messages) > 0
                and POINTS_BACK.search(question_text(request))):
            # A question about what was said here that names no agent's domain or resource
            # is answered from this conversation (its summary included), which no agent sees.
            # Measured: asked for a ticket id given at the start, the local supervisor asked
            # the Argo CD agent, which searched its clusters for "incident".
            return request.override(tool_choice="required", tools=direct)
        results = [m for m in turn if isinstance(m, ToolMessage)]
        if named and isinstance(messages[-1], ToolMessage) and all(
                r.status != "error" and not awaits_approval(r) for r in results):
            # Every named agent answered: the model writes the lead that connects them.
            # Offered the agents again, the local model read their answers once to decide
            # not to ask anyone and again to write (~20 s of a two-agent case).
            return request.override(tool_choice="none")
        return request

    def _follow_up_agent(self, request: ModelRequest) -> str | None:
        """The agent whose answer the question follows up, when it names no agent: another
        page of a paged answer, or one of the items the answer listed."""
        question = question_text(request)
        if self._named(request):
            return None
        paging = asks_for_a_page(question)
        if not paging and not _ITEMS_SHOWN.search(question):
            return None
        earlier = request.messages[:max(turn_start(request.messages), 0)]
        answer = next((m for m in reversed(earlier) if isinstance(m, ToolMessage)
                       and (m.name or "").startswith("ask_")), None)
        if answer is None or (paging and not PAGE_LINE.search(shown_text(answer) or "")):
            return None
        return (answer.name or "").removeprefix("ask_")

    def answer_without_model(self, request: ModelRequest) -> ModelResponse | None:
        """The agent call the question decides, made without the model; None when the model
        has something to choose.

        Three questions decide it: a conversation's first question naming one agent (asked
        in the person's words); a first question naming several (each asked its own part, in
        turn: `question_parts`); and a follow-up naming no agent that asks for another page
        of what an agent showed, or about one of the items it listed (that agent keeps the
        conversation of its own tool calls, so it knows which listing is meant). A model
        call would decide nothing and cost seconds of the answer (measured: ~5 s to read the
        supervisor's prompt and write the call on two cores).
        """
        messages = request.messages
        offered = {getattr(t, "name", None) for t in request.tools}
        asked = [call["name"] for m in turn_messages(messages) if isinstance(m, AIMessage)
                 for call in m.tool_calls]
        frame = self.frame(request)
        question, named = question_text(request), frame.agents
        if _first_question(messages) and len(named) > 1:
            parts = split_by_agent(question, named, frame.agents_for, frame.names_in)
            agent = next((a for a in named if f"ask_{a}" not in asked), None)
            part = parts[agent] if agent else question
            # A part that says "its" needs what the parts before it found: its own clause,
            # or the whole question where that clause names nothing ("what PRs are open on
            # its repo?"). A whole question that names no resource ("... plan it first")
            # says "it" of itself, and needs no more.
            if agent and points_elsewhere(part) and (
                    part != question or frame.names_resource):
                part = with_answers_so_far(part, messages)
            question = part
        elif asked:
            return None
        else:
            agent = named[0] if _first_question(messages) and named \
                else self._follow_up_agent(request)
        if agent is None or f"ask_{agent}" not in offered:
            return None
        return calling(f"ask_{agent}", {"question": question})

    def revise(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """The model's questions to agents without any note: notes are code's, written for
        one call. Measured: the local supervisor copied an earlier call's note into the next
        question, which then named an application the person had not asked about.

        A conversation's first question that the model routes to one agent reaches it in the
        person's own words, as a question naming its agent does (`answer_without_model`):
        choosing the agent was all there was to decide. Measured on held-out dev questions:
        "whats broken rn across everything?" was passed on as "What is the status of the
        applications deployed on the clusters?", and open tickets of a person across the
        organisation as open pull requests of a repository named after that person."""
        final = final_message(response)
        asks = [c for c in (final.tool_calls if final else []) if c["name"].startswith("ask_")]
        first = _first_question(request.messages)
        in_own_words = len(asks) == 1 and first and first_call(request)
        # A later question that points back at what it does not name ("that commit") carries
        # the answers it points at, for an agent that did not give them (`answers_note`).
        pointing = not first and points_elsewhere(question_text(request)) \
            and not self.frame(request).names_resource

        def revised(call: ToolCall) -> ToolCall:
            question = call["args"].get("question")
            if not call["name"].startswith("ask_") or not isinstance(question, str):
                return call
            if in_own_words:
                question = question_text(request)
            elif TURN_NOTE in question:
                question = before_notes(question)
            elif not pointing:
                return call
            if pointing:
                question = with_answers_before(question, request.messages,
                                               call["name"].removeprefix("ask_"))
            return {**call, "args": {**call["args"], "question": question}}
        return with_revised_calls(response, revised)

