"""A summary quotes the person's own words of the messages it stands for, whatever it says."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from pilothouse.context.compression import SAID_KEY, Compressor, is_summary, quoted
from pilothouse.context.summarizer import SummaryFailed
from pilothouse.models.tokens import TokenCounter, chars_estimate

COUNTER = TokenCounter(chars_estimate, source="estimate")
PARKED = ("context for the week: the failover drill is on thursday, and the change that spreads "
          "ledger-writer across zones has to land before it. it is PR 94 in charts-repo, parked "
          "for now while we go through other things first, so keep it in mind for me please.")


class ForgetfulSummarizer:
    """A small model's summary: about the conversation, without its names."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def summarize(self, messages: list[BaseMessage]) -> str:
        if self.fail:
            raise SummaryFailed("timed out after 180 s")
        return "The person asked several platform questions."

    async def asummarize(self, messages: list[BaseMessage]) -> str:
        return self.summarize(messages)


def _conversation(question: str) -> list[BaseMessage]:
    messages: list[BaseMessage] = [HumanMessage(PARKED), AIMessage("Noted. " * 150)]
    for n in range(12):
        messages += [HumanMessage(f"question {n} about node pools, quotas and budgets " * 4),
                     AIMessage(f"answer {n} " + "an explanation of the trade-offs. " * 60)]
    return [*messages, HumanMessage(question)]


def test_the_words_a_question_shares_are_kept_whole_after_any_summary() -> None:
    question = "did that pr for the thursday drill get approved?"
    for fail in (False, True):  # a summary, or its deletion fallback
        result = Compressor(COUNTER, ForgetfulSummarizer(fail)).compress(
            _conversation(question), 2_400)
        head = result.messages[0]

        assert is_summary(head) and result.method == ("deletion" if fail else "summary")
        text = str(head.content)
        assert PARKED in text  # whole: it shares "thursday" and "drill" with the question
        assert "question 0 about node pools" in text  # every other message keeps its start
        assert result.tokens_after <= 2_400
        assert result.messages[-1].content == question


def test_the_next_summary_keeps_the_words_the_last_one_quoted() -> None:
    first = Compressor(COUNTER, ForgetfulSummarizer()).compress(
        _conversation("did that pr for the thursday drill get approved?"), 2_400)
    later = [*first.messages, AIMessage("Changes requested. " * 80)]
    for n in range(6):
        later += [HumanMessage(f"more question {n} " * 10), AIMessage("more answers. " * 120)]
    later.append(HumanMessage("which drill was the pr for again?"))

    again = Compressor(COUNTER, ForgetfulSummarizer()).compress(later, 2_400)
    head = again.messages[0]

    assert is_summary(head) and PARKED in str(head.content)
    assert PARKED in head.additional_kwargs[SAID_KEY]


def test_quoted_words_fit_their_room_in_order() -> None:
    said = ["short one", "x" * 500, "the drill is on thursday " * 4, "y" * 500]
    kept = quoted(said, 400, "when is the drill?")

    assert sum(map(len, kept)) <= 400
    assert kept[0] == "short one" and kept[2] == said[2]  # sharing "drill": whole
    assert kept[1].startswith("xxx") and kept[1].endswith("[...]")
    assert quoted([], 400, "anything") == []
