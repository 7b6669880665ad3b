"""KV states of prompt prefixes on disk, so a new process starts where the last one left off.

Every agent's prompt opens with its system prompt and tool schemas: ~1,000 tokens for the
supervisor, ~3,500 for the Argo CD agent. On two cores llama.cpp reads ~90 prompt tokens/s, so
a fresh process (each `pilothouse ask`, the demo, a restarted server) spent ~50 s re-reading
the same prefixes before its first answer. `LocalEngine` keeps snapshots in memory within a
process; this store keeps them across processes: after a call, the engine saves its KV state
once per distinct system prefix (~28 KiB per token, ~100 MB for the Argo CD agent), and a later
process restores the entry that shares the longest prefix with its prompt.

Entries are keyed by the model file (path, size, modification time), the context size and
llama-cpp-python's version, because a KV state is only meaningful to the same weights and
runtime. Files are written to a temporary name and renamed, so a reader never sees half an
entry and several processes may share a store; the least recently used entries go when the
store passes its budget. A store that cannot be read or written is an optimization lost, never
a failed turn: the engine logs it and stops using the store.
"""

from __future__ import annotations

import hashlib
import logging
import os
from array import array
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger("pilothouse.models")

#: Disk the store may use; the oldest entries go first beyond it.
STORE_BUDGET_BYTES = 1024 * 2**20
_TOKENS, _STATE = ".tokens", ".kv"


def store_dir(root: Path, model: Path, n_ctx: int, runtime_version: str) -> Path:
    """The folder of the entries valid for this model file, context size and runtime."""
    stat = model.stat()
    identity = f"{model.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{n_ctx}|{runtime_version}"
    return root / hashlib.sha256(identity.encode()).hexdigest()[:16]


def _name(tokens: Sequence[int]) -> str:
    return hashlib.sha256(array("i", tokens).tobytes()).hexdigest()[:24]


class PrefixStore:
    """Saved KV states on disk, found by the tokens they hold."""

    def __init__(self, folder: Path, budget_bytes: int = STORE_BUDGET_BYTES) -> None:
        self.folder = folder
        self.budget_bytes = budget_bytes
        self._index: dict[tuple[int, ...], str] | None = None

    def _entries(self) -> dict[tuple[int, ...], str]:
        if self._index is None:
            index: dict[tuple[int, ...], str] = {}
            for path in self.folder.glob(f"*{_TOKENS}") if self.folder.is_dir() else ():
                if not path.with_suffix(_STATE).is_file():
                    continue
                tokens = array("i")
                tokens.frombytes(path.read_bytes())
                index[tuple(tokens)] = path.stem
            self._index = index
        return self._index

    def stored(self) -> list[tuple[int, ...]]:
        """The token sequences of the stored states."""
        return list(self._entries())

    def covers(self, prefix: Sequence[int]) -> bool:
        """Whether some stored state starts with `prefix`."""
        wanted = tuple(prefix)
        return any(key[:len(wanted)] == wanted for key in self._entries())

    def load(self, key: tuple[int, ...]) -> bytes | None:
        """The state stored for `key` (None if another process evicted it meanwhile)."""
        name = self._entries().get(key)
        if name is None:
            return None
        state = self.folder / f"{name}{_STATE}"
        try:
            data = state.read_bytes()
            os.utime(state)  # recently used: evicted last
        except FileNotFoundError:
            self._entries().pop(key, None)
            return None
        return data

    def save(self, key: Sequence[int], data: bytes) -> None:
        """Store `data` as the state of `key`, then trim the store to its budget."""
        self.folder.mkdir(parents=True, exist_ok=True)
        name = _name(key)
        for suffix, body in ((_STATE, data), (_TOKENS, array("i", key).tobytes())):
            temporary = self.folder / f".{name}{suffix}.{os.getpid()}"
            temporary.write_bytes(body)
            temporary.replace(self.folder / f"{name}{suffix}")  # the .tokens file last: the
            # index only lists entries whose state is complete
        self._entries()[tuple(key)] = name
        self._trim()

    def _trim(self) -> None:
        states = sorted(self.folder.glob(f"*{_STATE}"), key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in states)
        while states and total > self.budget_bytes:
            oldest = states.pop(0)
            total -= oldest.stat().st_size
            oldest.with_suffix(_TOKENS).unlink(missing_ok=True)
            oldest.unlink(missing_ok=True)
            self._index = None  # re-read: cheaper than mapping names back to keys
