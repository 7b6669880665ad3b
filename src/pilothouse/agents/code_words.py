"""Words the workspace's code joins into one name: a question saying them is about the code.

A person asks about their codebase in its own words, not its identifiers: "whats the sql
statement timeout on our db conns?" (the code says `STATEMENT_TIMEOUT_MS`), "where are the order
status transitions defined?" (`OrderStatus`). Such a question has no word of any domain and
names no resource, so the supervisor's model chose the agent; measured on held-out dev
questions, it asked Argo CD each time. The workspace says what its code is about: its names
join words, and a phrase of the question that one of its names joins says the question is about
this code, whatever the world calls its things.

Three conditions keep the question's grammar out, each measured on three codebases:

- the two words stand side by side in the question, as a name's words do in speech ("order
  status"), not anywhere in it: a large codebase has a name joining almost any two words;
- each is a word the code names things with: at least `NAME_WORD_SHARE` of its uses in the
  workspace are inside a name of two parts or more. Grammar lives in the code's prose ("what",
  "which", "this": under 5% of their uses, in a service, a library and this project), while
  "statement", "status", "order", "gateway" and "retry" are a third or more;
- parts of four letters or more: shorter ones are abbreviations and grammar ("max", "get").

It is the weakest evidence the request frame has: it decides only a question that no domain
word and no resource name decides, before an Argo CD project's name does. The index is built
from the bounded walk of the workspace (`workspace_names.workspace_texts`), in a worker thread,
and kept a few minutes (a name added since is seen on the next build).
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise
from pathlib import Path

from pilothouse.agents.inventory import Candidate, Mention
from pilothouse.agents.workspace_names import workspace_texts

#: The kind of mention: words the workspace's code joins into one name.
CODE_WORDS = "words the workspace's code joins into one name"
#: A name in code or configuration text: identifiers, and hyphenated names ("retry-budget").
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")
#: The parts of a name, or of a word of prose: snake, kebab and CamelCase words.
_PART = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]+")
#: Any word of the workspace's text, names included (each use of a part is counted once).
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*")
#: The shortest part that counts.
_MIN_PART = 4
#: The least share of a word's uses that are inside names for it to be a word of the code.
NAME_WORD_SHARE = 0.25
#: How long an index of the workspace's names is used before it is built again.
_KEPT_SECONDS = 300.0


def stem(word: str) -> str:
    """`word` lowercased, without a plural's "s" ("transitions" and "TRANSITION" meet)."""
    word = word.lower()
    plural = word.endswith("s") and not word.endswith(("ss", "us")) and len(word) > _MIN_PART
    return word[:-1] if plural else word


def name_parts(name: str) -> frozenset[str]:
    """The parts of `name` that count, stemmed: `STATEMENT_TIMEOUT_MS` -> statement, timeout."""
    return frozenset(stem(p) for p in _PART.findall(name) if len(p) >= _MIN_PART)


@dataclass(frozen=True)
class CodeIndex:
    """The pairs of words the workspace's names join, and the words it names things with."""

    pairs: frozenset[frozenset[str]]
    name_words: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str]) -> CodeIndex:
        in_names: Counter[str] = Counter()
        uses: Counter[str] = Counter()
        pairs: set[frozenset[str]] = set()
        for text in texts:
            for word in _WORD.findall(text):
                uses.update(name_parts(word))
            for name in _NAME.findall(text):
                parts = name_parts(name)
                in_names.update(parts)
                pairs.update(frozenset(p) for p in combinations(sorted(parts), 2))
        name_words = {w for w, n in in_names.items() if n >= NAME_WORD_SHARE * uses[w]}
        return cls(frozenset(p for p in pairs if p <= name_words), frozenset(name_words))


class CodeWords:
    """The DevOps agent's inventory of phrases its workspace's names join."""

    agent = "devops"

    def __init__(self, root: Path, *, max_files: int = 5_000) -> None:
        self.root = root
        self.max_files = max_files
        self._index: tuple[float, CodeIndex] | None = None
        self._lock = threading.Lock()

    async def resolve(self, words: Sequence[Candidate]) -> list[Mention]:
        # Side by side: one space between them, both plain words of four letters or more.
        phrases = [(a, b) for a, b in pairwise(words)
                   if b.start == a.start + len(a.text) + 1
                   and all(w.text.isalpha() and len(w.text) >= _MIN_PART for w in (a, b))]
        if not phrases:
            return []
        index = await asyncio.to_thread(self.index)
        for first, second in phrases:
            joined = frozenset({stem(first.text), stem(second.text)})
            if len(joined) == 2 and joined in index.pairs:
                return [Mention(first.text, first.start, self.agent, CODE_WORDS,
                                f"{first.text} {second.text}")]
        return []

    def index(self) -> CodeIndex:
        """The workspace's index (built, or kept from a build under `_KEPT_SECONDS` old)."""
        with self._lock:
            if self._index is None or time.monotonic() - self._index[0] > _KEPT_SECONDS:
                texts = (text for _, text in workspace_texts(self.root, self.max_files))
                self._index = (time.monotonic(), CodeIndex.of(texts))
            return self._index[1]
