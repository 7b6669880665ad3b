"""The llama.cpp runtime behind the local chat model; it runs inside the model worker process.

One `Llama` is loaded lazily per engine (~1.5 s, 1.9 GiB). llama.cpp contexts are not thread
safe; `local_worker` serializes turns on its lock and runs this engine in a child process, so a
native fault in llama.cpp kills the worker, never the agent. Prompt processing is the slow part
on CPU (~90 tokens/s), so the engine keeps the KV cache of the last prompt and, when a turn
switches to a different prompt, snapshots the old one so the next turn can resume it. With a
`PrefixStore`, each distinct system prefix is also saved to disk once, so the next process
resumes it too (`local_prefix_store`).
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import io
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pilothouse.errors import ConfigurationError, ModelProviderError
from pilothouse.models import local_llama_adapter as adapter
from pilothouse.models.local_prefix_store import PrefixStore, store_dir

# Keep this many tokens free for the answer before calling a prompt too long.
MIN_ANSWER_TOKENS = 256
# Snapshot the KV cache before discarding at least this many cached tokens.
SNAPSHOT_MIN_TOKENS = 128
SNAPSHOT_BUDGET_BYTES = 512 * 2**20
log = logging.getLogger("pilothouse.models")
_IM_START = "<|im_start|>"
#: Where a prompt's stable part ends: the system prompt and tool schemas come before it.
_FIRST_TURN = "<|im_start|>user"


class ContextOverflowError(ModelProviderError):
    """The rendered prompt does not fit the local model's context window."""

    def __init__(self, prompt_tokens: int, context_tokens: int, reserved: int) -> None:
        super().__init__(
            f"The prompt of {prompt_tokens} tokens plus {reserved} tokens reserved for the answer "
            f"exceeds the context window of {context_tokens} tokens.",
            hint="Shorten the conversation or raise PILOTHOUSE_LOCAL_CONTEXT_TOKENS.",
        )
        self.prompt_tokens = prompt_tokens
        self.context_tokens = context_tokens
        self.reserved = reserved


class DeferredStop(Protocol):
    """A stop check whose answer may arrive while the next token is being computed.

    The model worker asks its parent after each token and reads the answer only when the next
    token is ready, so decoding never waits for the parent to be scheduled (on a busy 2-core
    machine that wait can take milliseconds, against ~30 ms per token).
    """

    def ask(self) -> None:
        """Ask whether to stop after the token just produced."""

    def answer(self) -> bool:
        """The answer to the last question (waits for it if need be)."""


