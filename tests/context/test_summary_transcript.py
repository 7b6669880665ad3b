"""The summarizer's transcript keeps every message's start and cuts the person's words last."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from pilothouse.context.summarizer import render_for_summary

FIRST = "keep in mind: the service under review is ledger-writer, ticket OPS-4471."


def _conversation(exchanges: int, asked: int = 17) -> list[HumanMessage | AIMessage]:
    messages: list[HumanMessage | AIMessage] = [HumanMessage(FIRST), AIMessage("Noted. " * 200)]
    for n in range(1, exchanges):
        messages += [HumanMessage(f"question {n}: " + "why is this slow? " * asked),
                     AIMessage(f"answer {n}: " + "a long explanation. " * 120)]
    return messages


def test_an_over_long_transcript_keeps_its_first_message_and_fits() -> None:
    messages = _conversation(17)
    whole = sum(len(str(m.content)) for m in messages)
    transcript = render_for_summary(messages, 11_000)

    assert whole > 3 * 11_000
    assert len(transcript) <= 11_000
    assert FIRST in transcript  # the oldest words are not the ones dropped
    for n in range(1, 17):  # every message keeps its start
        assert f"question {n}:" in transcript and f"answer {n}:" in transcript


def test_the_person_is_cut_last() -> None:
    said = FIRST + " Background: " + "the writer batches ledger entries per account. " * 30
    messages = _conversation(11, asked=8)
    messages[0] = HumanMessage(said)
    transcript = render_for_summary(messages, 11_000)

    assert said in transcript
    for line in transcript.splitlines():
        if line.startswith("User: "):
            assert not line.endswith("[...]"), line
    assert transcript.count("[...]") == 11  # each of the assistant's replies gave way


def test_the_replies_keep_at_least_half_the_room_when_the_person_says_a_lot() -> None:
    messages = [HumanMessage("context " * 2_000), AIMessage("reply " * 2_000)]
    transcript = render_for_summary(messages, 4_000)
    person, reply = transcript.splitlines()

    assert len(transcript) <= 4_000
    assert len(reply) >= len(person) - 20 and reply.startswith("Assistant: reply")


def test_a_short_transcript_is_whole_and_tool_calls_are_named() -> None:
    messages = [
        HumanMessage("is checkout healthy?"),
        AIMessage("", tool_calls=[{"name": "get_application", "args": {"name": "checkout"},
                                   "id": "call-1"}]),
        ToolMessage("Health: Degraded", tool_call_id="call-1", name="get_application"),
    ]
    assert render_for_summary(messages, 4_000) == (
        "User: is checkout healthy?\n"
        "Assistant: [called get_application({'name': 'checkout'})]\n"
        "Tool result (get_application): Health: Degraded"
    )
