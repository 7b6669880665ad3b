"""Compound questions split by agent, with the router's own domain words."""

from __future__ import annotations

import pytest
from word_routing import agents_by_words

from pilothouse.agents.inventory import APPLICATION, REPOSITORY, Mention
from pilothouse.agents.question_parts import clauses, joined_words, split_by_agent
from pilothouse.agents.request_frame import RequestFrame

#: The names the inventories hold, in these tests (a name's shape is not what makes it one).
HELD = {"payments-api": APPLICATION, "billing-ledger-staging": APPLICATION,
        "billing-ledger-dev": APPLICATION, "shopfront": APPLICATION,
        "acme-corp/billing-ledger": REPOSITORY, "acme-corp/infra-live": REPOSITORY}


def frame_of(question: str) -> RequestFrame:
    """`question`'s frame, its mentions the `HELD` names it has."""
    return RequestFrame(question, tuple(
        Mention(name, question.index(name), "argocd" if kind == APPLICATION else "github",
                kind, name) for name, kind in HELD.items() if name in question))


def parts(question: str) -> dict[str, str]:
    return split_by_agent(question, agents_by_words(question), agents_by_words,
                          frame_of(question).names_in)


def test_clauses_start_where_a_new_request_starts() -> None:
    assert clauses("billing-ledger-dev keeps crashing in Argo CD. Show its pod logs, then open "
                   "issues in acme-corp/billing-ledger about crashes.") == [
        "billing-ledger-dev keeps crashing in Argo CD.", "Show its pod logs",
        "open issues in acme-corp/billing-ledger about crashes."]
    # A comma or "and" inside one request does not cut it.
    assert clauses("Sync and health of orders-api-dev, staging and production") == [
        "Sync and health of orders-api-dev, staging and production"]
    # A sign standing alone is typed for "and", whichever sign it is: before a new request
    # it cuts, inside one it does not.
    assert clauses("degraded apps in ledger + how many open issues on octo/ledger & who "
                   "reviews them") == ["degraded apps in ledger",
                                       "how many open issues on octo/ledger", "who reviews them"]
    assert clauses("is ledger-api ok / who reviews octo/ledger #4 -- why is ledger-web red") == [
        "is ledger-api ok", "who reviews octo/ledger #4", "why is ledger-web red"]
    assert clauses("which cluster + ns does ledger-api-qa go to?") == [
        "which cluster + ns does ledger-api-qa go to?"]
    assert clauses("what is 3 + 4") == ["what is 3 + 4"]
    # Signs alone are no request.
    assert clauses("--- and how many apps?") == ["how many apps?"]


@pytest.mark.parametrize(("question", "expected"), [
    ("Is the billing-ledger-staging app synced in Argo CD, and which workflows failed on "
     "acme-corp/billing-ledger this week?",
     {"argocd": "Is the billing-ledger-staging app synced in Argo CD",
      "github": "which workflows failed on acme-corp/billing-ledger this week?"}),
    # A clause naming no agent goes with the one before it.
    ("billing-ledger-dev keeps crashing in Argo CD. Show its pod logs, then open issues in "
     "acme-corp/billing-ledger about crashes.",
     {"argocd": "billing-ledger-dev keeps crashing in Argo CD. Show its pod logs",
      "github": "open issues in acme-corp/billing-ledger about crashes."}),
    ("What does the Makefile in the workspace build and what PRs are open in "
     "acme-corp/infra-live?",
     {"devops": "What does the Makefile in the workspace build",
      "github": "what PRs are open in acme-corp/infra-live?"}),
])
def test_each_agent_gets_the_clauses_that_name_it(question: str,
                                                  expected: dict[str, str]) -> None:
    assert parts(question) == expected


def test_an_agent_without_a_part_of_its_own_gets_the_whole_question() -> None:
    # "its" points into the Argo CD clause; the GitHub part alone would not say whose CI.
    question = "Is payments-api Degraded in Argo CD, and is its CI workflow failing?"
    assert parts(question) == {"argocd": "Is payments-api Degraded in Argo CD",
                               "github": question}
    # A one-word name is as much a name: the inventory holds it.
    question = "Is shopfront Degraded in Argo CD, and is its CI workflow failing?"
    assert parts(question) == {"argocd": "Is shopfront Degraded in Argo CD",
                               "github": question}
    # A demonstrative stands for what another part named as much as "its" does.
    question = "Which revision is shopfront synced to in Argo CD? Which PR did that come from?"
    assert parts(question) == {"argocd": "Which revision is shopfront synced to in Argo CD?",
                               "github": question}
    # No clause of its own at all: the agent named only by the whole.
    assert split_by_agent("orders-api logs", ["argocd", "devops"], lambda _: [],
                          lambda _: False) == {"argocd": "orders-api logs",
                                               "devops": "orders-api logs"}


def test_a_part_saying_its_of_a_name_it_holds_needs_nothing_more() -> None:
    # The GitHub part names its own repository, whatever shape the name has: "its" is there.
    question = ("Is shopfront Degraded in Argo CD, and is acme-corp/billing-ledger failing "
                "its CI workflow?")
    assert parts(question)["github"] == "is acme-corp/billing-ledger failing its CI workflow?"
    # A hyphenated word no inventory holds is no name: the part still needs the whole.
    question = "Is shopfront Degraded in Argo CD, and is its CI workflow failing after re-run?"
    assert parts(question)["github"] == question


def test_words_written_joined_are_found_whole() -> None:
    assert joined_words("PR 77 in octo/ledger, and checkout-web.") == [
        "octo/ledger", "checkout-web"]
    assert joined_words("the weather today") == []


def test_a_part_that_points_back_gets_the_question_up_to_its_end() -> None:
    # A pronoun points back: what "they" stands for is before it, in the part or the parts
    # before; the requests after it are other agents'.
    question = ("how long do the code's session tokens live before they expire, and is "
                "payments-api synced in Argo CD?")
    assert parts(question) == {
        "devops": "how long do the code's session tokens live before they expire",
        "argocd": "is payments-api synced in Argo CD?"}
    question = ("Is shopfront Degraded in Argo CD, and is its CI workflow failing? Also grep "
                "the code for retries.")
    assert parts(question)["github"] == ("Is shopfront Degraded in Argo CD, and is its CI "
                                         "workflow failing?")
