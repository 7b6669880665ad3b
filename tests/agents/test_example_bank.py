"""The few-shot bank holds no evaluation question and no paraphrase of one.

Threshold: MiniLM (the embeddings the selector uses) scores a request and its paraphrase 0.85
or more, and same-intent requests about different resources 0.45-0.77 (measured on the
evaluation's own questions: a question with its wording shuffled, and a question with "please"
added, both score over 0.85 against the original). An entry at or above `PARAPHRASE` against any
evaluation question fails the test: it could be a rewording of that question, so the evaluation
would measure the bank, not the agent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pilothouse.agents.example_bank import BANKS
from pilothouse.agents.examples import MiniLMEmbedder
from pilothouse.evals.cases import load_cases

PARAPHRASE = 0.80
CASES = Path(__file__).resolve().parents[2] / "evals" / "cases"


@pytest.fixture(scope="module")
def embed() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def eval_questions() -> list[str]:
    questions = [turn.ask for case in load_cases(sorted(CASES.glob("*.yaml")))
                 for turn in case.turns]
    assert len(questions) > 72  # every case, every turn
    return questions


def test_no_bank_entry_is_an_evaluation_question_or_a_paraphrase(embed: MiniLMEmbedder) -> None:
    questions = eval_questions()
    entries = [e.request for bank in BANKS.values() for e in bank]
    similarity = embed(entries) @ embed(questions).T
    worst = np.unravel_index(np.argmax(similarity), similarity.shape)
    assert similarity.max() < PARAPHRASE, (
        f"{entries[worst[0]]!r} is {similarity.max():.2f} similar to the evaluation question "
        f"{questions[worst[1]]!r}")
    assert not set(entries) & set(questions)


def test_the_threshold_catches_a_reworded_evaluation_question(embed: MiniLMEmbedder) -> None:
    # The detector must be able to fail: a mechanical rewording of each question scores above.
    questions = [q for q in eval_questions() if len(q.split()) >= 4][:20]
    reworded = [f"please, {' '.join(reversed(q.rstrip('?.').split()))}" for q in questions]
    scores = np.sum(embed(questions) * embed(reworded), axis=1)
    assert float(np.median(scores)) >= PARAPHRASE


def test_every_example_calls_a_tool_its_agent_has_with_known_arguments() -> None:
    from pilothouse.tools.argocd.server import READ_TOOLS, WRITE_TOOLS
    known = {"argocd": {*READ_TOOLS, *WRITE_TOOLS},
             "github": {"list_pull_requests", "get_pull_request", "search_issues",
                        "list_pull_requests_awaiting_review", "list_issues",
                        "list_workflow_runs", "get_workflow_run_logs"},
             "devops": {"run_command", "retrieve_code_context", "find_named_code"}}
    for agent, bank in BANKS.items():
        for example in bank:
            assert example.tool in known[agent], (agent, example.tool)
