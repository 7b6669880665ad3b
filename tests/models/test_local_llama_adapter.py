"""The private llama-cpp-python behaviour `local_llama_adapter` relies on, against the real model.

If an upgrade of llama-cpp-python changes how `Llama` records its KV cache, these fail (they
do not skip): prefix reuse would otherwise sample from stale logits or decode on garbage.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pilothouse.config import Settings
from pilothouse.models import local_llama_adapter as adapter
from pilothouse.models.local_engine import GenerationStats, LocalEngine, open_engine
from pilothouse.models.local_weights import ensure_local_model

pytestmark = pytest.mark.local_model

MODELS_DIR = Path(
    os.environ.get("PILOTHOUSE_TEST_MODELS_DIR", "~/.cache/pilothouse-test/models")
).expanduser()
TURN = "<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n"
FIRST = TURN.format("Name the capital of France in one word.")
OTHER = TURN.format("Write the number seven in digits.")


@pytest.fixture(scope="module")
def engine() -> Iterator[LocalEngine]:
    """In this process on purpose: the adapter is about the library, not the worker."""
    path = ensure_local_model(Settings(home=MODELS_DIR.parent))
    engine = open_engine(path, 1024, n_threads=Settings().local_threads)
    yield engine


def _greedy(llm: Any, prompt: str, n: int = 6) -> list[int]:
    tokens = llm.tokenize(prompt.encode(), add_bos=False, special=True)
    out = []
    for token in llm.generate(tokens, temp=0.0):
        out.append(int(token))
        if len(out) == n:
            break
    return out


def test_a_restored_sequence_continues_exactly_like_a_fresh_decode(engine: LocalEngine) -> None:
    import llama_cpp

    llm = engine.llama
    fresh = _greedy(llm, FIRST)
    tokens = llm.tokenize(FIRST.encode(), add_bos=False, special=True)
    llm.reset()
    llm.eval(tokens)
    assert adapter.cached_tokens(llm) == list(tokens)
    key, data = adapter.save_sequence(llm, llama_cpp)
    assert key == tuple(tokens) and len(data) > 1000

    other = _greedy(llm, OTHER)  # overwrites the cache and the logits
    assert adapter.cached_tokens(llm)[: len(tokens)] != list(tokens)
    adapter.restore_sequence(llm, llama_cpp, key, data)
    assert adapter.cached_tokens(llm) == list(tokens)
    # The exact prompt again: generate() must decode before sampling, not reuse OTHER's logits.
    assert _greedy(llm, FIRST) == fresh
    assert _greedy(llm, OTHER) == other


def test_the_engine_keeps_its_snapshots_across_prompt_switches(engine: LocalEngine) -> None:
    long_a = FIRST.replace("France", "France. " + "Context. " * 80)
    long_b = OTHER.replace("seven", "seven. " + "Context. " * 80)
    answers = []
    for prompt in (long_a, long_b, long_a):
        with engine.lock:
            answers.append("".join(engine.generate(prompt, stats=GenerationStats(),
                                                   max_tokens=4)))
    assert engine._snapshots_ok and len(engine._snapshots) >= 1
    assert answers[0] == answers[2]
