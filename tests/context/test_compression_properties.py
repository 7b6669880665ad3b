"""Property: for random histories, repair + compression gives a valid history within budget."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from pilothouse.context.compression import Compressor
from pilothouse.context.orphans import repair_tool_pairs
from pilothouse.models.tokens import TokenCounter, chars_estimate

COUNTER = TokenCounter(chars_estimate, source="estimate")


class FixedSummarizer:
    """Summaries of bounded size, or a failure, chosen by the strategy."""

    def __init__(self, fail: bool) -> None:
        self.fail = fail

    def summarize(self, messages: list[BaseMessage]) -> str:
        from pilothouse.context.summarizer import SummaryFailed

        if self.fail:
            raise SummaryFailed("provider down")
        return f"{len(messages)} messages about apps " + "fact " * 40

    async def asummarize(self, messages: list[BaseMessage]) -> str:
        return self.summarize(messages)


sizes = st.integers(min_value=1, max_value=30_000)


@st.composite
def histories(draw: st.DrawFn) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    if draw(st.booleans()):
        messages.append(SystemMessage(content="You are Pilothouse.", id="sys"))
    for _ in range(draw(st.integers(min_value=1, max_value=25))):
        kind = draw(st.sampled_from(["human", "ai", "tools", "stray"]))
        if kind == "human":
            messages.append(HumanMessage(content="q" * draw(sizes), id=uuid.uuid4().hex))
        elif kind == "ai":
            messages.append(AIMessage(content="a" * draw(sizes), id=uuid.uuid4().hex))
        elif kind == "tools":
            calls = [{"name": "list_applications", "args": {"page": i}, "id": uuid.uuid4().hex,
                      "type": "tool_call"} for i in range(draw(st.integers(1, 3)))]
            messages.append(AIMessage(content="", tool_calls=calls, id=uuid.uuid4().hex))
            for call in calls:
                if draw(st.booleans()):  # some results are missing: orphans
                    content = '{"items": [' + ",".join(['{"n": 1}'] * (draw(sizes) // 9)) + "]}"
                    messages.append(ToolMessage(content=content, tool_call_id=call["id"],
                                                id=uuid.uuid4().hex))
        else:
            messages.append(ToolMessage(content="stray", tool_call_id="gone", id=uuid.uuid4().hex))
    return messages


def assert_valid(messages: list[BaseMessage]) -> None:
    """Every tool call answered right after it; no result without its call; system first."""
    for index, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            assert all(isinstance(m, SystemMessage) for m in messages[:index])
        if isinstance(message, AIMessage) and message.tool_calls:
            following = messages[index + 1 : index + 1 + len(message.tool_calls)]
            assert [m.tool_call_id for m in following if isinstance(m, ToolMessage)] == [
                c["id"] for c in message.tool_calls]
        if isinstance(message, ToolMessage):
            previous = messages[:index]
            owners = [m for m in previous if isinstance(m, AIMessage)
                      and any(c["id"] == message.tool_call_id for c in m.tool_calls)]
            assert owners, "a tool result without its call"
    assert not messages or not isinstance(messages[0], ToolMessage)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories(), target=st.integers(min_value=1500, max_value=20_000),
       fail=st.booleans())
def test_compressed_history_is_valid_and_within_budget(
    history: list[BaseMessage], target: int, fail: bool
) -> None:
    repaired, _, _ = repair_tool_pairs(history)
    assert_valid(repaired)
    assert repair_tool_pairs(repaired)[0] == repaired, "repair is idempotent"

    result = Compressor(COUNTER, FixedSummarizer(fail)).compress(repaired, target)  # type: ignore[arg-type]

    assert_valid(result.messages)
    assert COUNTER.count_messages(result.messages) <= target
    if result.removed:
        assert result.method == ("deletion" if fail else "summary")
