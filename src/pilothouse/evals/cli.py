"""`pilothouse eval`: score the agents end to end on the evaluation cases, with a progress bar."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError, UserInputError

if TYPE_CHECKING:
    from pilothouse.evals.harness import RunOptions
    from pilothouse.evals.runner import CaseResult

# Off a terminal (CI logs, files) Rich would wrap the tables at 80 columns.
_out = Console(width=None if sys.stdout.isatty() else 160)
_err = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def _fail(error: PilothouseError) -> typer.Exit:
    _err.print(f"[bold red]Error:[/] {error.message}", highlight=False)
    if error.hint:
        _err.print(f"[yellow]What to do:[/] {error.hint}", highlight=False)
    return typer.Exit(2)


async def _run(settings: Settings, cases_paths: list[Path], only: list[str],
               per_category: int | None, options: RunOptions,
               judge_model: str | None) -> tuple[list[CaseResult], str]:
    # The agents and sandboxes load heavy modules: only `pilothouse eval` pays for them.
    from pilothouse.evals.cases import load_cases, world_of
    from pilothouse.evals.harness import run_evaluation
    from pilothouse.evals.judge import Judge
    from pilothouse.models.registry import build_chat_model, setup_model
    from pilothouse.sandbox.worlds import world_named

    cases = load_cases(cases_paths, only=only, per_category=per_category)
    world = world_named(world_of(cases)).key
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=_err, transient=False) as progress:
        preparing = progress.add_task("Preparing the model", total=None)

        def weights(done: int, total: int) -> None:
            progress.update(preparing, description="Preparing the local model (once)",
                            completed=done, total=total)

        model = setup_model(settings, progress=weights)
        if judge_model:
            judge_settings = settings.with_model(judge_model, "--judge")
            options.judge = Judge(build_chat_model(judge_settings), judge_settings.model)
        progress.remove_task(preparing)
        task = progress.add_task(f"Evaluating {model.name} ({_scope(options.split, world)})",
                                 total=len(cases))

        def status(text: str) -> None:
            progress.update(task, description=text)

        def finished(result: CaseResult) -> None:
            mark = "[green]pass[/]" if result.passed else "[red]FAIL[/]"
            failed = "; ".join(f"{c.name}: {c.detail}" for c in result.failed_checks)
            progress.console.print(f"{mark} {result.id} ({result.seconds:.1f} s, "
                                   f"{result.model_calls} model calls)"
                                   + (f"  [dim]{escape(failed[:200])}[/]" if failed else ""),
                                   highlight=False)
            progress.advance(task)

        results = await run_evaluation(settings, model, cases, options, on_status=status,
                                       on_result=finished)
        return results, world


def _scope(split: str | None, world: str) -> str:
    """What a run measured: "test split, world <name>" (cases given as paths: the world)."""
    return f"{split} split, world {world}" if split else f"world {world}"


def eval_command(
    cases: Annotated[list[Path] | None, typer.Argument(
        help="Case files or folders of them (default: the --split's folder).")] = None,
    split: Annotated[str, typer.Option(
        help="Which cases: dev (evals/cases, the default world: what the product was "
             "developed against) or test (evals/test_split, another world, written once and "
             "never tuned to).")] = "dev",
    model: Annotated[str | None, typer.Option(
        "--model", help="provider:model to evaluate (default: PILOTHOUSE_MODEL).")] = None,
    report: Annotated[Path | None, typer.Option(
        help="Write the JSON report here (rewritten after every case).")] = None,
    only: Annotated[list[str] | None, typer.Option(
        "--only", help="Run only these case ids or categories (repeatable).")] = None,
    per_category: Annotated[int | None, typer.Option(
        "--per-category", min=1, help="Run only the first N cases of each category (a "
        "sample that covers every category, the same on every run).")] = None,
    judge: Annotated[str | None, typer.Option(
        help="provider:model of an LLM judge that grades each answer too (optional).")] = None,
    workspace: Annotated[Path | None, typer.Option(
        help="The repository the DevOps cases work in (copied; never changed; default: the "
             "world's codebase, e.g. evals/workspace for the dev split).")] = None,
    turn_timeout: Annotated[float, typer.Option(
        min=1, help="Seconds one turn may take before it counts as failed.")] = 900.0,
    fail_under: Annotated[float, typer.Option(
        min=0, max=1, help="Exit 1 when the pass rate is below this share (e.g. 0.8).")] = 0.0,
) -> None:
    """Run evaluation cases through the supervisor against the sandboxes and score them.

    Prints a line per case as it finishes, then the failed checks and the pass rate, tokens
    and latency per category. Exit 0 when the run completed (and met --fail-under).
    """
    from pilothouse.evals.cases import SPLITS
    from pilothouse.evals.harness import RunOptions
    from pilothouse.evals.report import by_category, case_table, summary_table
    from pilothouse.observability.operations import operations

    if split not in SPLITS:
        raise typer.BadParameter("choose one of " + ", ".join(SPLITS), param_hint="--split")
    try:
        settings = Settings.from_env()
        if model:
            settings = settings.with_model(model)
        options = RunOptions(workspace=workspace, report=report, turn_timeout=turn_timeout,
                             split=None if cases else split)
        with operations(settings):
            results, world = asyncio.run(_run(settings, cases or [SPLITS[split]],
                                              list(only or []), per_category, options, judge))
    except PilothouseError as error:
        raise _fail(error) from None
    if not results:
        raise _fail(UserInputError("No case ran.", hint="Check the case files and --only."))
    _out.print(case_table([r for r in results if not r.passed] or results))
    summaries = by_category(results)
    _out.print(summary_table(summaries, f"Evaluation of {settings.model} "
                                        f"({_scope(options.split, world)})"))
    if report:
        _err.print(f"Report: {report}", highlight=False)
    raise typer.Exit(1 if summaries[-1].pass_rate < fail_under else 0)
