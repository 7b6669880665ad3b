"""A GitHub search query is held to the person's words term by term (`agents.search_query`)."""

from __future__ import annotations

import pytest

from pilothouse.agents.search_query import grounded_query, grounded_retrieval


@pytest.mark.parametrize(("query", "said", "grounded"), [
    # An `is:` value GitHub does not know, that the person said: the label they meant.
    ("repo:octo/ledger is:flaky", "which issues of octo/ledger are labelled flaky?",
     "repo:octo/ledger label:flaky is:issue"),
    # An example's repository in an organisation-wide question: the organisation.
    ("repo:octo/infra is:pr label:p1", "p1 pull requests anywhere in octo",
     "org:octo is:pr label:p1"),
    # Another repository than the one named: the one named.
    ("repo:octo/infra is:issue", "What open issues does octo/ledger have?",
     "repo:octo/ledger is:issue is:open"),
    # An example's free word nobody said goes; a word said with another ending stays.
    ("repo:octo/ledger checkout timeout", "issues about timeouts in octo/ledger",
     "repo:octo/ledger timeout is:issue"),
    # A person's own query is kept, type and state included.
    ("org:octo is:pr is:merged author:kim", "merged PRs by kim in octo",
     "org:octo is:pr is:merged author:kim"),
    # An author nobody named goes.
    ("repo:octo/ledger author:jdoe is:pr", "closed pull requests of octo/ledger",
     "repo:octo/ledger is:pr is:closed"),
])
def test_a_query_keeps_only_what_the_person_said(query: str, said: str, grounded: str) -> None:
    assert grounded_query(query, [said], said) == grounded


def test_a_query_with_nothing_said_is_kept_for_the_tool_to_refuse() -> None:
    assert grounded_query("author:jdoe", ["hello"], "hello") == "author:jdoe"


@pytest.mark.parametrize(("query", "kept"), [
    ("statement timeout", True),
    # An identifier is said part by part, or whole; a word with another ending is said.
    ("order_status_transitions", True), ("OrderStatus transition", True),
    ("PoolExhausted", True),
    # One word nobody said: the model's query is not the person's.
    ("session timeout expiry", False), ("statement timeout config", False),
])
def test_a_retrieval_query_is_the_models_only_when_every_word_was_said(
        query: str, kept: bool) -> None:
    question = "whats the statement timeout, and which order status transitions raise " \
               "PoolExhausted?"
    assert grounded_retrieval(query, [question], question) == (query if kept else question)
