"""KV prefixes kept on disk: a second model process resumes the first one's system prompt.

The store on its own (files, budget, several readers), then two real worker processes running
the real model one after the other: the second reads only its new turn, and answers exactly as
a process without the store does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pilothouse.config import Settings
from pilothouse.models.local_engine import GenerationStats
from pilothouse.models.local_prefix_store import PrefixStore, store_dir
from pilothouse.models.local_weights import ensure_local_model
from pilothouse.models.local_worker import WorkerEngine

MODELS_DIR = Path(
    os.environ.get("PILOTHOUSE_TEST_MODELS_DIR", "~/.cache/pilothouse-test/models")
).expanduser()
SYSTEM = ("<|im_start|>system\nYou answer questions about an inventory of services. "
          + " ".join(f"Service {i} runs on cluster c{i % 7} in project p{i % 5}."
                     for i in range(40))
          + "<|im_end|>\n")
TURN = "<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n"


def test_entries_survive_a_new_store_and_the_budget_drops_the_oldest(tmp_path: Path) -> None:
    first = PrefixStore(tmp_path)
    first.save([1, 2, 3, 4], b"a" * 100)
    first.save([1, 2, 9], b"b" * 100)

    reader = PrefixStore(tmp_path)  # another process: it reads the folder
    assert sorted(reader.stored()) == [(1, 2, 3, 4), (1, 2, 9)]
    assert reader.covers([1, 2, 3]) and not reader.covers([1, 3])
    assert reader.load((1, 2, 9)) == b"b" * 100
    assert reader.load((7,)) is None

    small = PrefixStore(tmp_path, budget_bytes=150)
    os.utime(tmp_path / next(p.name for p in tmp_path.glob("*.kv")), (0, 0))  # the oldest
    small.save([5, 6], b"c" * 100)
    assert len(small.stored()) == 1 and small.covers([5, 6])
    assert len(list(tmp_path.glob("*.kv"))) == len(list(tmp_path.glob("*.tokens"))) == 1


def test_a_state_without_its_token_list_is_not_an_entry(tmp_path: Path) -> None:
    # A writer killed between its two renames leaves a state no reader can match: ignored.
    (tmp_path / "0123.kv").write_bytes(b"x")
    (tmp_path / ".0123.tokens.99").write_bytes(b"")
    assert PrefixStore(tmp_path).stored() == []


def test_entries_are_kept_apart_by_model_file_and_context_size(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"weights")
    folder = store_dir(tmp_path, model, 8192, "0.3.36")
    assert folder == store_dir(tmp_path, model, 8192, "0.3.36")
    assert folder != store_dir(tmp_path, model, 4096, "0.3.36")
    assert folder != store_dir(tmp_path, model, 8192, "0.3.37")
    os.utime(model, (1, 1))  # the file was replaced
    assert folder != store_dir(tmp_path, model, 8192, "0.3.36")


def _answer(engine: WorkerEngine, question: str) -> tuple[str, GenerationStats]:
    stats = GenerationStats()
    with engine.lock:
        text = "".join(engine.generate(SYSTEM + TURN.format(question), stats=stats,
                                       max_tokens=12))
    return text, stats


@pytest.mark.local_model
def test_a_new_process_resumes_the_system_prompt_from_the_store(tmp_path: Path) -> None:
    path = ensure_local_model(Settings(home=MODELS_DIR.parent))
    threads = Settings().local_threads
    store = tmp_path / "kv"

    first = WorkerEngine(path, 2048, threads, str(store))
    try:
        _, cold = _answer(first, "Which cluster runs service 12?")
    finally:
        first.close()
    assert cold.read_tokens == cold.prompt_tokens > 500  # nothing stored yet: all read
    assert list(store.rglob("*.kv"))

    question = "Which project owns service 33?"
    second = WorkerEngine(path, 2048, threads, str(store))
    plain = WorkerEngine(path, 2048, threads, None)
    try:
        warm_text, warm = _answer(second, question)
        plain_text, fresh = _answer(plain, question)
    finally:
        second.close()
        plain.close()
    assert fresh.read_tokens == fresh.prompt_tokens
    assert warm.read_tokens < 40 < warm.prompt_tokens  # only the new turn was read
    assert warm_text == plain_text
