"""One evaluation run: open the world, run every case, score, report as results arrive."""

from __future__ import annotations

import platform
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pilothouse import __version__
from pilothouse.config import Settings
from pilothouse.evals.cases import Case, world_of
from pilothouse.evals.environment import open_world
from pilothouse.evals.judge import Judge
from pilothouse.evals.recorder import ModelRecorder
from pilothouse.evals.report import write_report
from pilothouse.evals.runner import CaseResult, CaseRunner, TurnHook
from pilothouse.models.registry import ModelSetup
from pilothouse.sandbox.worlds import world_named


@dataclass
class RunOptions:
    """How to run: where the workspace comes from, where the report goes, per-turn limits.

    `workspace` None: the codebase of the cases' world (`WorldDescription.workspace`).
    """

    workspace: Path | None = None
    report: Path | None = None
    #: The split the cases come from, for the report ("dev", "test"; None: cases given as
    #: paths).
    split: str | None = None
    turn_timeout: float = 900.0

    @property
    def agent_timeout(self) -> float:
        """A sub-agent's limit: inside the turn's, so its timeout names the agent."""
        return self.turn_timeout * 0.8
    judge: Judge | None = None
    #: Called before each turn (the oracle model of the harness's self-check follows it).
    before_turn: TurnHook | None = None


def run_meta(settings: Settings, model: ModelSetup, cases: Sequence[Case],
             options: RunOptions) -> dict[str, Any]:
    """Facts about the run that make its figures comparable with another run's."""
    return {"pilothouse": __version__, "split": options.split,
            "world": world_named(world_of(cases)).key,
            "model": model.name, "window_tokens": model.window.tokens,
            "token_counter": model.counter.source, "cases": len(cases),
            "judge": options.judge.name if options.judge else None,
            "local_threads": settings.local_threads, "python": platform.python_version(),
            "machine": platform.machine(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


async def run_evaluation(
    settings: Settings, model: ModelSetup, cases: Sequence[Case], options: RunOptions, *,
    on_status: Callable[[str], None] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Run `cases` through the supervisor; the report is rewritten after every case."""
    meta = run_meta(settings, model, cases, options)
    results: list[CaseResult] = []
    async with open_world(settings, model, options.workspace,
                          world=world_named(world_of(cases)),
                          agent_timeout=options.agent_timeout, progress=on_status) as world:
        recorder = ModelRecorder(model.counter)
        recorder.attach(model.chat_model)
        runner = CaseRunner(world, recorder, run_id=uuid.uuid4().hex[:8],
                            turn_timeout=options.turn_timeout, before_turn=options.before_turn)
        try:
            for case in cases:
                if on_status:
                    on_status(case.id)
                result = await runner.run(case)
                if options.judge is not None:
                    result.checks.append(await options.judge.grade(case, result.answer,
                                                                   result.tool_calls))
                results.append(result)
                if options.report is not None:
                    write_report(options.report, results, meta)
                if on_result:
                    on_result(result)
        finally:
            recorder.detach(model.chat_model)
    return results
