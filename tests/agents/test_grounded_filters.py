"""A status filter is kept when the person spoke of what it filters; the model reads the value."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from pilothouse.agents.argocd import GROUNDED_FILTERS
from pilothouse.agents.grounded_args import asked_for

SYNC, HEALTH = GROUNDED_FILTERS["sync_status"], GROUNDED_FILTERS["health_status"]


def test_a_negated_value_keeps_the_models_reading() -> None:
    # A word table cannot read "not": the person spoke of sync, so the model's value stands.
    said = [HumanMessage("how many apps aren't synced right now?")]
    assert asked_for("OutOfSync", SYNC, said) and asked_for("Synced", SYNC, said)


def test_a_filter_on_something_nobody_spoke_of_is_not_asked_for() -> None:
    said = [HumanMessage("which apps in project ledgerline are out of sync?")]
    assert not asked_for("Healthy", HEALTH, said)
    assert asked_for("OutOfSync", SYNC, said)


def test_a_value_the_table_does_not_know_is_left_alone() -> None:
    assert asked_for("Terminating", HEALTH, [HumanMessage("anything?")])
