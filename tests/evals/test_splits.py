"""The two splits: dev (what the product was built against) and test (another world, unseen).

The test split is only worth its figure while the product cannot see it: no product code reads
the evaluation's files, and no few-shot example is one of its questions. It is written in the
words people type, three phrasings per intent, on a world whose names the product never saw.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from pilothouse.agents.example_bank import BANKS
from pilothouse.errors import UserInputError
from pilothouse.evals.cases import CATEGORIES, SPLITS, Case, load_cases, world_of
from pilothouse.evals.checks import normalize
from pilothouse.sandbox.worlds import DEFAULT_WORLD, WORLDS, world_named

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "pilothouse"


def split(name: str) -> list[Case]:
    return load_cases([REPO / SPLITS[name]])


def test_the_test_split_runs_on_another_world_and_covers_every_category() -> None:
    dev, test = split("dev"), split("test")
    assert world_of(dev) is None and world_named(world_of(dev)) is DEFAULT_WORLD
    other = world_named(world_of(test))
    assert other is not DEFAULT_WORLD and other.key in WORLDS
    assert {c.category for c in test} == set(CATEGORIES)
    assert not {c.id for c in dev} & {c.id for c in test}
    assert not {normalize(c.question) for c in dev} & {normalize(c.question) for c in test}


def test_every_test_intent_is_asked_three_ways() -> None:
    intents: dict[str, set[str]] = defaultdict(set)
    for case in split("test"):
        stem, _, way = case.id.rpartition("-")
        intents[stem].add(way)
    assert len(intents) >= 20
    assert {stem: ways for stem, ways in intents.items() if ways != {"a", "b", "c"}} == {}


def test_a_run_takes_cases_of_one_world(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("category: argocd\ncases:\n"
                                     "  - {id: one, turns: [q], expect: {facts: [x]}}\n")
    (tmp_path / "b.yaml").write_text(f"category: argocd\nworld: {world_of(split('test'))}\n"
                                     "cases:\n  - {id: two, turns: [q], expect: {facts: [x]}}\n")
    both = load_cases([tmp_path])
    assert [c.world for c in both] == [None, world_of(split("test"))]
    with pytest.raises(UserInputError, match="different sandbox worlds"):
        world_of(both)
    with pytest.raises(UserInputError, match="no sandbox world called 'atlantis'"):
        world_named("atlantis")


def test_no_product_code_reads_the_evaluation_cases() -> None:
    # The evaluation and the sandboxes are the world's side; everything else is the product,
    # whose prompts, examples, hints and routes must not be drawn from the cases.
    reading = re.compile(r"evals[/\\\"']|test_split|cases\.yaml")
    found = [f"{path.relative_to(SRC)}: {match.group(0)}"
             for path in SRC.rglob("*.py")
             if path.relative_to(SRC).parts[0] not in ("evals", "sandbox", "testing")
             for match in reading.finditer(path.read_text(encoding="utf-8"))]
    assert found == []


def test_no_few_shot_example_is_a_test_question() -> None:
    questions = [normalize(turn.ask) for case in split("test") for turn in case.turns]
    requests = [normalize(example.request) for bank in BANKS.values() for example in bank]
    assert requests and questions
    assert [(r, q) for r in requests for q in questions if r == q or r in q or q in r] == []
