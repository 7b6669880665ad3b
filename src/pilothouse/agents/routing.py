"""Routing hints: the supervisor's first call of a turn sees only the agents the question names.

Measured with `pilothouse eval` on the local model: asked "Show me production applications",
the supervisor called all three agents at once; they queued for the one local model, the Argo
CD agent ran out of time, and the answer was invented. A question's words tell its domain
plainly enough ("PR", "workflow" -> GitHub; "app", "sync", "degraded" -> Argo CD; "run",
"file", "code" -> DevOps), so the supervisor asks exactly those agents, one after the other;
a question that names none leaves the choice to the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage

from pilothouse.context.rewrite import (
    RequestRewriteMiddleware,
    final_message,
    question_text,
    with_final,
)
from pilothouse.models.tokens import message_text

#: Words (whole, any case) that put a question in an agent's domain.
DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "argocd": ("argo", "argocd", "argo cd", "application", "applications", "app", "apps",
               "applicationset", "applicationsets", "appset", "sync", "synced", "outofsync",
               "out of sync", "degraded", "healthy", "health", "progressing", "cluster",
               "clusters", "project", "projects", "gitops", "rollback",
               # Issue 18: change safety (not bare "deploy" or "history": workspace paths
               # like deploy/k8s and "git history" are DevOps questions).
               "deploy history", "deployment history", "deploys", "deployed", "roll back",
               "rolled back", "diff", "revision", "revisions", "live state", "desired state"),
    "github": ("github", "pull request", "pull requests", "pr", "prs", "review", "reviews",
               "reviewer", "reviewers", "workflow", "workflows", "ci", "actions", "run logs",
               "issue", "issues", "merge", "merged", "infra-live"),
    "devops": ("command", "commands", "run", "shell", "file", "files", "code", "codebase",
               "module", "function", "class", "explain", "grep", "ls", "cat", "git log",
               "makefile", "workspace", "directory", "folder", "script", "plan", "readme",
               "changelog", "source", "restart", "delete", "rm"),
}


def _pattern(words: Sequence[str]) -> re.Pattern[str]:
    alternatives = sorted((re.escape(w).replace(r"\ ", r"\s+") for w in words), key=len,
                          reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?![\w-])", re.IGNORECASE)


class DomainRouter:
    """Which agents a question names, by the words of each agent's domain."""

    def __init__(self, domains: Mapping[str, Sequence[str]]) -> None:
        self.patterns = {agent: _pattern(words) for agent, words in domains.items() if words}

    def agents_for(self, question: str) -> list[str]:
        """The agents whose domain words occur in `question` (empty: none is named)."""
        return [agent for agent, pattern in self.patterns.items() if pattern.search(question)]


class RoutingHintMiddleware(RequestRewriteMiddleware):
    """Has the supervisor ask each agent the question names, one call at a time.

    While a named agent has not been asked this turn, a call is offered only the named agents
    still to ask, and must call one; after that every agent is offered and the choice is free.
    One call at a time, because the local model makes one tool call per turn: a question
    that names Argo CD and GitHub got only the first agent's half of the answer otherwise.

    On a conversation's first turn, a question that names one agent reaches it in the person's
    own words: there is nothing earlier to resolve, and the local model's rewording lost or
    added detail (measured: "Diff payments-api-production against git" was passed on as a
    question about "sync status, health status, and any relevant events or pod logs", and a
    request to roll a Deployment's pods as "argo cd rollout notifications-sms-dev.<same>").
    Later turns keep the model's wording, which can name what "it" refers to.
    """

    def __init__(self, router: DomainRouter) -> None:
        super().__init__()
        self.router = router

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        messages = request.messages
        start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)),
                    default=-1)
        if start < 0 or not request.tools:
            return request
        asked = {call["name"] for m in messages[start + 1:] if isinstance(m, AIMessage)
                 for call in m.tool_calls}
        named = {f"ask_{agent}" for agent in self.router.agents_for(message_text(
            messages[start]))}
        pending = [t for t in request.tools if getattr(t, "name", None) in named - asked]
        return request.override(tools=pending, tool_choice="required") if pending else request

    def revise(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """`response`, its call of the one named agent given the question as it was asked."""
        messages = request.messages
        humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
        final = final_message(response)
        if (len(humans) != 1 or final is None or not final.tool_calls
                or any(isinstance(m, AIMessage) for m in messages[humans[0] + 1:])):
            return response
        question = question_text(request)
        named = self.router.agents_for(question)
        if len(named) != 1:
            return response
        return with_final(response, tool_calls=[
            {**call, "args": {**call["args"], "question": question}}
            if call["name"] == f"ask_{named[0]}" else call for call in final.tool_calls])
