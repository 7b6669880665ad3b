"""A persistent, incremental index of source code with hybrid retrieval.

Each indexed root gets its own collection in an embedded ChromaDB store (`store.py`). A
re-index re-embeds only files whose content hash changed, or whose chunks an interrupted run
left incomplete, and drops files that disappeared. Retrieval fuses three rankings with
reciprocal rank fusion: vector similarity, BM25 over identifiers, and the chunks a question
names outright.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chromadb.api.models.Collection import Collection

from pilothouse.errors import UserInputError
from pilothouse.tools.rag.catalog import Catalog, FileHint, is_named_identifier, mentions
from pilothouse.tools.rag.chunking import Chunk, chunk_text
from pilothouse.tools.rag.embeddings import MiniLMEmbeddings
from pilothouse.tools.rag.files import (
    EMPTY,
    MAX_FILE_BYTES,
    SkipTally,
    read_source_or_reason,
    walk_sources,
)
from pilothouse.tools.rag.keyword import RRF_K, reciprocal_rank_fusion
from pilothouse.tools.rag.store import ChunkStore, PendingChunk

#: progress(files_done, files_total, current_path)
Progress = Callable[[int, int, str], None]
#: Chunks queued before they are embedded and stored: large enough to batch across small
#: files, small enough that a stop request is honoured within seconds.
_FLUSH_CHUNKS = 64


@dataclass(frozen=True)
class IndexReport:
    """What one `index_directory` run did."""

    root: str
    files_indexed: int
    files_skipped_unchanged: int
    files_removed: int
    chunks: int
    total_chunks: int
    seconds: float
    #: False when the run was stopped early; the next run picks up where it left off.
    complete: bool = True
    #: What was left out, by reason (an ignored or pruned folder counts once), with examples.
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)
    #: The .gitignore above the root that ignores the root itself, if one does.
    root_ignored_by: str | None = None

    @property
    def files_in_index(self) -> int:
        """Files of the root the index holds after this run."""
        return self.files_indexed + self.files_skipped_unchanged


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk: where it is, what it defines, and how strongly it matched (0..1)."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    score: float
    text: str


def _embedding_text(chunk: Chunk) -> str:
    """What the model embeds: the path and symbol give a short chunk its context."""
    head = f"File {chunk.path}" + (f", {chunk.symbol}" if chunk.symbol else "")
    return f"{head}\n{chunk.text}"


def resolve_root(path: str | Path) -> Path:
    """An existing directory as an absolute path, or a UserInputError saying what is wrong."""
    root = Path(path).expanduser()
    if not root.exists():
        raise UserInputError(
            f"Directory '{path}' does not exist.",
            hint="Pass the path of a checked-out repository, e.g. '.' for the current one.",
        )
    if not root.is_dir():
        raise UserInputError(f"'{path}' is a file, not a directory.", hint="Pass its folder.")
    return root.resolve()


def _spread_over_files(ranked: list[str], catalog: Catalog, k: int, per_file: int) -> list[str]:
    """The top `k` ids with at most `per_file` from one file, unless too few files match.

    Four windows of one long function tell the model less than the two best plus the other
    files that touch the question.
    """
    taken: list[str] = []
    deferred: list[str] = []
    count: dict[str, int] = {}
    for cid in ranked:
        path = catalog.by_id[cid].path
        if count.get(path, 0) < per_file:
            count[path] = count.get(path, 0) + 1
            taken.append(cid)
        else:
            deferred.append(cid)
        if len(taken) == k:
            return taken
    return taken + deferred[: k - len(taken)]


class CodeIndex:
    """Index directories into `store_dir` and retrieve code from the most recent one.

    `per_file` caps how many of the hits may come from one file while others also match.
    """

    def __init__(
        self,
        store_dir: Path,
        embedding_fn: MiniLMEmbeddings | None = None,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        per_file: int = 2,
    ) -> None:
        self.embedding_fn = embedding_fn or MiniLMEmbeddings()
        self.store = ChunkStore(Path(store_dir).expanduser(), self.embedding_fn)
        self.max_file_bytes = max_file_bytes
        self.per_file = per_file
        self.root: Path | None = None
        self._write_lock = threading.Lock()
        self._catalogs: dict[str, tuple[tuple[int, int], Catalog]] = {}

    def indexed_roots(self) -> list[str]:
        """Every directory this store holds an index of."""
        return self.store.roots()

    def index_directory(
        self,
        path: str | Path,
        progress: Progress | None = None,
        exclude: Sequence[str] = (),
        stop: threading.Event | None = None,
    ) -> IndexReport:
        """Bring the index of `path` up to date with the files on disk; make it current.

        `exclude` holds extra gitignore-style patterns; files they match leave the index.
        Setting `stop` ends the run after the current file (a server shutting down).
        """
        root = resolve_root(path)
        started = time.perf_counter()
        with self._write_lock:
            collection = self.store.collection(root, create=True)
            assert collection is not None
            stored = self.store.stored_hashes(collection)
            tally = SkipTally()
            sources = list(walk_sources(root, exclude, tally))
            total = len(sources)
            seen: set[str] = set()
            pending: list[PendingChunk] = []
            done = queued = indexed = skipped = written = 0
            for source in sources:
                if stop is not None and stop.is_set():
                    break
                got = read_source_or_reason(source.path, self.max_file_bytes)
                read = None if isinstance(got, str) else got
                chunks: list[Chunk] = []
                if isinstance(got, str):
                    tally.add(got, source.rel)
                if read is not None and stored.get(source.rel) == read[1]:
                    seen.add(source.rel)
                    skipped += 1
                elif read is not None and not (chunks := chunk_text(source.rel, read[0])):
                    tally.add(EMPTY, source.rel)
                elif read is not None:
                    seen.add(source.rel)
                    if source.rel in stored:
                        self.store.delete_paths(collection, [source.rel])
                    digest, count = read[1], len(chunks)
                    pending += [PendingChunk(c, digest, count, n) for n, c in enumerate(chunks)]
                    indexed += 1
                # A queued file counts as done once its chunks are stored, not when read.
                queued, done = (queued + 1, done) if chunks else (queued, done + 1)
                if len(pending) >= _FLUSH_CHUNKS:
                    written += self._flush(collection, pending)
                    done, queued = done + queued, 0
                if progress is not None:
                    progress(done, total, source.rel)
            complete = stop is None or not stop.is_set()
            # A stopped run neither embeds its queue (those files are re-indexed next time,
            # as their chunks are missing) nor removes files it has not looked at.
            written += self._flush(collection, pending) if complete else 0
            indexed -= 0 if complete else queued
            gone = sorted(set(stored) - seen) if complete else []
            self.store.delete_paths(collection, gone)
            self.store.mark_indexed(collection, root)
            if progress is not None and complete:
                progress(total, total, "")
            self.root = root
            return IndexReport(
                root=str(root),
                files_indexed=indexed,
                files_skipped_unchanged=skipped,
                files_removed=len(gone),
                chunks=written,
                total_chunks=collection.count(),
                seconds=round(time.perf_counter() - started, 3),
                complete=complete,
                skipped=dict(tally.counts.most_common()),
                skipped_examples=tally.examples,
                root_ignored_by=str(tally.root_ignored_by) if tally.root_ignored_by else None,
            )

    def _flush(self, collection: Collection, pending: list[PendingChunk]) -> int:
        """Embed and store the queued chunks, then empty the queue; returns how many."""
        if not pending:
            return 0
        vectors = self.embedding_fn.embed([_embedding_text(p.chunk) for p in pending])
        written = self.store.write(collection, pending, vectors)
        pending.clear()
        return written

    def _current(self, root: str | Path | None) -> Collection:
        target = resolve_root(root) if root is not None else self.root
        if target is None:
            raise UserInputError(
                "No directory has been indexed yet.", hint="Call index_directory(path) first."
            )
        collection = self.store.collection(target, create=False)
        if collection is None:
            raise UserInputError(
                f"'{target}' has not been indexed.", hint=f"Call index_directory('{target}') first."
            )
        return collection

    def catalog(self, root: str | Path | None = None) -> Catalog:
        """The chunk catalog of `root` (default: the current root), cached per index generation."""
        return self._catalog_of(self._current(root))

    def _catalog_of(self, collection: Collection) -> Catalog:
        key = self.store.generation(collection)
        cached = self._catalogs.get(collection.name)
        if cached is not None and cached[0] == key:
            return cached[1]
        catalog = Catalog(self.store.records(collection))
        self._catalogs[collection.name] = (key, catalog)
        return catalog

    def retrieve_code_context(
        self,
        query: str,
        k: int = 5,
        path_filter: str | None = None,
        *,
        root: str | Path | None = None,
    ) -> list[Hit]:
        """The `k` chunks most relevant to `query`, best first (vector + BM25 + names, fused)."""
        if not query.strip():
            raise UserInputError("The query is empty.", hint="Describe the code you want.")
        k = max(1, min(k, 50))
        collection = self._current(root)
        catalog = self._catalog_of(collection)
        if not catalog.records:
            return []
        allowed: set[str] | None = None
        where: dict[str, Any] | None = None
        if path_filter:
            paths = catalog.matching_paths(path_filter)
            if not paths:
                raise UserInputError(
                    f"No indexed file matches path_filter '{path_filter}'.",
                    hint="Use a glob such as 'src/**/*.py', a part of a path, or no filter.",
                )
            wanted = set(paths)
            allowed = {r.id for r in catalog.records if r.path in wanted}
            where = {"path": {"$in": paths}}
        depth = min(max(4 * k, 20), len(allowed) if allowed is not None else len(catalog.records))
        found = collection.query(
            query_embeddings=self.embedding_fn.embed([query]),
            n_results=depth, where=where, include=["distances"],
        )
        vector_ids = found["ids"][0]
        keyword_ids = catalog.keywords.rank(query, allowed, limit=depth)
        named_ids = [i for i in catalog.named_chunk_ids(query) if allowed is None or i in allowed]
        fused = reciprocal_rank_fusion([vector_ids, keyword_ids, named_ids])
        ranked = sorted(fused, key=lambda cid: -fused[cid])
        top_possible = 3.0 / (RRF_K + 1)
        hits = []
        for cid in _spread_over_files(ranked, catalog, k, self.per_file):
            r = catalog.by_id[cid]
            relative = round(fused[cid] / top_possible, 4)
            hits.append(Hit(r.path, r.start_line, r.end_line, r.symbol, relative, r.text))
        return sorted(hits, key=lambda h: -h.score)

    def occurrences(self, query: str, root: str | Path | None = None,
                    names: int = 3) -> dict[str, list[str]]:
        """Every indexed file that holds each identifier `query` names (snake_case,
        CamelCase, CONSTANT_CASE; at most `names` of them), for those that occur at all.

        Retrieval returns the few passages closest in meaning; where a name of the code
        occurs is an exact fact the index holds whole, and it is what "which files use X"
        asks. Measured on a held-out dev question: "which files reference PoolExhausted"
        came as a retrieval whose five passages were from three files, and the answer named
        the one that defines it, not the one that catches it.
        """
        catalog = self.catalog(root)
        wanted = [n for n in mentions(query)[1] if is_named_identifier(n)][:names]
        found = {name: catalog.files_naming(name) for name in wanted}
        return {name: files for name, files in found.items() if files}

    def find_files_for(self, question: str, root: str | Path | None = None) -> list[FileHint]:
        """Files and symbols a question names (`auth.py`, `build_agent`), exact matches first."""
        return self.catalog(root).find(question)
