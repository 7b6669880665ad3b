"""The small parts: decisions as text, answer budgets, where tasks are stored."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pilothouse.a2a.decisions import format_decision, parse_decision
from pilothouse.a2a.remote import context_id
from pilothouse.a2a.store import task_database_url
from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.answer_budget import fit_to_budget, with_answer_budget
from pilothouse.runtime.subagent import describe_interrupt


@pytest.mark.parametrize(("text", "decision"), [
    ("approve", {"type": "approve"}),
    ("  Yes. ", {"type": "approve"}),
    ("reject: it is peak hour", {"type": "reject", "message": "it is peak hour"}),
    ("no - wrong cluster", {"type": "reject", "message": "wrong cluster"}),
    ("reject", {"type": "reject", "message": "Rejected by the user."}),
    ("approve: but only staging", None),  # a condition is not an approval
    ("what does it do?", None),
])
def test_decisions_are_read_from_plain_text(text: str, decision: dict[str, str] | None) -> None:
    assert parse_decision(text) == decision
    if decision is not None:
        assert parse_decision(format_decision(decision)) == decision


def test_both_shapes_of_an_approval_request_read_as_one_line_per_action() -> None:
    one = {"type": "tool_approval", "name": "sync_application", "args": {"name": "payments"},
           "description": "Sync this application?"}
    batch = {"action_requests": [one, {**one, "args": {"name": "ledger"}}]}

    assert describe_interrupt(one) == \
        'Sync this application? sync_application({"name": "payments"})'
    assert describe_interrupt(batch).count("\n") == 1 and "ledger" in describe_interrupt(batch)


def test_an_answer_is_cut_to_its_budget_by_the_callers_counter(
    scripted_setup: Callable[..., ModelSetup],
) -> None:
    counter = scripted_setup(["x"]).counter
    text = "payments-api is Degraded in production; " * 300

    cut = fit_to_budget(text, 200, counter, agent="argocd")

    assert counter.count_text(cut) <= 200
    assert cut.startswith("payments-api is Degraded") and "ask argocd a narrower" in cut
    assert fit_to_budget("short", 200, counter, agent="argocd") == "short"
    assert "at most 200 tokens" in with_answer_budget("q", 200)
    assert with_answer_budget("q", None) == "q"


def test_tasks_live_beside_the_checkpoints_or_in_postgres(
    make_settings: Callable[..., Settings],
) -> None:
    default = make_settings()
    assert task_database_url(default) == (
        f"sqlite+aiosqlite:///{default.home}/state/checkpoints-a2a-tasks.sqlite")
    postgres = make_settings(PILOTHOUSE_DATABASE_URL="postgresql://ph:pw@db:5432/ph")
    assert task_database_url(postgres) == "postgresql+psycopg://ph:pw@db:5432/ph"
    with pytest.raises(ConfigurationError, match="unsupported scheme"):
        task_database_url(make_settings(PILOTHOUSE_DATABASE_URL="mysql://db/ph"))


def test_context_ids_are_stable_and_fit_the_task_table() -> None:
    long_thread = "supervisor:" + "0" * 64
    assert context_id(long_thread) == context_id(long_thread)
    assert context_id(long_thread) != context_id("supervisor:other")
    assert len(context_id(long_thread)) == 36
