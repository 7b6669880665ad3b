"""Code chunks in an embedded ChromaDB store: one collection per indexed root.

Each chunk's metadata carries its file's content hash and the number of chunks the file
produced; together they tell an unchanged file (same hash, all chunks present) from one that
changed or that an interrupted run left half-written. A collection's `generation` counts index
runs, so readers know when a cached view of it is stale.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import numpy.typing as npt
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings as ChromaSettings

from pilothouse.errors import ConfigurationError
from pilothouse.private_files import private_dir
from pilothouse.tools.rag.catalog import ChunkRecord
from pilothouse.tools.rag.chunking import Chunk
from pilothouse.tools.rag.embeddings import MiniLMEmbeddings

_PAGE = 2000
_DELETE_BATCH = 200


@dataclass(frozen=True)
class PendingChunk:
    """A chunk on its way into the store, with what its file's records must carry."""

    chunk: Chunk
    digest: str
    count: int
    ordinal: int

    @property
    def id(self) -> str:
        # The content hash keeps a changed file's ids apart from stale ones an interrupted
        # run may have left behind.
        path_key = hashlib.sha1(self.chunk.path.encode()).hexdigest()[:12]
        return f"{path_key}-{self.digest[:8]}-{self.ordinal}"

    def metadata(self) -> dict[str, Any]:
        c = self.chunk
        return {
            "path": c.path, "language": c.language, "symbol": c.symbol,
            "names": " ".join(c.names), "start_line": c.start_line, "end_line": c.end_line,
            "file_hash": self.digest, "chunk_count": self.count,
        }


class ChunkStore:
    """A persistent ChromaDB client whose collections always use our offline embeddings."""

    def __init__(self, path: Path, embedding_fn: MiniLMEmbeddings) -> None:
        self.path = path
        self.embedding_fn = embedding_fn
        try:
            private_dir(path)  # the index quotes the code: as private as the conversations
            self._client = chromadb.PersistentClient(
                path=str(path),
                # Telemetry would try the network on every start; we run offline.
                settings=ChromaSettings(anonymized_telemetry=False),
            )
        except (OSError, ValueError) as exc:
            raise ConfigurationError(
                f"Cannot open the code index store at {path}: {exc}",
                hint="Check the directory's permissions or set PILOTHOUSE_HOME elsewhere.",
            ) from exc

    @staticmethod
    def collection_name(root: Path) -> str:
        """The collection of `root`, named from its absolute path (names are length-limited)."""
        return "code-" + hashlib.sha256(str(root).encode()).hexdigest()[:20]

    def collection(self, root: Path, *, create: bool) -> Collection | None:
        """The collection of `root`; None when it does not exist and `create` is false."""
        name = self.collection_name(root)
        # Never let Chroma fall back to its default function: that one downloads a model.
        function: Any = self.embedding_fn
        if create:
            return self._client.get_or_create_collection(
                name,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"root": str(root), "generation": 0},
                embedding_function=function,
            )
        if name not in {c.name for c in self._client.list_collections()}:
            return None
        return self._client.get_collection(name, embedding_function=function)

    def roots(self) -> list[str]:
        """Every directory the store holds an index of."""
        collections = self._client.list_collections()
        return sorted(str((c.metadata or {}).get("root", c.name)) for c in collections)

    def write(
        self, collection: Collection, pending: list[PendingChunk], vectors: npt.NDArray[np.float32]
    ) -> int:
        """Store chunks with their vectors, in batches Chroma accepts; returns the count."""
        limit = self._client.get_max_batch_size()
        for start in range(0, len(pending), limit):
            batch = pending[start : start + limit]
            metadatas: Any = [p.metadata() for p in batch]
            collection.add(
                ids=[p.id for p in batch],
                embeddings=vectors[start : start + limit],
                documents=[p.chunk.text for p in batch],
                metadatas=metadatas,
            )
        return len(pending)

    @staticmethod
    def delete_paths(collection: Collection, paths: list[str]) -> None:
        """Remove every chunk of these files."""
        for start in range(0, len(paths), _DELETE_BATCH):
            where: dict[str, Any] = {"path": {"$in": paths[start : start + _DELETE_BATCH]}}
            collection.delete(where=where)

    @staticmethod
    def stored_hashes(collection: Collection) -> dict[str, str | None]:
        """path -> content hash of its complete stored chunks (None: incomplete, re-index)."""
        hashes: dict[str, set[str]] = defaultdict(set)
        present: dict[str, int] = defaultdict(int)
        expected: dict[str, int] = {}
        for _, meta, _ in _rows(collection, include=["metadatas"]):
            path = str(meta["path"])
            hashes[path].add(str(meta["file_hash"]))
            present[path] += 1
            expected[path] = int(meta["chunk_count"])
        return {
            path: next(iter(h)) if len(h) == 1 and present[path] == expected[path] else None
            for path, h in hashes.items()
        }

    @staticmethod
    def records(collection: Collection) -> list[ChunkRecord]:
        """Every chunk of a collection, text included."""
        return [
            ChunkRecord(
                id=cid, path=str(m["path"]), symbol=str(m["symbol"]),
                names=tuple(str(m["names"]).split()), start_line=int(m["start_line"]),
                end_line=int(m["end_line"]), text=doc or "",
            )
            for cid, m, doc in _rows(collection, include=["metadatas", "documents"])
        ]

    @staticmethod
    def generation(collection: Collection) -> tuple[int, int]:
        """Changes whenever the collection's content may have: (chunk count, index runs)."""
        return collection.count(), int((collection.metadata or {}).get("generation", 0))

    @staticmethod
    def mark_indexed(collection: Collection, root: Path) -> None:
        """Record one more completed index run."""
        runs = int((collection.metadata or {}).get("generation", 0)) + 1
        collection.modify(metadata={"root": str(root), "generation": runs})


_Row = tuple[str, dict[str, Any], str | None]


def _rows(collection: Collection, include: list[str]) -> list[_Row]:
    """Every (id, metadata, document) of a collection, fetched in bounded pages."""
    rows: list[_Row] = []
    offset = 0
    fields: Any = include
    while True:
        batch = collection.get(include=fields, limit=_PAGE, offset=offset)
        ids = batch["ids"]
        metas = batch["metadatas"] or [{}] * len(ids)
        docs: list[str | None] = [None] * len(ids)
        if batch["documents"]:
            docs = list(batch["documents"])
        rows += [(i, dict(m or {}), d) for i, m, d in zip(ids, metas, docs, strict=True)]
        if len(ids) < _PAGE:
            return rows
        offset += _PAGE
