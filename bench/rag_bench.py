"""Measure codebase RAG on this repository: index speed, query latency and recall@5.

Run: .venv/bin/python bench/rag_bench.py
Prints a table and writes bench/results/rag_bench.json.

A full index of the checkout into a fresh store (files/s, chunks/s), a re-index (the cost
of the incremental check), then every question of evals/rag_questions.json asked
three times for latency (p50/p95; the first query, which loads the keyword catalog, is
reported apart) and once for recall@5 and MRR. Timings depend on how busy the machine is, so
the load average is recorded with them.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pilothouse.tools.rag.embeddings import MiniLMEmbeddings
from pilothouse.tools.rag.index import CodeIndex

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "evals" / "rag_questions.json"
OUTPUT = ROOT / "bench" / "results" / "rag_bench.json"
REPEATS = 3


def percentile(values: list[float], share: float) -> float:
    """The `share` quantile by nearest rank (no interpolation between two timings)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def embedding_rate(embeddings: MiniLMEmbeddings) -> dict[str, float]:
    """Raw model throughput on full 256-token inputs and on short ones."""
    body = "def handler_{}(request):\n    return respond(request)\n" * 40
    long_texts = [body.format(*[i] * 40) for i in range(64)]
    short_texts = [f"where is setting number {i} read" for i in range(256)]
    embeddings.embed(long_texts[:2])
    started = time.perf_counter()
    embeddings.embed(long_texts)
    long_rate = len(long_texts) / (time.perf_counter() - started)
    started = time.perf_counter()
    embeddings.embed(short_texts)
    short_rate = len(short_texts) / (time.perf_counter() - started)
    return {
        "chunks_256_tokens_per_s": round(long_rate, 1),
        "short_texts_per_s": round(short_rate, 1),
    }


def main() -> dict[str, Any]:
    spec = json.loads(QUESTIONS.read_text())
    questions = [(q["q"], set(q["expect"])) for q in spec["questions"]]
    load_before = os.getloadavg()
    embeddings = MiniLMEmbeddings()
    rates = embedding_rate(embeddings)
    with tempfile.TemporaryDirectory() as store:
        index = CodeIndex(Path(store), embeddings)
        full = index.index_directory(ROOT, exclude=spec["exclude_from_index"])
        # Files edited while the full pass ran are caught up first; the pass after that
        # measures the incremental check itself (ideally nothing to re-embed).
        index.index_directory(ROOT, exclude=spec["exclude_from_index"])
        again = index.index_directory(ROOT, exclude=spec["exclude_from_index"])
        started = time.perf_counter()
        index.retrieve_code_context(questions[0][0], k=5)
        first_query_ms = (time.perf_counter() - started) * 1000
        latencies: list[float] = []
        found, reciprocal = 0, 0.0
        ranks: list[int | None] = []
        for repeat in range(REPEATS):
            for text, expect in questions:
                started = time.perf_counter()
                hits = index.retrieve_code_context(text, k=5)
                latencies.append((time.perf_counter() - started) * 1000)
                if repeat == 0:
                    files = [h.path for h in hits]
                    rank = next((i for i, f in enumerate(files, 1) if f in expect), None)
                    ranks.append(rank)
                    found += rank is not None
                    reciprocal += 1.0 / rank if rank else 0.0
    load_after = os.getloadavg()
    return {
        "repository": str(ROOT),
        "cpus": os.cpu_count(),
        "load_average_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
        "embedding": rates,
        "index": {
            "files": full.files_indexed,
            "chunks": full.chunks,
            "seconds": full.seconds,
            "files_per_s": round(full.files_indexed / full.seconds, 2),
            "chunks_per_s": round(full.chunks / full.seconds, 2),
        },
        "reindex": {
            "files_skipped_unchanged": again.files_skipped_unchanged,
            "files_reindexed": again.files_indexed,
            "seconds": again.seconds,
        },
        "query_ms": {
            "first": round(first_query_ms, 1),
            "p50": round(statistics.median(latencies), 1),
            "p95": round(percentile(latencies, 0.95), 1),
            "samples": len(latencies),
        },
        "retrieval": {
            "questions": len(questions),
            "recall_at_1": round(sum(r == 1 for r in ranks) / len(questions), 3),
            "recall_at_3": round(sum(r is not None and r <= 3 for r in ranks) / len(questions),
                                 3),
            "recall_at_5": round(found / len(questions), 3),
            "mrr": round(reciprocal / len(questions), 3),
        },
    }


def show(result: dict[str, Any], console: Console) -> None:
    table = Table(title="Codebase RAG on this repository", title_justify="left")
    table.add_column("measure")
    table.add_column("value", justify="right")
    idx, query, ret = result["index"], result["query_ms"], result["retrieval"]
    again = result["reindex"]
    rows = [
        ("full index", f"{idx['files']} files, {idx['chunks']} chunks in {idx['seconds']:.1f} s"),
        ("index speed", f"{idx['files_per_s']} files/s, {idx['chunks_per_s']} chunks/s"),
        ("re-index (incremental)", f"{again['seconds']:.2f} s, {again['files_reindexed']} changed"),
        ("embedding (256-token chunks)", f"{result['embedding']['chunks_256_tokens_per_s']}/s"),
        ("embedding (short texts)", f"{result['embedding']['short_texts_per_s']}/s"),
        ("first query (loads catalog)", f"{query['first']} ms"),
        ("query p50 / p95", f"{query['p50']} / {query['p95']} ms ({query['samples']} runs)"),
        ("recall@1 / @3 / @5", f"{ret['recall_at_1']:.3f} / {ret['recall_at_3']:.3f} / "
                               f"{ret['recall_at_5']:.3f} over {ret['questions']} questions"),
        ("MRR", f"{ret['mrr']:.3f}"),
        ("load average before / after", " / ".join(map(str, result["load_average_before_after"]))),
    ]
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)


if __name__ == "__main__":
    outcome = main()
    show(outcome, Console())
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(outcome, indent=2) + "\n")
    print(f"wrote {OUTPUT.relative_to(ROOT)}", file=sys.stderr)
