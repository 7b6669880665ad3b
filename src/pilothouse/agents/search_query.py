"""A search query held to the person's words, term by term: GitHub's issue search and the
workspace's code retrieval.

`agents.grounded_args` holds whole arguments to what was said; a search query is many
arguments in one string, so it is checked term by term. Measured with `pilothouse eval` on the
local model:
- a request for a repository's issues with a given label came as `repo:<repo> is:<label>`
  (no such `is:` value: 0 results, answered "there are none");
- "open PRs labelled security anywhere in <org>" came as `repo:<org>/<repo> ...` with a few-shot
  example's repository (0 results);
- a count of a repository's open issues came as `repo:<repo> is:open`, which counts pull
  requests too (79, not 27).

So a name qualifier (`repo:`, `org:`, `author:`, `label:` ...) is kept only when a person said
its value; a repository nobody named, of an organisation somebody did, becomes the one
repository the question names, else `org:`; an
`is:` value GitHub does not know, that the person said, is the label they meant; a free word
nobody said (an example's "timeout") goes; and a query for issues or for pull requests, open
or closed, says which when the person's words do. A query left with nothing is kept as the
model wrote it: the tool's error then says what is wrong.

A code retrieval query (`grounded_retrieval`) is the model's only when a person said each of
its words (an identifier counts as said when each of its parts is: "order_status_transitions"
for "order status transitions"); otherwise it is the person's question itself, which
retrieval, a search by meaning, takes as it is. Measured: asked "whats the sql statement
timeout on our db conns set to?", the local model retrieved "session timeout expiry", a
few-shot example's query, and answered about sessions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.tool import ToolCall

from pilothouse.agents.code_words import name_parts
from pilothouse.agents.question_parts import joined_words
from pilothouse.context.events import ContextAction, report
from pilothouse.context.rewrite import (
    RequestRewriteMiddleware,
    newest_question,
    with_revised_calls,
)
from pilothouse.models.tokens import message_text

SEARCH_TOOL = "search_issues"
RETRIEVAL_TOOL = "retrieve_code_context"
#: Qualifiers whose value names something (a repository, a person, a label).
NAME_QUALIFIERS = frozenset({
    "repo", "org", "user", "author", "assignee", "label", "mentions", "involves", "commenter",
    "review-requested", "reviewed-by", "milestone", "project", "team"})
#: The values GitHub's issue search knows for `is:`.
IS_VALUES = frozenset({"open", "closed", "merged", "unmerged", "pr", "issue", "draft",
                       "locked", "unlocked", "public", "private", "archived", "queued"})
_TYPE_TERMS = frozenset({"is:pr", "is:issue", "type:pr", "type:issue"})
_STATE_TERMS = frozenset({"is:open", "is:closed", "is:merged", "is:unmerged", "state:open",
                          "state:closed"})
_ITEMS = r"(?:issues?|bugs?|tickets?|pull\s+requests?|prs?)\b"
_ISSUES = re.compile(r"\b(?:issues?|bugs?|tickets?)\b", re.IGNORECASE)
_PULLS = re.compile(r"\b(?:pull\s+requests?|prs?)\b", re.IGNORECASE)
#: "open issues", "closed pull requests", "merged PRs": the state a person asked for.
_STATE = re.compile(rf"\b(?P<state>open|closed|merged)\s+(?:[\w-]+\s+)?{_ITEMS}",
                    re.IGNORECASE)
#: A term: `key:"quoted value"`, a quoted phrase, or a word.
_TERM = re.compile(r'[\w-]+:"[^"]*"|"[^"]*"|\S+')


def _said(value: str, texts: Sequence[str], *, stem: bool = False) -> bool:
    """Whether a person's text has `value` as a whole word (with `stem`, also with another
    ending: "timeouts" for "timeout")."""
    value = value.strip('"').lower()
    if not value:
        return False
    if stem and len(value) > 4:
        pattern = rf"(?<![\w-]){re.escape(value[:max(4, len(value) - 2)])}\w*(?![\w-])"
    else:
        pattern = rf"(?<![\w-]){re.escape(value)}(?![\w-])"
    return any(re.search(pattern.replace(r"\ ", r"[\s-]+"), t.lower()) for t in texts)


def grounded_query(query: str, texts: Sequence[str], question: str) -> str:
    """`query` with the terms the people's `texts` do not support removed or mended, typed
    by the `question`'s words (issues or pull requests)."""
    kept: list[str] = []
    orgs: list[str] = []
    for term in _TERM.findall(query):
        key, colon, value = term.partition(":")
        key = key.lower()
        if not colon or term.startswith('"'):
            if _said(term, texts, stem=True):
                kept.append(term)
        elif key == "is" and value.lower() not in IS_VALUES:
            if _said(value, texts, stem=True):
                kept.append(f"label:{value}")
        elif key not in NAME_QUALIFIERS or _said(value, texts):
            kept.append(term)
        elif key == "repo" and "/" in value and _said(value.split("/")[0], texts):
            named = {name for name in joined_words(question) if "/" in name}
            orgs.append(f"repo:{named.pop()}" if len(named) == 1
                        else f"org:{value.split('/')[0]}")
    if orgs and not any(t.split(":")[0].lower() in ("repo", "org", "user") for t in kept):
        kept.insert(0, orgs[0])
    if not kept:
        return query
    terms = {t.lower() for t in kept}
    issues, pulls = bool(_ISSUES.search(question)), bool(_PULLS.search(question))
    if not _TYPE_TERMS & terms and issues != pulls:
        kept.append("is:issue" if issues else "is:pr")
    states = {m.group("state").lower() for m in _STATE.finditer(question)}
    if not _STATE_TERMS & terms and len(states) == 1:
        kept.append(f"is:{states.pop()}")
    return " ".join(kept)