@dataclass
class GenerationStats:
    """Filled in by `LocalEngine.generate` as it runs."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
    #: Prompt tokens actually evaluated: the rest came from the KV cache (latency's measure).
    read_tokens: int = 0


def _import_llama() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:  # the sdist build failed or was skipped
        raise ConfigurationError(
            f"The local model runtime is not installed ({exc}).",
            hint="pip install 'llama-cpp-python>=0.3.16,<0.4' (compiles llama.cpp, ~14 min).",
        ) from None
    return llama_cpp


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class LocalEngine:
    """A loaded GGUF model with a lock, KV snapshots and a streaming token loop."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int | None,
                 store: PrefixStore | None = None) -> None:
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.lock = threading.Lock()
        self._llama: Any = None
        self._snapshots: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self._snapshots_ok = True
        self._grammars: dict[str, Any] = {}
        self.store = store

    @property
    def llama(self) -> Any:
        """The `llama_cpp.Llama`, loaded on first use."""
        if self._llama is None:
            llama_cpp = _import_llama()
            try:
                self._llama = llama_cpp.Llama(
                    str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    verbose=False,
                )
            except (ValueError, OSError) as exc:
                raise ConfigurationError(
                    f"llama.cpp could not load {self.path}: {exc}",
                    hint="Delete the file to have it re-assembled, or check "
                    "PILOTHOUSE_LOCAL_MODEL_PATH.",
                ) from exc
        return self._llama

    def tokenize(self, prompt: str) -> list[int]:
        """Prompt tokens, with ChatML markers parsed as special tokens."""
        return list(self.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    def _grammar(self, text: str) -> Any:
        """A `LlamaGrammar`, parsed once by llama.cpp up front: an invalid grammar makes
        llama-cpp-python add a NULL sampler and crash the process instead of raising."""
        if text not in self._grammars:
            llama_cpp = _import_llama()
            vocab = llama_cpp.llama_model_get_vocab(self.llama.model)
            sampler = llama_cpp.llama_sampler_init_grammar(vocab, text.encode(), b"root")
            if not sampler:
                raise ValueError("llama.cpp rejected the tool-call grammar")
            llama_cpp.llama_sampler_free(sampler)
            if len(self._grammars) > 32:
                self._grammars.clear()
            self._grammars[text] = llama_cpp.LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]

    # -- KV snapshots ------------------------------------------------------------------------
    # Through `local_llama_adapter` (llama.cpp's per-sequence state API). Any failure disables
    # them: they are an optimization, never a reason to fail a turn.

    def _snapshot(self) -> None:
        self._remember(*adapter.save_sequence(self.llama, _import_llama()))

    def _remember(self, key: tuple[int, ...], data: bytes) -> None:
        self._snapshots[key] = data
        self._snapshots.move_to_end(key)
        while sum(len(v) for v in self._snapshots.values()) > SNAPSHOT_BUDGET_BYTES \
                and len(self._snapshots) > 1:
            self._snapshots.popitem(last=False)

    def _restore(self, key: tuple[int, ...]) -> None:
        adapter.restore_sequence(self.llama, _import_llama(), key, self._snapshots[key])
        self._snapshots.move_to_end(key)

    def _reuse_best_prefix(self, tokens: list[int]) -> None:
        if not self._snapshots_ok:
            return
        llm = self.llama
        try:
            cached = adapter.cached_tokens(llm)
            current = _common_prefix(cached, tokens)
            if len(cached) - current >= SNAPSHOT_MIN_TOKENS:
                self._snapshot()
            best, best_len = None, current
            for key in self._snapshots:
                shared = _common_prefix(key, tokens)
                if shared > best_len + SNAPSHOT_MIN_TOKENS // 4:
                    best, best_len = key, shared
            best = self._load_stored(tokens, best_len) or best
            if best is not None:
                self._restore(best)
        except Exception:
            self._snapshots_ok = False
            self._snapshots.clear()
            llm.reset()  # KV state unknown: start clean rather than decode on garbage

    # -- the store on disk: never a reason to fail a turn either ------------------------------

    def _load_stored(self, tokens: list[int], best_len: int) -> tuple[int, ...] | None:
        """Bring into memory the stored state sharing more of `tokens` than `best_len`: its key."""
        if self.store is None:
            return None
        try:
            best, length = None, best_len + SNAPSHOT_MIN_TOKENS // 4
            for key in self.store.stored():
                shared = _common_prefix(key, tokens)
                if key not in self._snapshots and shared > length:
                    best, length = key, shared
            data = self.store.load(best) if best is not None else None
            if best is not None and data is not None:
                self._remember(best, data)
                return best
        except Exception as error:
            log.warning("Local model prefix store unusable, going on without it: %s", error)
            self.store = None
        return None

    def _stable_prefix(self, tokens: list[int], prompt: str) -> int:
        """How many of `tokens` are the prompt's system part (all of them without a turn)."""
        start = prompt.find(_FIRST_TURN)
        return len(tokens) if start < 0 else len(self.tokenize(prompt[:start]))

    def _save_stable_prefix(self, tokens: list[int], prompt: str) -> None:
        """Store the KV state once per distinct system prefix, for the next process."""
        if self.store is None or not self._snapshots_ok:
            return
        try:
            stable = tokens[:self._stable_prefix(tokens, prompt)]
            if len(stable) >= SNAPSHOT_MIN_TOKENS and not self.store.covers(stable):
                self.store.save(*adapter.save_sequence(self.llama, _import_llama()))
        except Exception as error:
            log.warning("Local model prefix store unusable, going on without it: %s", error)
            self.store = None

    # -- generation --------------------------------------------------------------------------

    def generate(
        self,
        prompt: str,
        *,
        stats: GenerationStats,
        max_tokens: int,
        temperature: float = 0.0,
        grammar: str | None = None,
        stop: Sequence[str] = (),
        should_stop: Callable[[], bool] | None = None,
        deferred_stop: DeferredStop | None = None,
    ) -> Iterator[str]:
        """Yield the answer text piece by piece; the caller must hold `self.lock`.

        After every token, `should_stop` is called, or `deferred_stop` asked and its answer
        taken just before the next token is used: the same tokens come out either way.
        Raises `ContextOverflowError` before decoding anything if the prompt does not fit.
        """
        llama_cpp = _import_llama()
        llm = self.llama
        tokens = self.tokenize(prompt)
        reserve = min(max_tokens, MIN_ANSWER_TOKENS)
        if len(tokens) + reserve > self.n_ctx:
            raise ContextOverflowError(len(tokens), self.n_ctx, reserve)
        budget = min(max_tokens, self.n_ctx - len(tokens))
        compiled = self._grammar(grammar) if grammar else None
        self._reuse_best_prefix(tokens)
        # llama.cpp evaluates at least the last prompt token, even when all of it is cached.
        reused = min(_common_prefix(adapter.cached_tokens(llm), tokens), len(tokens) - 1)
        stats.prompt_tokens, stats.completion_tokens, stats.finish_reason = len(tokens), 0, "length"
        stats.read_tokens = len(tokens) - max(reused, 0)
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        im_start = llm.tokenize(_IM_START.encode(), add_bos=False, special=True)[0]
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        hold = max((len(s) for s in stop), default=1) - 1
        text, sent = "", 0
        asked = False
        for token in llm.generate(tokens, temp=temperature, grammar=compiled, reset=True):
            if asked:
                asked = False
                if deferred_stop is not None and deferred_stop.answer():
                    stats.finish_reason = "stop"
                    break
            if llama_cpp.llama_vocab_is_eog(vocab, token) or token == im_start:
                stats.finish_reason = "stop"
                break
            stats.completion_tokens += 1
            text += decoder.decode(llm.detokenize([token], special=True))
            hit = min((i for s in stop if (i := text.find(s, sent)) >= 0), default=-1)
            if hit >= 0:
                text = text[:hit]
                stats.finish_reason = "stop"
                break
            if len(text) - hold > sent:  # hold back what might be the start of a stop string
                yield text[sent : len(text) - hold]
                sent = len(text) - hold
            if stats.completion_tokens >= budget:
                break
            if should_stop is not None and should_stop():
                stats.finish_reason = "stop"
                break
            if deferred_stop is not None:
                deferred_stop.ask()
                asked = True
        if asked and deferred_stop is not None:
            deferred_stop.answer()  # keep the exchange in step; the turn is over anyway
        text += decoder.decode(b"", final=True)
        if len(text) > sent:
            yield text[sent:]
        self._save_stable_prefix(tokens, prompt)


