"""Routing hints: the supervisor's first call of a turn sees only the agents the question names.

Measured with `pilothouse eval` on the local model: asked "Show me production applications",
the supervisor called all three agents at once; they queued for the one local model, the Argo
CD agent ran out of time, and the answer was invented. A question's words tell its domain
plainly enough ("PR", "workflow" -> GitHub; "app", "sync", "degraded" -> Argo CD; "run",
"file", "code" -> DevOps), so the first call is offered just those agents' tools. A question
that names none, or names several domains, keeps the choice open among them; later calls of
the turn see every agent again.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import HumanMessage

from pilothouse.models.tokens import message_text

#: Words (whole, any case) that put a question in an agent's domain.
DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "argocd": ("argo", "argocd", "argo cd", "application", "applications", "app", "apps",
               "applicationset", "applicationsets", "appset", "sync", "synced", "outofsync",
               "out of sync", "degraded", "healthy", "health", "progressing", "cluster",
               "clusters", "project", "projects", "gitops", "rollback"),
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


class RoutingHintMiddleware(AgentMiddleware):
    """Offers the first model call of a turn only the `ask_<agent>` tools the question names."""

    def __init__(self, router: DomainRouter) -> None:
        super().__init__()
        self.router = router

    def _apply(self, request: ModelRequest) -> ModelRequest:
        messages = request.messages
        if not messages or not isinstance(messages[-1], HumanMessage) or not request.tools:
            return request
        named = {f"ask_{agent}" for agent in self.router.agents_for(message_text(messages[-1]))}
        kept = [t for t in request.tools if getattr(t, "name", None) in named]
        return request.override(tools=kept) if kept else request

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(self._apply(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return await handler(self._apply(request))
