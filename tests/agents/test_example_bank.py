"""The few-shot bank holds no evaluation question and no paraphrase of one.

Threshold: MiniLM (the embeddings the selector uses) scores a request and its paraphrase 0.85
or more, and same-intent requests about different resources 0.45-0.77 (measured on the
evaluation's own questions: a question with its wording shuffled, and a question with "please"
added, both score over 0.85 against the original). An entry at or above `PARAPHRASE` against any
evaluation question fails the test: it could be a rewording of that question, so the evaluation
would measure the bank, not the agent.

The selector compares requests with their resource names masked (`intent_text`), so the bank is
also measured that way: an entry that, names aside, reads as an evaluation question (a template
of it with other apps or repositories) scores 1.0 there. Masked, same-intent requests in other
words score 0.5-0.8 (a log request "tail the container output of X, 50 lines" 0.53 against
"Show me the last 50 log lines of Y"), and a mechanical rewording of a question 0.85 or more;
`TEMPLATE` sits there.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pilothouse.agents.example_bank import BANKS
from pilothouse.agents.examples import MiniLMEmbedder, intent_text
from pilothouse.evals.cases import load_cases

PARAPHRASE = 0.80
TEMPLATE = 0.85
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


def test_no_bank_entry_is_an_evaluation_question_with_other_names(embed: MiniLMEmbedder) -> None:
    questions = eval_questions()
    entries = [e.request for bank in BANKS.values() for e in bank]
    similarity = (embed([intent_text(e) for e in entries])
                  @ embed([intent_text(q) for q in questions]).T)
    worst = np.unravel_index(np.argmax(similarity), similarity.shape)
    assert similarity.max() < TEMPLATE, (
        f"{entries[worst[0]]!r} is {similarity.max():.2f} similar (names masked) to the "
        f"evaluation question {questions[worst[1]]!r}")


def test_the_threshold_catches_a_reworded_evaluation_question(embed: MiniLMEmbedder) -> None:
    # The detector must be able to fail: a mechanical rewording of each question scores above.
    questions = [q for q in eval_questions() if len(q.split()) >= 4][:20]
    reworded = [f"please, {' '.join(reversed(q.rstrip('?.').split()))}" for q in questions]
    scores = np.sum(embed(questions) * embed(reworded), axis=1)
    assert float(np.median(scores)) >= PARAPHRASE
    masked = np.sum(embed([intent_text(q) for q in questions])
                    * embed([intent_text(r) for r in reworded]), axis=1)
    assert float(np.median(masked)) >= TEMPLATE


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


@pytest.mark.parametrize(("question", "tool"), [
    ("undo the last release of billing-ledger-staging", "rollback_application"),
    ("what restart or scale operations exist for Deployment orders-api in orders-api-dev",
     "run_resource_action"),
    ("does the cluster copy of orders-api-staging match what git says", "diff_application"),
    ("past revisions deployed to orders-api-production", "get_application_history"),
])
def test_change_questions_are_shown_an_example_of_their_tool(
        embed: MiniLMEmbedder, question: str, tool: str) -> None:
    # The five change-safety tools have close names; without an example of its own, the local
    # model answered a rollback plan with the timeline tool.
    from pilothouse.agents.example_bank import ARGOCD_EXAMPLES
    from pilothouse.agents.examples import ExampleSelector
    from pilothouse.tools.argocd.server import READ_TOOLS, WRITE_TOOLS
    selector = ExampleSelector(ARGOCD_EXAMPLES, [*READ_TOOLS, *WRITE_TOOLS], embed)
    assert tool in [e.tool for e in selector.nearest(question)[:2]]


def test_a_call_is_shown_only_examples_of_the_tools_it_offers(embed: MiniLMEmbedder) -> None:
    # A menu narrowed to one application's tools (`OneNamedResource`) is shown none of the
    # listings' examples, however near they are: the model could only reach for a neighbour.
    from langchain.agents.middleware import ModelRequest
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import StructuredTool

    from pilothouse.agents.example_bank import ARGOCD_EXAMPLES
    from pilothouse.agents.examples import ExampleSelector, FewShotMiddleware

    def offered(name: str) -> StructuredTool:
        return StructuredTool.from_function(lambda name: name, name=name, description=name)

    selector = ExampleSelector(ARGOCD_EXAMPLES, [e.tool for e in ARGOCD_EXAMPLES], embed)
    question = "degraded apps and why they are degraded"
    assert "list_applications" in [e.tool for e in selector.nearest(question)]
    one_app = ["get_application", "get_application_events", "get_application_history"]
    request = ModelRequest(model=None, messages=[HumanMessage(question)],  # type: ignore[arg-type]
                           tools=[offered(name) for name in one_app])
    note = str(FewShotMiddleware(selector).rewrite(request).messages[-1].content)
    shown = [line.split("-> ", 1)[1].split("(")[0] for line in note.splitlines()
             if "-> " in line]
    assert shown and set(shown) <= set(one_app)


def test_a_bank_of_free_text_arguments_shows_the_tool_and_lends_no_value(
        embed: MiniLMEmbedder) -> None:
    # A shell command has no shape to show, only a value the model would copy whole: the
    # DevOps bank says which tool answers a kind of request, never the command it ran.
    from langchain.agents.middleware import ModelRequest
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import StructuredTool

    from pilothouse.agents.example_bank import DEVOPS_EXAMPLES, TOOL_ONLY_BANKS
    from pilothouse.agents.examples import ExampleSelector, FewShotMiddleware

    tools = sorted({e.tool for e in DEVOPS_EXAMPLES})
    offered = [StructuredTool.from_function(lambda command: command, name=name,
                                            description=name) for name in tools]
    selector = ExampleSelector(DEVOPS_EXAMPLES, tools, embed)
    request = ModelRequest(model=None, messages=[HumanMessage(  # type: ignore[arg-type]
        "list the last few commits")], tools=offered)
    assert "devops" in TOOL_ONLY_BANKS
    note = str(FewShotMiddleware(selector, with_arguments=False).rewrite(request)
               .messages[-1].content)
    shown = [line for line in note.splitlines() if "-> " in line]
    assert shown and all(line.endswith(("-> run_command", "-> retrieve_code_context"))
                         for line in shown), shown
    assert "git log" not in note and "the tool that answers" in note
    with_values = str(FewShotMiddleware(selector).rewrite(request).messages[-1].content)
    assert "git log --oneline -5" in with_values  # the same bank, as other agents show theirs
