"""Words the workspace's code joins into one name: a question spelling them is about the code.

A person asks about their codebase in its own words, not its identifiers: "whats the sql
statement timeout on our db conns?" (the code says `STATEMENT_TIMEOUT_MS`), "where are the order
status transitions defined?" (`OrderStatus`, `ALLOWED_TRANSITIONS`). Such a question has no
word of any domain and names no resource, so the supervisor's model chose the agent; measured
on held-out dev questions, it asked Argo CD each time (which searched its clusters for "order
status transitions"). The workspace says what its code is about: the names it defines join
words (`statement` and `timeout`), and two words of the question that one name joins say the
question is about this code, whatever the world calls its things.

Only parts of four letters or more count (shorter ones are grammar: `get`, `set`, `the`, `is`),
and two different parts of one name must both be in the question: one shared word ("status",
"health") is every domain's. It is the weakest evidence the request frame has: it decides only
a question that no domain word and no resource name decides, before an Argo CD project's name
does (two words the code joins say more than one word a group is named). The index of names is
built from a bounded walk of the workspace (`workspace_names`), in a worker thread, and kept a
few minutes (a name added since is seen on the next build).
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from pilothouse.agents.inventory import Candidate, Mention
from pilothouse.agents.workspace_names import MAX_FILE_BYTES, MAX_TOTAL_BYTES, workspace_files

#: The kind of mention: words the workspace's code joins into one of its names.
CODE_WORDS = "words the workspace's code joins into one name"
#: A name in code or configuration text: identifiers, and hyphenated names ("payments-gateway").
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")
#: The parts of a name: snake, kebab and CamelCase words.
_PART = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]+")
#: The shortest part that counts.
_MIN_PART = 4
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


class CodeWords:
    """The DevOps agent's inventory of words its workspace's names join."""

    agent = "devops"

    def __init__(self, root: Path, *, max_files: int = 5_000) -> None:
        self.root = root
        self.max_files = max_files
        self._index: tuple[float, frozenset[frozenset[str]]] | None = None
        self._lock = threading.Lock()

    async def resolve(self, words: Sequence[Candidate]) -> list[Mention]:
        wanted = {stem(w.text): w for w in words if w.text.isalpha() and len(w.text) >= _MIN_PART}
        if len(wanted) < 2:
            return []
        names = await asyncio.to_thread(self.names)
        joined = next((parts & wanted.keys() for parts in names
                       if len(parts & wanted.keys()) >= 2), None)
        if not joined:
            return []
        first = min((wanted[p] for p in joined), key=lambda w: w.start)
        return [Mention(first.text, first.start, self.agent, CODE_WORDS,
                        " ".join(sorted(joined)))]

    def names(self) -> frozenset[frozenset[str]]:
        """The part sets of the workspace's names of two parts or more (built, or kept)."""
        with self._lock:
            if self._index is None or time.monotonic() - self._index[0] > _KEPT_SECONDS:
                self._index = (time.monotonic(), self._build())
            return self._index[1]

    def _build(self) -> frozenset[frozenset[str]]:
        found: set[frozenset[str]] = set()
        read = 0
        for relative in workspace_files(self.root, self.max_files):
            if read >= MAX_TOTAL_BYTES:
                break
            try:
                path = self.root / relative
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            read += len(data)
            if b"\0" in data[:1024]:
                continue  # not text
            for name in set(_NAME.findall(data.decode("utf-8", "replace"))):
                parts = name_parts(name)
                if len(parts) >= 2:
                    found.add(parts)
        return frozenset(found)
