"""A keyword scan of a folder's files: what retrieval answers with while there is no index.

Indexing a large repository takes minutes of CPU, and a folder that is not a code repository is
never indexed on its own (`files.survey`). A question about it still deserves the passages that
contain its words, now: this reads the files `walk_sources` would index (the same ignores and
size limit), keeps the windows of lines where the question's terms occur, and ranks them with
the index's own BM25. It is bounded by a number of files and a time, never by the folder, and
writes nothing. Outside a repository, hidden files and folders (`~/.ssh`, `.env`) are not read.
"""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass
from pathlib import Path

from pilothouse.tools.rag.files import read_source, walk_sources
from pilothouse.tools.rag.index import Hit
from pilothouse.tools.rag.keyword import KeywordIndex, document_tokens, query_tokens

#: Lines per passage: about one function, the size of an index chunk.
WINDOW_LINES = 30


@dataclass(frozen=True)
class ScanResult:
    """The best passages a scan found, and how much of the folder it read."""

    hits: list[Hit]
    files_read: int
    #: False when the file or time bound ended the scan before the folder did.
    complete: bool


def path_matches(path: str, path_filter: str) -> bool:
    """A glob (`src/**/*.py`, `*config*`) or, without wildcards, a part of the path."""
    pattern = path_filter.strip().lstrip("./")
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(path, pattern)
    return pattern in path


def _windows(rel: str, text: str, terms: set[str]) -> list[tuple[str, int, int, str]]:
    """(path, first line, last line, text) of each window of `text` holding one of `terms`."""
    lines = text.splitlines()
    found = []
    for start in range(0, len(lines), WINDOW_LINES):
        body = "\n".join(lines[start:start + WINDOW_LINES])
        lowered = body.lower()
        if any(term in lowered for term in terms):
            found.append((rel, start + 1, min(start + WINDOW_LINES, len(lines)), body))
    return found


def scan_sources(root: Path, query: str, k: int = 5, *, max_files: int, seconds: float,
                 path_filter: str | None = None, hidden: bool = True) -> ScanResult:
    """The `k` windows of `root`'s files that best match `query`'s terms (BM25), best first.

    Reads at most `max_files` files and stops after `seconds`; `hidden=False` skips files and
    folders whose name starts with a dot.
    """
    terms = set(query_tokens(query))
    if not terms:
        return ScanResult([], 0, True)
    deadline = time.monotonic() + seconds
    windows: list[tuple[str, int, int, str]] = []
    read = 0
    complete = True
    for source in walk_sources(root):
        if read >= max_files or time.monotonic() > deadline:
            complete = False
            break
        if not hidden and any(part.startswith(".") for part in source.rel.split("/")):
            continue
        if path_filter and not path_matches(source.rel, path_filter):
            continue
        read += 1
        got = read_source(source.path)
        if got is not None and any(term in got[0].lower() for term in terms):
            windows += _windows(source.rel, got[0], terms)
    if not windows:
        return ScanResult([], read, complete)
    ranking = KeywordIndex([str(n) for n in range(len(windows))],
                           [document_tokens(path, "", body) for path, _, _, body in windows])
    scores = ranking.scores(query)
    best = max(float(scores.max()), 1e-9)
    ranked = sorted(range(len(windows)), key=lambda n: -scores[n])[:k]
    hits = [Hit(windows[n][0], windows[n][1], windows[n][2], "", round(float(scores[n]) / best, 4),
                windows[n][3]) for n in ranked if scores[n] > 0]
    return ScanResult(hits, read, complete)
