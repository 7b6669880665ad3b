"""The case set loads, is big enough, covers every category, and bad files say what is wrong."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pilothouse.errors import UserInputError
from pilothouse.evals.cases import CATEGORIES, load_cases

CASES = Path(__file__).resolve().parents[2] / "evals" / "cases"


def test_the_shipped_set_has_sixty_cases_in_every_category() -> None:
    cases = load_cases([CASES])
    counts = Counter(c.category for c in cases)
    assert len(cases) >= 60
    assert set(counts) == set(CATEGORIES)
    assert all(case.turns[-1].expect != case.turns[-1].expect.__class__() or case.history
               for case in cases), "every case checks something"


def test_only_picks_ids_and_categories() -> None:
    cases = load_cases([CASES], only=["hostile"])
    assert cases and {c.category for c in cases} == {"hostile"}
    first = cases[0].id
    assert [c.id for c in load_cases([CASES], only=[first])] == [first]
    with pytest.raises(UserInputError, match="No case has the id or category"):
        load_cases([CASES], only=["nope"])


def test_per_category_keeps_the_first_cases_of_every_category_in_file_order() -> None:
    every = load_cases([CASES])
    sample = load_cases([CASES], per_category=2)
    assert Counter(c.category for c in sample) == dict.fromkeys(CATEGORIES, 2)
    assert sample == [c for c in every if [d.category for d in every[:every.index(c)]]
                      .count(c.category) < 2]


def test_a_bad_case_names_the_file_the_case_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "argocd.yaml"
    path.write_text("cases:\n  - id: broken-case\n    turns: [hello]\n"
                    "    expect: {agents: [jenkins]}\n")
    with pytest.raises(UserInputError, match=r"argocd.yaml: case broken-case is invalid: "
                                             r"turns.0.expect.agents.0"):
        load_cases([path])


def test_case_level_expect_goes_to_the_last_turn_and_ids_are_unique(tmp_path: Path) -> None:
    path = tmp_path / "github.yaml"
    path.write_text("cases:\n  - id: two-turns\n    turns: [first, second]\n"
                    "    expect: {facts: ['42']}\n")
    [case] = load_cases([path])
    assert case.category == "github"
    assert case.turns[0].expect.is_empty and case.turns[1].expect.facts == ["42"]
    (tmp_path / "more.yaml").write_text("category: github\n" + path.read_text())
    with pytest.raises(UserInputError, match="repeated: two-turns"):
        load_cases([tmp_path])


def test_missing_or_malformed_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="No evaluation cases at"):
        load_cases([tmp_path / "absent"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases: [unclosed")
    with pytest.raises(UserInputError, match="must be YAML"):
        load_cases([bad])
