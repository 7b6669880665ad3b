"""Measure how soon `pilothouse` commands answer: the median of 5 wall times per command.

Run: .venv/bin/python bench/cli_latency.py [--runs 5] [--src DIR --label NAME]
Prints a table and writes bench/results/cli_latency.json.

- `pilothouse --help` and `pilothouse version`: from spawn to exit.
- `pilothouse mcp argocd`: from spawn to the answer to an MCP `initialize` request sent on its
  stdin (how an agent starts its tool server), then stdin is closed and the server exits.

Each command runs once unmeasured first (bytecode caches, page cache). The machine's load
average (what `uptime` shows) is recorded before and after: on a shared machine it says how far
a figure is from an idle one. `--src` measures another tree (e.g. `git archive <commit> src |
tar -x -C /tmp/old`, then `--src /tmp/old/src --label before`): it goes first on PYTHONPATH.
Runs are kept in the JSON by label, so a `before` and an `after` sit side by side.
The issue's targets: `--help` under 1 s, `mcp argocd` initialize under 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "cli_latency.json"
#: Seconds each command should take at most (None: no target).
TARGETS: dict[str, float | None] = {"pilothouse --help": 1.0, "pilothouse version": None,
                                    "pilothouse mcp argocd (initialize)": 2.0}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "cli_latency", "version": "0"}}}


def pilothouse_command() -> list[str]:
    """The console script next to this interpreter (what a person types), else `-m`."""
    script = Path(sys.executable).with_name("pilothouse")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pilothouse"]


def run_to_exit(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, timeout=120)
    return time.perf_counter() - started


def run_to_initialize(command: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning the server to its answer to `initialize`."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    process.stdin.flush()
    answer = process.stdout.readline()
    elapsed = time.perf_counter() - started
    process.stdin.close()
    process.wait(timeout=60)
    process.stdout.close()
    if b'"serverInfo"' not in answer:
        raise RuntimeError(f"no initialize result from {command}: {answer[:300]!r}")
    return elapsed


def measure(runs: int, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    base = pilothouse_command()
    cases: dict[str, Callable[[], float]] = {
        "pilothouse --help": lambda: run_to_exit([*base, "--help"], env),
        "pilothouse version": lambda: run_to_exit([*base, "version"], env),
        "pilothouse mcp argocd (initialize)": lambda: run_to_initialize([*base, "mcp", "argocd"],
                                                                        env),
    }
    rows: dict[str, dict[str, Any]] = {}
    for name, once in cases.items():
        once()  # unmeasured: caches warm, as for a person's second command
        seconds = [once() for _ in range(runs)]
        rows[name] = {"median_s": round(statistics.median(seconds), 3),
                      "min_s": round(min(seconds), 3), "max_s": round(max(seconds), 3),
                      "runs_s": [round(s, 3) for s in seconds], "target_s": TARGETS[name]}
    return rows


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--src", type=Path, help="Measure this tree's pilothouse package.")
    parser.add_argument("--label", default="current", help="The run's name in the JSON.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PILOTHOUSE_", "ARGOCD_"))}
        env["PILOTHOUSE_HOME"] = home  # nothing of the person's state is read or written
        if args.src:
            env["PYTHONPATH"] = os.pathsep.join(
                [str(args.src.resolve()), *filter(None, [env.get("PYTHONPATH")])])
        before = load_average()
        rows = measure(args.runs, env)
        after = load_average()
    run = {"source": str(args.src) if args.src else "this checkout", "commands": rows,
           "load_average_before": before, "load_average_after": after,
           "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    results.setdefault("runs", {})[args.label] = run

    table = Table(title=f"pilothouse start-up, median of {args.runs} (load average "
                        f"{before[0]} -> {after[0]} on {os.cpu_count()} CPUs)")
    labels = list(results["runs"])
    for column in ("command", *(f"{label} s" for label in labels), "target s"):
        table.add_column(column, justify="left" if column == "command" else "right")
    for name in rows:
        cells = [str(results["runs"][label]["commands"].get(name, {}).get("median_s", "-"))
                 for label in labels]
        target = TARGETS[name]
        table.add_row(name, *cells, "-" if target is None else f"< {target:g}")
    Console().print(table)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