def _term_said(term: str, texts: Sequence[str]) -> bool:
    """Whether people's `texts` say `term`, whole or (an identifier) part by part."""
    if _said(term, texts, stem=True):
        return True
    parts = name_parts(term)
    return len(parts) > 1 and all(_said(p, texts, stem=True) for p in parts)


def grounded_retrieval(query: str, texts: Sequence[str], question: str) -> str:
    """A code retrieval `query` when the people's `texts` say each of its words; else the
    `question` itself (retrieval searches by meaning: the person's own words are a query,
    while a few of them without the rest lose what they were about)."""
    terms = [t for t in (raw.strip("\"'`?!,;:()") for raw in query.split()) if t]
    return query if all(_term_said(t, texts) for t in terms) else question


def _people(messages: Sequence[BaseMessage]) -> list[str]:
    return [message_text(m) for m in messages if isinstance(m, HumanMessage)]


class GroundedSearchQueryMiddleware(RequestRewriteMiddleware):
    """Revises the model's `query` of `tool` to the people's words (`ground`: GitHub's
    `grounded_query`, or `grounded_retrieval`) and reports each revision as a grounding
    action."""

    def __init__(self, tool: str = SEARCH_TOOL,
                 ground: Callable[[str, Sequence[str], str], str] = grounded_query) -> None:
        super().__init__()
        self.tool = tool
        self.ground = ground

    @property
    def name(self) -> str:
        return f"{type(self).__name__}[{self.tool}]"

    def revise(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        texts, question = _people(request.messages), newest_question(request.messages)
        revised: list[str] = []

        def revise_call(call: ToolCall) -> ToolCall:
            query = call["args"].get("query")
            if call["name"] != self.tool or not isinstance(query, str):
                return call
            better = self.ground(query, texts, question)
            if better == query:
                return call
            revised.append(f"'{query}' -> '{better}'")
            return {**call, "args": {**call["args"], "query": better}}

        response = with_revised_calls(response, revise_call)
        if revised:
            report(ContextAction("grounding", "search query held to the person's words: "
                                 + "; ".join(revised), "grounded_ids",
                                 {"arguments": len(revised)}))
        return response
