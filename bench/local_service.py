"""Measure `pilothouse ask` on the warm local model service against a command that loads it.

Run: .venv/bin/python bench/local_service.py [--runs 10] [--cold-runs 3]
Prints a table and writes bench/results/local_service.json.

Two questions, each asked by a new `pilothouse ask --json` process (as a person types it) against
the Argo CD sandbox (819 apps) on 127.0.0.1:
- "greeting": `pilothouse ask "Hello! What can you help me with?"` (the supervisor);
- "count": `pilothouse ask --agent argocd "How many applications are there?"`: one tool call,
  then the answer (the listing's view, no model lead).
Each turn starts with a structured call (the request frame or a tool call), which is shown
whole when generated, so the command's first model output is an event (`tool_call` or
`token`): "first output" is the seconds from spawning the command to it. With the service,
its log tells when the model's first token came (`model first token`: spawn to the first
piece of the command's first generation) and how many prompt tokens it read rather than took
from memory. The greeting is judged by its first model token, the count by the whole command.
Answers are capped at 64 tokens (PILOTHOUSE_MAX_OUTPUT_TOKENS): the figures are the first
output and the count's view, and a long greeting would only add minutes per run.

Four ways, each in a fresh PILOTHOUSE_HOME:
- before, first process: PILOTHOUSE_LOCAL_IDLE_SECONDS=0 (every command loads the model in a
  worker of its own, as before the service) and nothing stored yet: the first `ask` ever;
- before, next processes: the same home again, its prompts' KV state now on disk
  (median of --cold-runs);
- service, first command: no service runs yet: this command starts it and loads the model;
- service, warm: the service runs and has answered the same question once (median of --runs).
The machine's load average is recorded before and after (on a shared machine it says how far a
figure is from an idle one). The issue's targets, warm: first token < 3 s, count < 10 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pilothouse.config import Settings
from pilothouse.models.local_service_control import stop_service
from pilothouse.models.local_service_files import service_paths
from pilothouse.models.local_weights import ensure_local_model
from pilothouse.sandbox.argocd.server import running_sandbox

OUTPUT = Path(__file__).resolve().parent / "results" / "local_service.json"
CLI = Path(sys.executable).with_name("pilothouse")
QUESTIONS = {
    "greeting": ["Hello! What can you help me with?"],
    "count": ["How many applications are there?", "--agent", "argocd"],
}
#: Which figure each question is judged by, and its target when the service is warm.
FIGURE = {"greeting": ("model_first_token_s", 3.0), "count": ("seconds", 10.0)}
WAYS = ("before, first process", "before, next processes", "service, first command",
        "service, warm")


def service_log(env: dict[str, str]) -> Path:
    return service_paths(Path(env["PILOTHOUSE_HOME"])).log


def first_generation(lines: list[str], spawned: float) -> tuple[float | None, int | None]:
    """From the service's log lines of one command: seconds from `spawned` (wall clock) to the
    model's first token, and the prompt tokens its first generation read."""
    for line in lines:
        found = re.search(r"^(\S+ \S+) INFO .*generation: \d+ prompt tokens \(read (\d+)\), "
                          r"\d+ answer tokens; first piece ([\d.]+) s, all ([\d.]+) s", line)
        if found:
            logged = datetime.strptime(found[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            first_token = logged - float(found[4]) + float(found[3])
            return round(first_token - spawned, 2), int(found[2])
    return None, None


def ask(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One `pilothouse ask` process: when its first output and model token came, when it ended."""
    log = service_log(env)
    logged = log.stat().st_size if log.exists() else 0
    spawned = time.time()
    started = time.perf_counter()
    seen: dict[str, float] = {}
    kinds: list[str] = []
    with subprocess.Popen([str(CLI), "ask", *args, "--json"], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as run:
        assert run.stdout is not None
        for line in run.stdout:  # one event per line, as it happens
            kind = json.loads(line).get("kind") if line.startswith("{") else None
            if kind:
                seen.setdefault(kind, time.perf_counter() - started)
                kinds.append(kind)
    seconds = time.perf_counter() - started
    lines = []
    if log.exists():
        with log.open() as text:
            text.seek(logged)
            lines = text.read().splitlines()
    model_first, read = first_generation(lines, spawned)
    outputs = [seen[k] for k in ("token", "tool_call") if k in seen]
    return {"first_output_s": round(min(outputs, default=seconds), 2),
            "model_first_token_s": model_first, "read_tokens": read,
            "seconds": round(seconds, 2), "exit": run.returncode,
            "answered": "answer" in kinds and "error" not in kinds}


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of the runs of one question and way, with every run kept."""
    def median(key: str) -> float | None:
        values = [r[key] for r in runs if r[key] is not None]
        return round(statistics.median(values), 2) if values else None

    return {"first_output_s": median("first_output_s"),
            "model_first_token_s": median("model_first_token_s"),
            "read_tokens": median("read_tokens"), "seconds": median("seconds"),
            "answered": sum(r["answered"] for r in runs), "count": len(runs), "runs": runs}


@contextmanager
def fresh_home(base: dict[str, str], **extra: str) -> Iterator[dict[str, str]]:
    """The environment of a new PILOTHOUSE_HOME; its model service, if any, stopped after."""
    with tempfile.TemporaryDirectory(prefix="ph-bench-") as home:
        try:
            yield {**base, "PILOTHOUSE_HOME": home, **extra}
        finally:
            stop_service(service_paths(Path(home)))


def measure(question: list[str], base: dict[str, str], runs: int,
            cold_runs: int) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    with fresh_home(base, PILOTHOUSE_LOCAL_IDLE_SECONDS="0") as env:
        rows[WAYS[0]] = summary([ask(question, env)])
        rows[WAYS[1]] = summary([ask(question, env) for _ in range(cold_runs)])
    with fresh_home(base) as env:
        rows[WAYS[2]] = summary([ask(question, env)])
        ask(question, env)  # unmeasured: the service has seen this question once
        rows[WAYS[3]] = summary([ask(question, env) for _ in range(runs)])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=10, help="Warm runs per question.")
    parser.add_argument("--cold-runs", type=int, default=3,
                        help="Runs per question of a command that loads the model itself.")
    parser.add_argument("--label", default="current", help="The run's name in the JSON.")
    args = parser.parse_args()
    model = ensure_local_model(Settings.from_env(dict(os.environ)))
    load_before = [round(x, 2) for x in os.getloadavg()]
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with running_sandbox(apps=819) as sandbox:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PILOTHOUSE_",
                                                                           "ARGOCD_"))}
        base.update({"PILOTHOUSE_LOCAL_MODEL_PATH": str(model), "ARGOCD_URL": sandbox.url,
                     "ARGOCD_TOKEN": sandbox.token, "NO_COLOR": "1",
                     "PILOTHOUSE_MAX_OUTPUT_TOKENS": "64"})
        for name, question in QUESTIONS.items():
            results[name] = measure(question, base, args.runs, args.cold_runs)
    load_after = [round(x, 2) for x in os.getloadavg()]

    table = Table(title=f"pilothouse ask, a new process each (load average {load_before[0]} -> "
                        f"{load_after[0]} on {os.cpu_count()} CPUs)")
    for column in ("question", "way", "runs", "first output s", "model first token s",
                   "prompt read", "whole command s", "answered", "target"):
        table.add_column(column, justify="left" if column in ("question", "way") else "right")
    for name, rows in results.items():
        key, target = FIGURE[name]
        for way, row in rows.items():
            met = "" if way != WAYS[3] else \
                f"{'met' if (row[key] or 0) < target else 'missed'}: {key} < {target:g}"
            table.add_row(name, way, str(row["count"]), str(row["first_output_s"]),
                          str(row["model_first_token_s"] or "-"),
                          str(row["read_tokens"] if row["read_tokens"] is not None else "-"),
                          str(row["seconds"]), f"{row['answered']}/{row['count']}", met)
    Console().print(table)
    stored: dict[str, Any] = json.loads(OUTPUT.read_text()) if OUTPUT.exists() else {}
    stored["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    stored.setdefault("runs", {})[args.label] = {
        "questions": {name: " ".join(q) for name, q in QUESTIONS.items()},
        "results": results, "load_average_before": load_before,
        "load_average_after": load_after, "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_text(json.dumps(stored, indent=2) + "\n")
    print(f"written to {OUTPUT.relative_to(OUTPUT.parents[2])}")


if __name__ == "__main__":
    main()
