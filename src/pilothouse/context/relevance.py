"""Relevance of earlier conversation units to the current question, and cross-turn links.

Prioritization: when history must shrink, the units most relevant to the question stay
verbatim (a keyword score weighted by rarity, plus recency), not simply the newest ones.
Correlation: a follow-up ("why is it degraded?", "show page 2", "the second one") is linked to
the earlier tool results it refers to, by the names it shares with them and by reference words;
linked units are kept, and the model is told which result the question refers to.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/]{2,}")
_STOP = frozenset((
    "the", "and", "for", "are", "was", "were", "with", "that", "this", "what", "which", "when",
    "where", "why", "how", "show", "list", "all", "from", "have", "has", "had", "not", "but",
    "you", "your", "can", "please", "about", "into", "there", "their", "them", "then", "than",
    "any", "some", "its", "it's", "also", "just", "more", "most", "give", "tell", "does", "did",
    "is", "are", "be",
))
# Words that point back at something said before.
_REFERENCES = re.compile(
    r"\b(it|its|that|those|these|them|same|previous|earlier|above|last one|first one|"
    r"second|third|next page|page \d+|more of|the rest|again)\b",
    re.IGNORECASE,
)


# Results that explain a problem stay useful for later questions; bulk listings rarely do.
_DIAGNOSTIC = re.compile(
    r"\b(degraded|error|failed|failure|backoff|crashloop|not found|denied|forbidden|timeout|"
    r"timed out|exception|oomkilled|outofsync|missing|unhealthy|conflict|rejected)\b",
    re.IGNORECASE,
)


def salience(unit: Sequence[BaseMessage]) -> float:
    """Content-aware worth of keeping a unit: diagnostics up, long homogeneous listings down."""
    results = [str(m.content) for m in unit if isinstance(m, ToolMessage)]
    if not results:
        return 0.0
    text = "\n".join(results)
    score = 2.0 if _DIAGNOSTIC.search(text) else 0.0
    if text.count('"name"') > 20:  # a listing: its totals survive in the summary
        score -= 1.0
    return score


_NAMELIKE = re.compile(r"[-_/.\d]")


def terms(text: str) -> list[str]:
    """Lower-case content words; names like orders-api and src/app.py stay whole."""
    return [w for w in (m.group(0).lower().rstrip(".-/") for m in _WORD.finditer(text))
            if w not in _STOP]


def terms_and_parts(text: str) -> set[str]:
    """`terms` of `text` and the parts of each joined name: a person calls a resource by a
    part of its name ("the poller" for `queue-poller-live`)."""
    found = set(terms(text))
    joined = (w.replace("/", "-").replace("_", "-").replace(".", "-") for w in found)
    return found | {part for word in joined for part in word.split("-") if len(part) > 2}


def unit_text(unit: Sequence[BaseMessage]) -> str:
    parts: list[str] = []
    for message in unit:
        content = message.content
        parts.append(content if isinstance(content, str) else json.dumps(content, default=str))
        if isinstance(message, AIMessage):
            parts.extend(f"{c['name']} {json.dumps(c['args'])}" for c in message.tool_calls)
    return "\n".join(parts)


def latest_question(messages: Sequence[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not message.additional_kwargs.get("pilothouse"):
            return str(message.content)
    return ""


@dataclass(frozen=True)
class Link:
    """An earlier unit a follow-up question refers to."""

    index: int
    shared: tuple[str, ...]
    tool: str | None


def find_links(question: str, units: Sequence[Sequence[BaseMessage]], limit: int = 3) -> list[Link]:
    """Earlier units with tool results that the question refers to, strongest first."""
    wanted = set(terms(question))
    refers_back = bool(_REFERENCES.search(question))
    links: list[tuple[float, Link]] = []
    for index, unit in enumerate(units):
        results = [m for m in unit if isinstance(m, ToolMessage)]
        if not results:
            continue
        # Only names link turns (orders-api, src/app.py, v2.3): sharing an ordinary word
        # like "degraded" makes a new question, not a follow-up.
        shared = {t for t in wanted & set(terms(unit_text(unit))) if _NAMELIKE.search(t)}
        if not shared and not refers_back:
            continue
        strength = len(shared) + (0.5 if refers_back else 0) + index / (10 * len(units))
        names = {c["id"]: c["name"] for m in unit if isinstance(m, AIMessage)
                 for c in m.tool_calls}
        tool = results[0].name or names.get(results[0].tool_call_id)
        links.append((strength, Link(index, tuple(sorted(shared))[:6], tool)))
    if not any(link.shared for _, link in links):
        # With no shared names, a reference word points at the most recent result only.
        links = sorted(links, key=lambda pair: pair[1].index)[-1:]
    return [link for _, link in sorted(links, key=lambda pair: -pair[0])[:limit]]


def relevance_scores(question: str, units: Sequence[Sequence[BaseMessage]]) -> list[float]:
    """A score per unit: rarity-weighted shared terms, links, salience, a little recency."""
    unit_terms = [Counter(terms(unit_text(u))) for u in units]
    wanted = set(terms(question))
    documents = len(units) or 1
    frequency = Counter(t for counts in unit_terms for t in set(counts) & wanted)
    linked = {link.index for link in find_links(question, units)}
    scores: list[float] = []
    for index, counts in enumerate(unit_terms):
        score = sum(math.log(1 + documents / frequency[t]) for t in wanted & set(counts))
        score += 3.0 if index in linked else 0.0
        score += salience(units[index])
        score += index / documents  # recency breaks ties toward newer units
        scores.append(score)
    return scores


def link_note(question: str, units: Sequence[Sequence[BaseMessage]]) -> str | None:
    """A short note telling the model which earlier results the question refers to."""
    links = find_links(question, units)
    if not links:
        return None
    described = []
    for link in links:
        names = f" (mentions {', '.join(link.shared)})" if link.shared else ""
        described.append(f"the earlier {link.tool or 'tool'} result{names}")
    return ("This question follows up on " + "; ".join(described) +
            ". Use those results before calling tools again.")