_ENGINES: list[LocalEngine] = []
_ENGINES_LOCK = threading.Lock()
_VOCABS: dict[str, Any] = {}


def open_engine(path: Path | str, n_ctx: int, n_threads: int | None = None,
                prefix_store: Path | None = None) -> LocalEngine:
    """An engine in this process (the worker's, or a benchmark's); freed at exit.

    `prefix_store`: the folder of the KV prefixes kept across processes (None: none kept).
    """
    model = Path(path).resolve()
    store = None
    if prefix_store is not None:
        with contextlib.suppress(OSError, ConfigurationError):  # no store: slower, not broken
            store = PrefixStore(store_dir(prefix_store, model, n_ctx,
                                          str(_import_llama().__version__)))
    engine = LocalEngine(model, n_ctx, n_threads, store)
    with _ENGINES_LOCK:
        _ENGINES.append(engine)
    return engine


@atexit.register
def _close_all() -> None:
    """Free llama.cpp models while the interpreter is still whole: left to module teardown,
    `Llama.__del__` runs after llama_cpp's globals are gone and prints a traceback."""
    for engine in list(_ENGINES):
        # Never free a model under a generation still running in some thread.
        if engine._llama is not None and engine.lock.acquire(timeout=5):
            engine._llama.close()
            engine._llama = None
            engine.lock.release()
    for vocab in list(_VOCABS.values()):
        vocab.close()
    _VOCABS.clear()


def vocab_model(path: Path | str) -> Any:
    """A vocabulary-only `Llama` for `path` (~0.5 s to load, no weights), shared."""
    key = str(Path(path).resolve())
    with _ENGINES_LOCK:
        vocab = _VOCABS.get(key)
        if vocab is None:
            llama_cpp = _import_llama()
            # A vocabulary-only load makes llama.cpp warn "n_ctx_seq (512) > n_ctx_train (0)",
            # and llama-cpp-python maps that warning to ERROR so `verbose=False` still prints
            # it: a meaningless alarm on every CLI start. Its log callback writes to sys.stderr.
            with contextlib.redirect_stderr(io.StringIO()):
                vocab = llama_cpp.Llama(key, vocab_only=True, verbose=False)
            _VOCABS[key] = vocab
        return vocab


def local_token_counter(path: Path | str) -> Callable[[str], int]:
    """Count tokens of plain text exactly as the local model does (~166k tokens/s)."""
    vocab = vocab_model(path)

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return count
