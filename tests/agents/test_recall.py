"""A question for an agent that names nothing to act on carries the person's earlier words."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from pilothouse.agents.inventory import APPLICATION, PROJECT, Candidate, Inventory, Mention
from pilothouse.agents.recall import acts_on, recalled, recalled_mentions, unsaid

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


class _Held:
    """An inventory source holding a project and an application, by their words."""

    agent = "argocd"

    async def resolve(self, words: Sequence[Candidate]) -> list[Mention]:
        kinds = {"ledgerline": PROJECT, "ledger-api-qa": APPLICATION}
        return [Mention(w.text, w.start, self.agent, kinds[w.text.lower()], w.text.lower())
                for w in words if w.text.lower() in kinds]


async def test_what_earlier_words_point_at_is_their_resources_not_their_groups() -> None:
    inventory = Inventory([_Held()])
    earlier = ["The Ledgerline people blame ledger-api-qa for the late invoices.",
               "The Ledgerline team is new to the rota."]
    found = await recalled_mentions("the thing ledgerline people blame - state?", earlier,
                                    inventory)
    assert [(m.text, m.kind) for m in found] == [("ledger-api-qa", APPLICATION)]
    # A group's name alone (a project's ordinary word) points at no agent.
    assert await recalled_mentions("how is the new team doing on the rota?", earlier,
                                   inventory) == []


def test_a_number_or_joined_name_is_unsaid_when_only_the_instructions_have_it() -> None:
    conversation = [SystemMessage("Cite items as #46 of my-app."),
                    HumanMessage("is PR 77 of Ledger-Writer merged?"),
                    AIMessage("PR 77 was merged at 10:42 into release/2026.08.")]
    assert unsaid("Is PR 77 of ledger-writer merged?", conversation) is None
    assert unsaid("When was PR 77 merged into release/2026.08, at 10:42?", conversation) is None
    assert unsaid("Is the deployment of it merged?", conversation) is None  # a rewording
    assert unsaid("Is PR #46 merged?", conversation) == "46"
    assert unsaid("When did the application named 'my-app' deploy?", conversation) == "my-app"
