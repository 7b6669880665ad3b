"""Measure what the local model's prefix store saves a new process: `pilothouse ask`, end to end.

Run: .venv/bin/python bench/local_prefix_store.py [--question "..."]
Prints a table and writes bench/results/local_prefix_store.json.

Each `pilothouse ask --agent argocd` is a new process with a new model worker, against the
Argo CD sandbox (819 apps) on 127.0.0.1, so it reads the Argo CD agent's system prompt and tool
schemas (~3,500 tokens) before its first token unless the store holds them. Three runs in a
fresh PILOTHOUSE_HOME: the store empty (it is filled by this run), the store filled, and the
store switched off (PILOTHOUSE_LOCAL_PREFIX_CACHE=0). Each row: seconds until the first tool
call (process start, model load, the agent's first prompt read: what the store saves) and until
the command ended, from the `--json` events as they arrive.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pilothouse.config import Settings
from pilothouse.models.local_weights import ensure_local_model
from pilothouse.sandbox.argocd.server import running_sandbox

OUTPUT = Path(__file__).resolve().parent / "results" / "local_prefix_store.json"
CLI = Path(sys.executable).with_name("pilothouse")


def ask(question: str, env: dict[str, str]) -> dict[str, Any]:
    """One `pilothouse ask` process: when it called its first tool, when it ended."""
    started = time.perf_counter()
    first_call = None
    answered = False
    with subprocess.Popen([str(CLI), "ask", question, "--agent", "argocd", "--json"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as run:
        assert run.stdout is not None
        for line in run.stdout:  # one event per line, as it happens
            kind = json.loads(line).get("kind") if line.startswith("{") else None
            if kind == "tool_call" and first_call is None:
                first_call = time.perf_counter() - started
            answered = answered or kind == "answer"
    return {"first_tool_call_s": round(first_call or 0.0, 1),
            "seconds": round(time.perf_counter() - started, 1), "exit": run.returncode,
            "answered": answered}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", default="Which applications are Degraded?")
    args = parser.parse_args()
    load_before = os.getloadavg()
    model = ensure_local_model(Settings.from_env(dict(os.environ)))
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as home, running_sandbox(apps=819) as sandbox:
        env = {**os.environ, "PILOTHOUSE_HOME": home, "PILOTHOUSE_LOCAL_MODEL_PATH": str(model),
               "ARGOCD_URL": sandbox.url, "ARGOCD_TOKEN": sandbox.token, "NO_COLOR": "1"}
        rows["store empty (first process)"] = ask(args.question, env)
        rows["store filled (next process)"] = ask(args.question, env)
        rows["store off"] = ask(args.question, {**env, "PILOTHOUSE_LOCAL_PREFIX_CACHE": "0"})
    table = Table(title=f"pilothouse ask --agent argocd {args.question!r}, a new process each")
    for column in ("run", "first tool call (s)", "whole command (s)", "answered", "exit"):
        table.add_column(column)
    for name, row in rows.items():
        table.add_row(name, f"{row['first_tool_call_s']:.1f}", f"{row['seconds']:.1f}",
                      str(row["answered"]), str(row["exit"]))
    Console().print(table)
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_text(json.dumps({"question": args.question, "runs": rows,
                                  "load_before": load_before, "load_after": os.getloadavg(),
                                  "cpus": os.cpu_count()}, indent=2) + "\n")
    print(f"Wrote {OUTPUT}")


if __name__ == "__main__":
    main()
