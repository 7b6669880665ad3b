"""An in-memory view of an index's chunks: keyword search, path filters, and name lookup.

The vector store answers "what is similar"; this answers "what is named": the files and
symbols a question mentions (`auth.py`, `build_agent`, `CodeIndex.retrieve`), which is what
dynamic context expansion needs, and what a keyword ranking and a path filter work on.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from pilothouse.tools.rag.boundaries import language_for
from pilothouse.tools.rag.keyword import STOPWORDS, KeywordIndex, document_tokens


@dataclass(frozen=True)
class ChunkRecord:
    """One stored chunk as the catalog sees it."""

    id: str
    path: str
    symbol: str
    names: tuple[str, ...]
    start_line: int
    end_line: int
    text: str


@dataclass(frozen=True)
class FileHint:
    """A file (and where in it) that a question names; `match` says how it was found."""

    path: str
    symbol: str
    start_line: int
    end_line: int
    match: str  # "path", "symbol", "directory" or "partial"


_PATHLIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,10})\b")
_DIRLIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+)/?")
_BACKTICK = re.compile(r"`([^`\s]+)`")
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\b")


def is_named_identifier(word: str) -> bool:
    """snake_case, camelCase, CamelCase, CONSTANT_CASE or dotted: how code names look in prose."""
    if "." in word or "_" in word.strip("_"):
        return True
    return bool(re.search(r"[a-z][A-Z]|^[A-Z][a-z0-9]+[A-Z]", word))


def mentions(question: str) -> tuple[list[str], list[str]]:
    """(paths, identifiers) named in a question, in order of appearance, without repeats."""
    paths: list[str] = []
    for m in _PATHLIKE.finditer(question):
        if language_for(m.group(1).rsplit("/", 1)[-1]) != "text" or "/" in m.group(1):
            paths.append(m.group(1))
    paths += [m.group(1).rstrip("/") for m in _DIRLIKE.finditer(question)]
    names = [m.group(1) for m in _BACKTICK.finditer(question)]
    for m in _IDENT.finditer(question):
        word = m.group(0)
        if word.lower() not in STOPWORDS and is_named_identifier(word) and word not in paths:
            names.append(word)
    # A lone capitalized word mid-sentence ("is Settings frozen?") may name a class. Only
    # names that match real symbols count later, so a wrong guess costs nothing.
    names += re.findall(r"(?<=[a-z,;:] )[A-Z][a-z]+[A-Za-z]*\b", question)
    dotted_paths = {p for p in paths if "." in p}
    names = [n for n in names if n not in dotted_paths]
    return list(dict.fromkeys(paths)), list(dict.fromkeys(names))


class Catalog:
    """All chunks of one index, loaded once per index generation."""

    def __init__(self, records: Iterable[ChunkRecord]) -> None:
        self.records = list(records)
        self.by_id = {r.id: r for r in self.records}
        self.paths = sorted({r.path for r in self.records})

    @cached_property
    def keywords(self) -> KeywordIndex:
        """BM25 over every chunk, built on first keyword query."""
        corpus = [
            document_tokens(r.path, " ".join(r.names) or r.symbol, r.text) for r in self.records
        ]
        return KeywordIndex([r.id for r in self.records], corpus)

    def files_naming(self, name: str) -> list[str]:
        """The indexed files whose text holds `name` as a whole word, in path order."""
        word = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
        return sorted({r.path for r in self.records if name in r.text and word.search(r.text)})

    def matching_paths(self, path_filter: str) -> list[str]:
        """Paths matching a glob (`src/**/*.py`, `*config*`) or, without wildcards, a substring."""
        pattern = path_filter.strip().lstrip("./")
        if any(c in pattern for c in "*?["):
            return [p for p in self.paths if fnmatch.fnmatchcase(p, pattern)]
        return [p for p in self.paths if pattern in p]

    def find(self, question: str, limit: int = 20) -> list[FileHint]:
        """Files and symbols named in `question`: exact path and symbol matches first."""
        paths, names = mentions(question)
        exact: list[FileHint] = []
        loose: list[FileHint] = []
        for mention in paths:
            files = [p for p in self.paths if p == mention or p.endswith("/" + mention)]
            exact += [self._file_hint(p, "path") for p in files]
            if not files:
                folder = mention.rstrip("/") + "/"
                inside = [p for p in self.paths if p.startswith(folder) or f"/{folder}" in p]
                loose += [self._file_hint(p, "directory") for p in inside]
        for name in names:
            last = name.rsplit(".", 1)[-1]
            hits = [r for r in self.records if self._names_match(r, name, last)]
            exact += [self._hint(r, "symbol") for r in hits]
            if not hits and len(last) >= 4:
                lowered = last.lower()
                partial = [r for r in self.records if any(lowered in n.lower() for n in r.names)]
                loose += [self._hint(r, "partial") for r in partial]
        seen: set[tuple[str, str]] = set()
        result: list[FileHint] = []
        for hint in exact + loose:
            key = (hint.path, hint.symbol)
            if key not in seen:
                seen.add(key)
                result.append(hint)
        return result[:limit]

    def named_chunk_ids(self, question: str, limit: int = 20) -> list[str]:
        """Chunks a question names directly, as a ranking for fusion with the other retrievers."""
        ids: list[str] = []
        for hint in self.find(question, limit=limit):
            for r in self.records:
                if r.path == hint.path and (hint.match == "path" or r.symbol == hint.symbol
                                            or hint.symbol in r.names):
                    ids.append(r.id)
        return list(dict.fromkeys(ids))[:limit]

    @staticmethod
    def _names_match(record: ChunkRecord, name: str, last: str) -> bool:
        if name in record.names or record.symbol == name:
            return True
        # `retrieve` matches `CodeIndex.retrieve`; a dotted mention must match in full.
        return "." not in name and any(n.rsplit(".", 1)[-1] == last for n in record.names)

    def _hint(self, record: ChunkRecord, match: str) -> FileHint:
        return FileHint(record.path, record.symbol, record.start_line, record.end_line, match)

    def _file_hint(self, path: str, match: str) -> FileHint:
        chunks = [r for r in self.records if r.path == path]
        end = max((r.end_line for r in chunks), default=0)
        return FileHint(path, "", 1, end, match)
