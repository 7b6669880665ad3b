"""Measure what running the local model in a worker process costs, against running it in process.

Run: .venv/bin/python bench/local_worker.py [--repeat 3] [--new-tokens 64]
Prints a table and writes bench/results/local_worker.json.

Both engines get the same prompts (about 300 tokens, each opening with its run number so no
KV prefix is reused and every run processes the whole prompt) and generate the same number of
tokens greedily. Runs alternate in process / worker (and which goes first) so load drift on a
shared machine hits both alike. Reported per engine: time to first token, prompt processing
(prompt tokens / time to first token) and generation (tokens after the first / time after the
first), as medians, as the median of per-pair ratios, and as the best run of each (as
`timeit` does: the cost when nothing else interferes).

On a busy machine those end-to-end figures vary by 2x from run to run, far more than the
boundary costs, so the boundary is also measured on its own: the exact per-token exchange
(`("piece", text)`, `("ask", None)`, the answer) between two spawned processes, with no model,
as microseconds per token and as a share of the in-process time per generated token.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pilothouse.config import Settings
from pilothouse.models.local_engine import GenerationStats, open_engine
from pilothouse.models.local_turn import TurnEngine
from pilothouse.models.local_weights import ensure_local_model
from pilothouse.models.local_worker import shared_engine

OUTPUT = Path(__file__).resolve().parent / "results" / "local_worker.json"
CONTEXT = (
    "Applications: payments-api (Degraded, Synced), checkout-web (Healthy, OutOfSync), "
    "inventory (Healthy, Synced), ledger-worker (Progressing, Synced). "
)
PROMPT = (
    "<|im_start|>system\nRun {run}. You are Pilothouse, an assistant for platform engineers. "
    + CONTEXT * 6
    + "<|im_end|>\n<|im_start|>user\nDescribe each application's state in detail, one "
    "paragraph each.<|im_end|>\n<|im_start|>assistant\n"
)


def one_run(engine: TurnEngine, run: int, new_tokens: int) -> dict[str, float]:
    stats = GenerationStats()
    started = time.perf_counter()
    first = 0.0
    with engine.lock:
        for _ in engine.generate(PROMPT.format(run=run), stats=stats, max_tokens=new_tokens):
            if not first:
                first = time.perf_counter()
    ended = time.perf_counter()
    ttft = first - started
    return {
        "ttft_ms": ttft * 1000,
        "prompt_tokens_per_s": stats.prompt_tokens / ttft,
        "generation_tokens_per_s": (stats.completion_tokens - 1) / (ended - first),
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
    }


def _echo_tokens(conn: Connection, tokens: int) -> None:
    """The worker's side of `tokens` generated tokens, minus the model."""
    for _ in range(tokens):
        conn.send(("piece", " token"))
        conn.send(("ask", None))
        conn.recv()
    conn.send(("done", (0, tokens, "length")))


def boundary_microseconds(tokens: int = 5000) -> float:
    """Wall time per token of the worker protocol alone, parent side included."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe(duplex=True)
    process = context.Process(target=_echo_tokens, args=(child, tokens))
    process.start()
    child.close()
    kind, _ = parent.recv()  # the first message: the child is up
    started = time.perf_counter()
    while kind != "done":
        kind, _ = parent.recv()
        if kind == "ask":
            parent.send(False)
    elapsed = time.perf_counter() - started
    process.join()
    return elapsed / tokens * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--new-tokens", type=int, default=64)
    args = parser.parse_args()
    load_before = os.getloadavg()
    settings = Settings.from_env(dict(os.environ))
    path = ensure_local_model(settings)
    threads = settings.local_threads
    engines: dict[str, TurnEngine] = {
        "in process": open_engine(path, settings.local_context_tokens, threads),
        "worker": shared_engine(path, settings.local_context_tokens, threads),
    }
    for engine in engines.values():  # load the model, warm caches
        one_run(engine, -1, 4)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in engines}
    for run in range(args.repeat):
        order = list(engines) if run % 2 == 0 else list(reversed(engines))  # no order bias
        for name in order:
            runs[name].append(one_run(engines[name], run, args.new_tokens))
    metrics = ("ttft_ms", "prompt_tokens_per_s", "generation_tokens_per_s")
    medians = {name: {m: statistics.median(r[m] for r in rows) for m in metrics}
               for name, rows in runs.items()}
    base, worker = medians["in process"], medians["worker"]
    # Overhead as extra time: positive means the worker is slower.
    overhead = {
        "ttft_ms": worker["ttft_ms"] / base["ttft_ms"] - 1,
        "prompt_tokens_per_s": base["prompt_tokens_per_s"] / worker["prompt_tokens_per_s"] - 1,
        "generation_tokens_per_s":
            base["generation_tokens_per_s"] / worker["generation_tokens_per_s"] - 1,
    }
    table = Table(title=f"local model: in process vs worker (median of {args.repeat}, "
                        f"{settings.local_threads or os.cpu_count()} threads)")
    for column in ("measure", "in process", "worker", "worker overhead"):
        table.add_column(column)
    labels = {"ttft_ms": "time to first token (ms)", "prompt_tokens_per_s": "prompt tokens/s",
              "generation_tokens_per_s": "generated tokens/s"}
    for metric in metrics:
        table.add_row(labels[metric], f"{base[metric]:.1f}", f"{worker[metric]:.1f}",
                      f"{overhead[metric]:+.1%}")
    per_pair = {m: statistics.median(
        (w[m] / b[m] - 1) if m == "ttft_ms" else (b[m] / w[m] - 1)
        for b, w in zip(runs["in process"], runs["worker"], strict=True)) for m in metrics}
    for metric in metrics:
        table.add_row(f"{labels[metric]}, median of run pairs", "", "",
                      f"{per_pair[metric]:+.1%}")
    # Best of the runs, as `timeit` reports: what each engine costs when nothing else interferes.
    best = {name: {"ttft_ms": min(r["ttft_ms"] for r in rows),
                   "prompt_tokens_per_s": max(r["prompt_tokens_per_s"] for r in rows),
                   "generation_tokens_per_s": max(r["generation_tokens_per_s"] for r in rows)}
            for name, rows in runs.items()}
    best_overhead = {
        m: (best["worker"][m] / best["in process"][m] - 1) if m == "ttft_ms"
        else (best["in process"][m] / best["worker"][m] - 1) for m in metrics}
    for metric in metrics:
        table.add_row(f"{labels[metric]}, best run", f"{best['in process'][metric]:.1f}",
                      f"{best['worker'][metric]:.1f}", f"{best_overhead[metric]:+.1%}")
    boundary_us = boundary_microseconds()
    token_us = 1e6 / base["generation_tokens_per_s"]
    table.add_row("pipe round trip per token (us)", "", f"{boundary_us:.0f}",
                  f"{boundary_us / token_us:+.2%} of a token")
    Console().print(table)
    sample = runs["worker"][0]
    result: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "threads": settings.local_threads or os.cpu_count(),
        "prompt_tokens": sample["prompt_tokens"],
        "completion_tokens": sample["completion_tokens"],
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "median": medians,
        "worker_overhead": overhead,
        "worker_overhead_median_of_pairs": per_pair,
        "best": best,
        "worker_overhead_best": best_overhead,
        "boundary_us_per_token": boundary_us,
        "boundary_share_of_token_time": boundary_us / token_us,
        "runs": runs,
    }
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
