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
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from pathlib import Path
from uuid import uuid4

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from pilothouse.agents.passthrough import awaits_approval
from pilothouse.context.rewrite import RequestRewriteMiddleware, question_text

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


#: Package names too common to say a question is about this codebase.
_GENERIC_PACKAGES = frozenset({
    "src", "lib", "libs", "pkg", "api", "core", "utils", "util", "common", "shared", "main",
    "test", "tests", "testing", "docs", "scripts", "tools", "internal", "cmd", "config"})
_SKIPPED_DIRS = frozenset({"node_modules", "venv", "site-packages", "__pycache__", "build",
                           "dist", "vendor", "third_party"})
#: How far and how much of the workspace is looked at (its root may be any directory).
_PACKAGE_DEPTH, _MAX_DIRS = 3, 2_000


def workspace_packages(root: Path, taken: Collection[str] = ()) -> tuple[str, ...]:
    """The workspace's top-level Python packages: the DevOps agent's own vocabulary.

    A question naming one ("how does the orders service verify tokens?") is about this
    codebase even without a word like "code" (measured: the supervisor answered such a
    question itself, from nothing). Generic names and words of other domains (`taken`) are
    left out; the walk is bounded, so a workspace at a home directory costs milliseconds.
    """
    names: set[str] = set()
    queue, seen = [(root, 0)], 0
    while queue and seen < _MAX_DIRS:
        folder, depth = queue.pop(0)
        seen += 1
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir())
        except OSError:
            continue
        for child in children:
            name = child.name
            if name.startswith(".") or name in _SKIPPED_DIRS or name.endswith(".egg-info"):
                continue
            if ((child / "__init__.py").is_file() and name.isidentifier()
                    and not (folder / "__init__.py").is_file()):  # top-level packages only
                names.add(name.lower())
            if depth + 1 < _PACKAGE_DEPTH:
                queue.append((child, depth + 1))
    taken = {w.lower() for w in taken}
    return tuple(sorted(n for n in names if n not in _GENERIC_PACKAGES and n not in taken
                        and len(n) > 2))


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
    still to ask, and must call one; once all of them have answered, the model writes its
    answer without another call (an agent that failed or waits for an approval leaves the
    choice free, as does a question that names no agent).
    One call at a time, because the local model makes one tool call per turn: a question
    that names Argo CD and GitHub got only the first agent's half of the answer otherwise.

    On a conversation's first turn, a question that names one agent reaches it in the person's
    own words, with no model call (`direct_call`): there is nothing earlier to resolve, and the
    local model's rewording lost or added detail (measured: "Diff payments-api-production
    against git" was passed on as a question about "sync status, health status, and any
    relevant events or pod logs", and a request to roll a Deployment's pods as "argo cd
    rollout notifications-sms-dev.<same>").
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
        named = {f"ask_{agent}" for agent in self.router.agents_for(question_text(request))}
        pending = [t for t in request.tools if getattr(t, "name", None) in named - asked]
        if pending:
            return request.override(tools=pending, tool_choice="required")
        results = [m for m in messages[start + 1:] if isinstance(m, ToolMessage)]
        if named and isinstance(messages[-1], ToolMessage) and all(
                r.status != "error" and not awaits_approval(r) for r in results):
            # Every named agent answered: the model writes the lead that connects them.
            # Offered the agents again, the local model read their answers once to decide
            # not to ask anyone and again to write (~20 s of a two-agent case).
            return request.override(tool_choice="none")
        return request

    def direct_call(self, request: ModelRequest) -> ModelResponse | None:
        """The call of the one agent a conversation's first question names, made without the
        model; None when the model has something to choose.

        On that turn the choice is already made here: the call is offered only that agent
        and must call it, and its question is the person's own. A model call would decide
        nothing and cost seconds of the first answer (measured: ~5 s to read the supervisor's
        prompt and write the call on two cores).
        """
        messages = request.messages
        humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
        if len(humans) != 1 or any(isinstance(m, AIMessage) for m in messages[humans[0] + 1:]):
            return None
        question = question_text(request)
        named = self.router.agents_for(question)
        offered = {getattr(t, "name", None) for t in request.tools}
        if len(named) != 1 or f"ask_{named[0]}" not in offered:
            return None
        call = {"name": f"ask_{named[0]}", "args": {"question": question},
                "id": f"call_{uuid4().hex[:24]}", "type": "tool_call"}
        return ModelResponse(result=[AIMessage(content="", tool_calls=[call])])

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return self.direct_call(request) or super().wrap_model_call(request, handler)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return self.direct_call(request) or await super().awrap_model_call(request, handler)
