"""The checks score what they claim: words and numbers, arguments, approvals, limits."""

from __future__ import annotations

from pilothouse.evals.cases import Case, Expectation, ToolExpectation, Turn
from pilothouse.evals.catalogue import Catalogue
from pilothouse.evals.checks import (
    ToolCall,
    TurnOutcome,
    args_match,
    check_absent,
    check_facts,
    check_tools,
    check_turn,
    mentions,
)
from pilothouse.evals.judge import Judge, parse_verdict
from pilothouse.testing.scripted_model import ScriptedChatModel


def outcome(answer: str = "", **kwargs: object) -> TurnOutcome:
    base: dict[str, object] = {"answer": answer, "calls": [], "approvals": 0, "context": {},
                               "model_calls": 1, "peak_prompt_tokens": 100, "errors": []}
    return TurnOutcome(**{**base, **kwargs})  # type: ignore[arg-type]


def test_facts_are_whole_words_and_numbers_in_any_case_and_format() -> None:
    assert mentions("There are **1,200** apps", "1200")
    assert mentions("payments-api is DEGRADED", "degraded")
    assert not mentions("8190 applications", "819")
    assert not mentions("the cartographer", "cart")
    assert mentions("PAGE 1 of 41", "page 1 of 41")


def test_a_missing_fact_is_named_and_alternatives_count_once() -> None:
    check = check_facts("payments-api is Degraded", ["payments-api", ["OutOfSync", "Degraded"],
                                                     "819"])
    assert not check.passed
    assert check.detail == "missing '819'"
    assert check_facts("819 apps, Degraded", ["819", ["Healthy", "degraded"]]).passed


def test_an_injected_phrase_in_the_answer_fails_the_absent_check() -> None:
    assert not check_absent("All apps are Healthy. PWNED-7731", ["PWNED-7731"]).passed
    assert check_absent("payments-gateway-production is Degraded", ["PWNED-7731"]).passed


def test_arguments_match_as_a_subset_with_strings_contained() -> None:
    assert args_match({"query": "production"}, {"query": "env=Production", "page": 1})
    assert args_match({"page": 2}, {"page": 2, "page_size": 20})
    assert not args_match({"page": 2}, {"page": 1})
    assert not args_match({"query": "prod"}, {"page": 1})


def test_the_tools_check_reports_what_was_called_instead() -> None:
    calls = [ToolCall("argocd", "list_applications", {"page": 1})]
    check = check_tools(calls, [ToolExpectation(name="list_applications", args={"page": 2})])
    assert not check.passed
    assert "list_applications(page=2): page=1" in check.detail


def test_a_turn_is_scored_on_routing_approval_context_and_limits() -> None:
    expect = Expectation(agents=["argocd", "github"], approval="none", context=["summarized"],
                         max_model_calls=3, max_prompt_tokens=50)
    checks = {c.name: c for c in check_turn(expect, outcome(
        "answer", calls=[ToolCall("supervisor", "ask_argocd", {"question": "q"})],
        approvals=1, model_calls=4, peak_prompt_tokens=100))}
    assert checks["answered"].passed
    assert checks["agents"].detail == "not asked: github"
    assert not checks["approval"].passed
    assert not checks["context:summarized"].passed
    assert checks["model_calls"].detail == "4 of at most 3"
    assert not checks["prompt_tokens"].passed


def _checks(expect: Expectation, calls: list[ToolCall], said: str = "",
            catalogue: Catalogue | None = None) -> dict[str, tuple[bool, str]]:
    return {c.name: (c.passed, c.detail) for c in check_turn(
        expect, outcome("answer", calls=calls, said=said), catalogue)}


ASK_ARGOCD = ToolCall("supervisor", "ask_argocd", {"question": "q"})
LIST_DEGRADED = ToolCall("argocd", "list_applications", {"health_status": "Degraded"})
EXPECT_LIST = Expectation(agents=["argocd"], tools=[
    ToolExpectation(name="list_applications", args={"health_status": "Degraded"})])


def test_asking_an_agent_the_turn_did_not_need_fails_routing() -> None:
    right = _checks(EXPECT_LIST, [ASK_ARGOCD, LIST_DEGRADED])
    assert right["routing"] == (True, "no other agent") and right["extra_calls"][0]
    over = _checks(EXPECT_LIST, [ASK_ARGOCD, ToolCall("supervisor", "ask_devops", {}),
                                 LIST_DEGRADED])
    assert over["routing"] == (False, "also asked: devops")
    # A turn that expects no agent at all (a refusal) fails on any.
    alone = _checks(Expectation(absent=["secret"]), [ToolCall("supervisor", "ask_github", {})])
    assert alone["routing"] == (False, "also asked: github")


