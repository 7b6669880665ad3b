"""A question for an agent that names nothing to act on carries the person's earlier words."""

from __future__ import annotations

from pilothouse.agents.recall import acts_on, recalled

#: The person's earlier words (tests/agents/test_routing.py asks about them end to end).
EARLIER = ["Heads-up: the ledger release is blocked until Thursday. The only fix allowed "
           "in is PR 77 in octo/ledger, the rounding fix. Thanks!",
           "Unrelated: how do we rotate the staging keys? Ticket SEC-12 tracks it."]


def test_the_sentences_sharing_the_questions_words_and_carrying_a_name_are_recalled() -> None:
    assert recalled("who wrote the fix I said is allowed in?", EARLIER) == [
        "The only fix allowed in is PR 77 in octo/ledger, the rounding fix."]
    # The sentence about the keys has no name or number to give: the ticket's has.
    assert recalled("what was the ticket I mentioned for the keys?", EARLIER) == [
        "Ticket SEC-12 tracks it."]
    assert recalled("what did I say about lunch?", EARLIER) == []


def test_a_question_acts_on_a_number_or_a_name_the_inventory_holds() -> None:
    held = {"ledgerline"}
    assert acts_on("why did run 4411 fail?", held)
    assert acts_on("what changed in Ledgerline?", held)  # names are matched in any case
    # An ordinary word, or a word shaped like a name that no inventory holds, gives nothing.
    assert not acts_on("what do the warning events of the app that paged say?", held)
    assert not acts_on("is shop-api-blue synced?", held)
