"""Evaluation results as tables (per case, per category) and as a JSON report."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from pilothouse.evals.cases import CATEGORIES
from pilothouse.evals.checks import Check
from pilothouse.evals.runner import CaseResult


@dataclass(frozen=True)
class Summary:
    """Totals of a group of cases (a category, or all)."""

    name: str
    cases: int
    passed: int
    model_calls: float
    prompt_tokens: float
    completion_tokens: float
    peak_prompt_tokens: int
    seconds: float
    context: dict[str, int]
    #: Prompt tokens evaluated per case (the local model's cache supplied the rest).
    read_tokens: float = 0.0
    median_seconds: float = 0.0

    @property
    def pass_rate(self) -> float:
        return self.passed / self.cases if self.cases else 0.0


def summarize(name: str, results: Sequence[CaseResult]) -> Summary:
    """Pass count, mean cost per case, the highest peak prompt, and every context action."""

    def mean(values: list[float]) -> float:
        return statistics.fmean(values) if values else 0.0

    context: Counter[str] = Counter()
    for result in results:
        context.update(result.context)
    return Summary(
        name=name, cases=len(results), passed=sum(r.passed for r in results),
        model_calls=mean([r.model_calls for r in results]),
        prompt_tokens=mean([r.prompt_tokens for r in results]),
        completion_tokens=mean([r.completion_tokens for r in results]),
        peak_prompt_tokens=max((r.peak_prompt_tokens for r in results), default=0),
        seconds=mean([r.seconds for r in results]), context=dict(sorted(context.items())),
        read_tokens=mean([r.read_tokens for r in results]),
        median_seconds=statistics.median([r.seconds for r in results]) if results else 0.0)


def by_category(results: Sequence[CaseResult]) -> list[Summary]:
    """One summary per category (in the order of `CATEGORIES`), then "all"."""
    present = {r.category for r in results}
    names = [c for c in CATEGORIES if c in present] + sorted(present - set(CATEGORIES))
    return [summarize(n, [r for r in results if r.category == n]) for n in names] + [
        summarize("all", results)]


def _actions(context: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in context.items()) or "-"


def case_table(results: Sequence[CaseResult]) -> Table:
    """One row per case: verdict, the checks that failed, and its cost."""
    table = Table(title="Evaluation cases", title_justify="left")
    for column in ("case", "result", "failed checks"):
        table.add_column(column, overflow="fold")
    for column in ("calls", "prompt tok", "peak", "s"):
        table.add_column(column, justify="right")
    table.add_column("context", overflow="fold")
    for r in results:
        failed = "; ".join(f"{c.name}: {c.detail}" for c in r.failed_checks)
        table.add_row(r.id, "[green]pass[/]" if r.passed else "[red]FAIL[/]",
                      escape(failed[:240]) or "-",
                      str(r.model_calls), f"{r.prompt_tokens:,}", f"{r.peak_prompt_tokens:,}",
                      f"{r.seconds:.1f}", _actions(r.context))
    return table


def _read(tokens: float) -> str:
    """Tokens evaluated per case; "-" for a model that does not report them (not local)."""
    return f"{tokens:,.0f}" if tokens else "-"


def summary_table(summaries: Sequence[Summary], title: str) -> Table:
    """Pass rate and mean cost per category."""
    table = Table(title=title, title_justify="left")
    table.add_column("category")
    for column in ("passed", "rate", "calls/case", "prompt tok/case", "read tok/case",
                   "completion tok/case", "peak prompt", "s/case", "median s"):
        table.add_column(column, justify="right")
    table.add_column("context actions", overflow="fold")
    for s in summaries:
        table.add_row(s.name, f"{s.passed}/{s.cases}", f"{s.pass_rate:.0%}",
                      f"{s.model_calls:.1f}", f"{s.prompt_tokens:,.0f}", _read(s.read_tokens),
                      f"{s.completion_tokens:,.0f}", f"{s.peak_prompt_tokens:,}",
                      f"{s.seconds:.1f}", f"{s.median_seconds:.1f}", _actions(s.context))
    return table


def markdown_report(document: dict[str, Any]) -> str:
    """A JSON report's category table and failed cases as Markdown (for docs/evaluation.md)."""
    meta = document.get("meta") or {}
    scope = [f"{key} {meta[key]}" for key in ("split", "world") if meta.get(key)]
    lines = [f"Cases: {', '.join(scope)}.", ""] if scope else []
    lines += ["| category | passed | rate | calls/case | prompt tok/case | read tok/case "
             "| completion tok/case | peak prompt | s/case | median s | context actions |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in document["summary"]:
        lines.append(f"| {s['name']} | {s['passed']}/{s['cases']} | {s['pass_rate']:.0%} | "
                     f"{s['model_calls']:.1f} | {s['prompt_tokens']:,.0f} | "
                     f"{_read(s.get('read_tokens', 0))} | "
                     f"{s['completion_tokens']:,.0f} | {s['peak_prompt_tokens']:,} | "
                     f"{s['seconds']:.1f} | {s.get('median_seconds', 0):.1f} | "
                     f"{_actions(s['context'])} |")
    failed = [c for c in document["cases"] if not c["passed"]]
    if failed:
        lines += ["", "| failed case | checks that failed |", "|---|---|"]
        for case in failed:
            checks = "; ".join(f"{c['name']}: {c['detail']}" for c in case["checks"]
                               if not c["passed"])
            lines.append(f"| {case['id']} | {checks.replace('|', '/')[:300]} |")
    return "\n".join(lines)


def load_results(paths: Sequence[Path]) -> list[CaseResult]:
    """The cases of JSON reports, in order; a case in a later report replaces an earlier one.

    So a run stopped half-way and one over the remaining cases make one result set.
    """
    merged: dict[str, CaseResult] = {}
    for path in paths:
        for case in json.loads(path.read_text())["cases"]:
            fields = {k: v for k, v in case.items() if k != "passed"}
            fields["checks"] = [Check(**check) for check in case["checks"]]
            merged[case["id"]] = CaseResult(**fields)
    return list(merged.values())


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m pilothouse.evals.report REPORT.json...`: the reports as one Markdown table."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m pilothouse.evals.report",
        description="Print `pilothouse eval` JSON reports as one Markdown table per category "
                    "(a case in several reports counts once, as the last report has it).")
    parser.add_argument("reports", nargs="+", type=Path, metavar="REPORT.json")
    paths: list[Path] = parser.parse_args(argv).reports
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no such report: {', '.join(missing)} (write one with "
                     "`pilothouse eval --report FILE`)")
    try:
        results = load_results(paths)
        meta = json.loads(paths[-1].read_text()).get("meta") or {}
    # JSONDecodeError is a ValueError; a document that is no mapping, an AttributeError.
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        parser.error(f"not a `pilothouse eval` report ({type(error).__name__}: {error})")
    print(markdown_report(report_document(results, meta)))


def report_document(results: Sequence[CaseResult], meta: dict[str, Any]) -> dict[str, Any]:
    """The JSON report: run facts, category summaries, and every case with its checks."""
    summaries = by_category(results)
    return {
        "meta": meta,
        "summary": [{**asdict(s), "pass_rate": round(s.pass_rate, 4)} for s in summaries],
        "cases": [{**asdict(r), "passed": r.passed} for r in results],
    }


def write_report(path: Path, results: Sequence[CaseResult], meta: dict[str, Any]) -> None:
    """Write the JSON report atomically (a run stopped half-way leaves a readable file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(report_document(results, meta), indent=2, default=str) + "\n")
    partial.replace(path)


if __name__ == "__main__":
    main()
