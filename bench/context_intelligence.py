"""Measure context intelligence: tokens per call and whether the last answer's facts survive.

Run: .venv/bin/python bench/context_intelligence.py
Prints a table and writes bench/results/context_intelligence.json.

The session is the one of tests/context/test_intelligence.py: a diagnostic result in turn 1,
twelve turns of bulk listings, then a question that needs the turn-1 fact, against a scripted
8K-window model. Each piece is switched off in turn.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "context"))

from conftest import provider_count  # noqa: E402
from test_intelligence import FACT, final_request_text, run, step  # noqa: E402

from pilothouse.config import Settings  # noqa: E402
from pilothouse.models.registry import setup_model  # noqa: E402
from pilothouse.models.tokens import TokenCounter, tiktoken_counter  # noqa: E402
from pilothouse.runtime.events import ContextNote  # noqa: E402
from pilothouse.testing.scripted_model import ScriptedChatModel  # noqa: E402

VARIANTS = {
    "all on": "",
    "prioritization off": "prioritization",
    "correlation off": "correlation",
    "both off": "prioritization,correlation",
}


async def measure(name: str, disabled: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home:
        env = {
            "PILOTHOUSE_HOME": home,
            "PILOTHOUSE_MODEL": "openai:gpt-4",
            "MAX_CONTEXT_TOKENS": "8192",
        }
        if disabled:
            env["PILOTHOUSE_DISABLE_LAYERS"] = disabled
        settings = Settings.from_env(env)
        count = tiktoken_counter()
        assert count is not None
        model = ScriptedChatModel.from_steps(
            [],
            default=step,
            window_tokens=8192,
            count_tokens=provider_count(TokenCounter(count, source="t")),
        )
        setup = setup_model(settings, chat_model=model)
        events = await run(setup, settings)
        tokens = [r.tokens for r in model.requests]
        return {
            "variant": name,
            "calls": len(tokens),
            "mean_tokens": int(statistics.mean(tokens)),
            "last_call_tokens": tokens[-1],
            "fact_in_last_request": FACT in final_request_text(setup),
            "follow_up_linked": any(
                isinstance(e, ContextNote)
                and e.action.action == "correlated"
                and "payments-api" in e.action.detail
                for e in events
            ),
        }


def main() -> None:
    rows = [asyncio.run(measure(name, disabled)) for name, disabled in VARIANTS.items()]
    table = Table(title="Context intelligence: 14-turn session, 8K window")
    for column in (
        "variant",
        "calls",
        "mean tokens/call",
        "last call tokens",
        "turn-1 fact in last request",
        "follow-up linked",
    ):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row["variant"],
            str(row["calls"]),
            f"{row['mean_tokens']:,}",
            f"{row['last_call_tokens']:,}",
            str(row["fact_in_last_request"]),
            str(row["follow_up_linked"]),
        )
    Console().print(table)
    out = ROOT / "bench" / "results" / "context_intelligence.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
