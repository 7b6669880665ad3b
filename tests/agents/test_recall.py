"""A question for an agent that points back at the person's earlier words carries them."""

from __future__ import annotations

from collections.abc import Callable

from pilothouse.agents.recall import recalled
from pilothouse.config import Settings
from pilothouse.context.rewrite import TURN_NOTE
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.subagent import InProcessSubAgent
from pilothouse.testing.scripted_model import tool_call
from tests.agents.test_routing import (
    UNGROUNDED,
    collect_answers,
    specialist,
    supervisor_over,
)

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


async def test_an_agent_asked_about_earlier_words_gets_them_with_its_question(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    github_setup = scripted_setup(["Noted.", "kim wrote it."])
    agents = [InProcessSubAgent("github", "GitHub.", specialist(settings, github_setup,
                                                                 "github"))]
    # The first turn goes to the agent without the model; the second is the model's words.
    setup = scripted_setup([tool_call("ask_github",
                                      question="Who wrote the pull request I said is allowed in?"),
                            "kim wrote it."])
    supervisor = supervisor_over(settings, setup, agents)
    conversation = Conversation(supervisor.graph, "recall")
    await collect_answers(conversation, EARLIER[0] + " Which pull requests are open there?")
    await collect_answers(conversation, "Who wrote the pull request I said is allowed in?")

    asked = str(github_setup.chat_model.requests[-1].messages[-1].content)  # type: ignore[attr-defined]
    assert asked.split(TURN_NOTE)[0] == (
        "Who wrote the pull request I said is allowed in?\n\n(What the person said earlier, "
        'which the question refers to: "The only fix allowed in is PR 77 in octo/ledger, the '
        'rounding fix.")')