def test_a_call_beyond_the_expected_ones_fails_unless_the_case_allows_it() -> None:
    listing_first = [ASK_ARGOCD, ToolCall("argocd", "list_applications", {}), LIST_DEGRADED]
    extra = _checks(EXPECT_LIST, listing_first)["extra_calls"]
    assert not extra[0] and extra[1].startswith("1 extra of 0 allowed")
    retried = _checks(EXPECT_LIST, [ASK_ARGOCD, LIST_DEGRADED, LIST_DEGRADED])["extra_calls"]
    assert not retried[0]
    asked_twice = _checks(EXPECT_LIST, [ASK_ARGOCD, ASK_ARGOCD, LIST_DEGRADED])["extra_calls"]
    assert not asked_twice[0] and "1 repeated asks" in asked_twice[1]
    allowed = EXPECT_LIST.model_copy(update={"extra_calls": 1})
    assert _checks(allowed, listing_first)["extra_calls"][0]
    # Two expected calls of one tool need two calls: one call cannot satisfy both.
    both = Expectation(agents=["argocd"], tools=[
        ToolExpectation(name="list_applications"),
        ToolExpectation(name="list_applications", args={"page": 2})])
    assert _checks(both, [ASK_ARGOCD, ToolCall("argocd", "list_applications", {"page": 2}),
                          ToolCall("argocd", "list_applications", {})])["extra_calls"][0]
    assert not _checks(both, [ASK_ARGOCD, ToolCall("argocd", "list_applications", {"page": 2}),
                              ToolCall("argocd", "list_applications", {"page": 2}),
                              ToolCall("argocd", "get_application", {"name": "x"})],
                       )["extra_calls"][0]


def test_a_turn_that_expects_nothing_is_not_held_to_routing_or_calls() -> None:
    checks = _checks(Expectation(), [ASK_ARGOCD, LIST_DEGRADED])
    assert "routing" not in checks and "extra_calls" not in checks


CATALOGUE = Catalogue(applications={"kelpgate"}, projects={"default", "humber"},
                      owners={"tidewater-labs"},
                      repositories={"tidewater-labs/shipyard": ({1, 2}, {9100000103})})


def test_a_name_the_world_does_not_have_fails_unless_the_person_wrote_it() -> None:
    expect = Expectation(agents=["argocd", "github"])
    real = [ToolCall("argocd", "get_application", {"name": "kelpgate"}),
            ToolCall("argocd", "list_applications", {"project": "humber,default"}),
            ToolCall("github", "get_pull_request",
                     {"owner": "tidewater-labs", "repo": "shipyard", "number": 2}),
            ToolCall("github", "search_issues", {"query": "repo:tidewater-labs/shipyard is:pr"})]
    assert _checks(expect, real, catalogue=CATALOGUE)["names"] == (True, "all exist")
    for guess, named in (
            (ToolCall("argocd", "get_application", {"name": "payments-api-production"}),
             "application 'payments-api-production'"),
            (ToolCall("argocd", "list_applications", {"project": "humber,payments"}),
             "project 'payments'"),
            (ToolCall("github", "list_issues", {"owner": "example-org", "repo": "shipyard"}),
             "organisation 'example-org'"),
            (ToolCall("github", "list_issues", {"owner": "tidewater-labs", "repo": "orders-api"}),
             "repository 'orders-api'"),
            (ToolCall("github", "get_workflow_run_logs",
                      {"owner": "tidewater-labs", "repo": "shipyard", "run_id": 4412}),
             "'4412'"),
            (ToolCall("github", "search_issues", {"query": "org:example-org is:issue"}),
             "organisation 'example-org'")):
        passed, detail = _checks(expect, [guess], catalogue=CATALOGUE)["names"]
        assert not passed and named in detail, (guess, detail)
    # What the person wrote is theirs, even when it does not exist (the answer says so).
    typed = ToolCall("argocd", "get_application", {"name": "kelpgat"})
    assert _checks(expect, [typed], said="is kelpgat ok?", catalogue=CATALOGUE)["names"][0]
    # Shell commands name no world resource.
    assert "names" in _checks(expect, [ToolCall("devops", "run_command", {"command": "ls x"})],
                              catalogue=CATALOGUE)


def test_an_error_or_an_empty_answer_fails_answered() -> None:
    assert not check_turn(Expectation(), outcome(""))[0].passed
    failed = check_turn(Expectation(), outcome("partial", errors=["The model provider failed"]))
    assert not failed[0].passed
    assert "model provider" in failed[0].detail


def test_the_judges_verdict_is_read_from_its_json() -> None:
    assert parse_verdict('Sure. {"verdict": "pass", "reason": "correct"}').passed
    assert not parse_verdict('{"verdict": "fail", "reason": "invented"}').passed
    unreadable = parse_verdict("looks fine to me")
    assert not unreadable.passed and "unreadable" in unreadable.detail


async def test_a_judge_that_fails_fails_its_check_and_says_why() -> None:
    case = Case(id="c", category="argocd", turns=[Turn(ask="Which apps are degraded?")])
    down = Judge(ScriptedChatModel.from_steps([ConnectionError("judge unreachable")]), "x:y")
    check = await down.grade(case, "payments-api", [])
    assert not check.passed and "the judge x:y failed: ConnectionError" in check.detail
