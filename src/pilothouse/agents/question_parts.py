"""A compound question split by agent: each agent it names is asked only its own part.

Measured with `pilothouse eval` on the local model: given a question with an Argo CD half
(out-of-sync apps of a project) and a GitHub half (a repository's review queue) whole, the
supervisor's model passed the whole question to both agents, and the GitHub agent listed every
open pull request instead of the review queue (the Argo CD half pulled it off course); another
time it read an application's name as a repository. Asked only its own half, each agent makes
the choice a single-agent question gets.

The split is by the question's own grammar: sentences, "; ", ", then", "also", and a comma
or "and" before a new question word. Each clause goes to the agents whose domain words it
has; a clause with none ("What is its status") belongs with the clause before it, where its
"its" points (one that speaks of the person's own things instead, "how often do we retry",
is the workspace's: `RequestFrame.agents_for`). An agent no clause names alone gets the
clauses that name it with others, and one that no clause names at all gets the whole
question. One whose part refers with a pronoun ("it", "its", "they", "that", "those")
without naming a resource ("and is its CI failing?", "which PR did that come from?": what it
stands for went to another agent) gets the question up to the end of its part: a pronoun
points back, so what it stands for is before it, and what comes after is other agents'
requests. Measured on held-out dev: "how long do our tokens live before they expire, and is
<app> happy in argo?" reached the DevOps agent whole ("they"), and it answered the Argo CD
half with a `kubectl` command.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

#: Words that start a new request inside a sentence.
_STARTS = (r"(?:how|what|which|who|whose|why|when|where|is|are|was|were|does|do|did|can|could"
           r"|show|list|check|explain|grep|restart|run|tell|find)\b")
#: "and", or a sign standing alone between words ("+", "&", "/", "-"): typed for "and".
#: Which sign is not listed: a lone sign joins, whatever it is.
_AND = r"(?:and|[^\w\s]{1,3})"
_BOUNDARY = re.compile(
    r"(?<=[.?!])\s+(?=\S)"                                  # a new sentence
    r"|;\s*"
    rf"|,?\s+(?:{_AND}\s+)?(?:then|also)\s+"                # ", then restart", " also grep"
    rf"|,\s+(?:{_AND}\s+)?(?={_STARTS})"                    # ", which ...", ", and what ..."
    rf"|\s+{_AND}\s+(?={_STARTS})",                         # " and are ...", " + how many"
    re.IGNORECASE)
_LEADING = re.compile(rf"^(?:{_AND}|then|also)\s+", re.IGNORECASE)
#: English's pronouns for a thing named elsewhere: the personal ones and the demonstratives.
#: A relative "that" ("PRs that touch the chart") counts too; it matters only in a part that
#: names nothing, which then gets the whole question: more words, never a lost referent.
_PRONOUN = re.compile(r"\b(?:it|its|they|their|them|that|this|those|these)\b", re.IGNORECASE)
#: English's first person plural, and its singular possessive: the speaker's own things ("our
#: breaker", "do we retry", "my workspace"). Not "I" or "me": "show me", "can I see" ask.
_OWN = re.compile(r"\b(?:we|us|our|ours|my)\b", re.IGNORECASE)
#: A word joined with "-" or "/" (`owner/repo`, `ledger-api-qa`): how a compound name is
#: written. Whether it names a resource, the inventories say (`RequestFrame.names_in`); the
#: shape only says which words a person wrote as one.
_JOINED = re.compile(r"(?<![\w./-])[\w.]+(?:[-/][\w.]+)+(?![\w/-])")


def joined_words(text: str) -> list[str]:
    """The words of `text` written joined with "-" or "/", in order."""
    return [word.strip(".") for word in _JOINED.findall(text)]


def points_elsewhere(part: str) -> bool:
    """Whether `part` of a question refers with a pronoun ("it", "their", "that") to what
    another part named."""
    return bool(_PRONOUN.search(part))


def speaks_of_own(part: str) -> bool:
    """Whether `part` of a question speaks of the person's own things ("our", "we")."""
    return bool(_OWN.search(part))


def clauses(question: str) -> list[str]:
    """`question` cut where a new request starts, each clause without its joining word."""
    parts = (_LEADING.sub("", p.strip(" ,")) for p in _BOUNDARY.split(question))
    return [p for p in parts if any(c.isalnum() for c in p)]


def split_by_agent(question: str, agents: Sequence[str],
                   agents_for: Callable[[str], list[str]],
                   names_in: Callable[[str], bool]) -> dict[str, str]:
    """Each of `agents` (those the whole question names) with the part of `question` for it;
    `names_in` says whether a part names a resource of its own (`RequestFrame.names_in`)."""
    texts = clauses(question)
    owners = [set(agents_for(t)) & set(agents) for t in texts]
    # A clause naming no agent goes with the one before it (leading ones: with the next).
    for i in range(1, len(owners)):
        owners[i] = owners[i] or owners[i - 1]
    for i in range(len(owners) - 2, -1, -1):
        owners[i] = owners[i] or owners[i + 1]
    ends, cursor = [], 0
    for text in texts:  # where each clause ends in the question, to cut it after a part
        cursor = question.find(text, cursor) + len(text)
        ends.append(cursor)
    parts: dict[str, str] = {}
    for agent in agents:
        alone = [i for i, o in enumerate(owners) if o == {agent}]
        mine = alone or [i for i, o in enumerate(owners) if agent in o]
        part = " ".join(texts[i] for i in mine)
        if not part:
            parts[agent] = question
        elif points_elsewhere(part) and not names_in(part):
            parts[agent] = question[:ends[mine[-1]]].strip()
        else:
            parts[agent] = part
    return parts
