"""Compress a conversation to a token target: summary first, newest turns verbatim.

Messages are grouped into units that are never split (a human turn; an AI message with all of
its tool results). The newest units that fit the target stay verbatim; the older ones become one
summary message placed first, which quotes the person's own words of them after the summary
(`SAID_SHARE`). When the summarizer fails or times out, the older units are deleted instead and
a note says so, above the same quotes. If even the newest unit does not fit, its largest
messages are shrunk.
The caller writes the result back in one atomic state update.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from pilothouse.context.relevance import latest_question, relevance_scores, terms_and_parts
from pilothouse.context.summarizer import Summarizer, SummaryFailed, cut, shares
from pilothouse.context.tool_output import SHOWN_KEY, truncate_tool_output
from pilothouse.models.tokens import CHARS_PER_TOKEN_ESTIMATE, TokenCounter, message_text

SUMMARY_TAG = "summary"
#: Where a summary message keeps the person's words it quotes, for the next summary to keep.
SAID_KEY = "pilothouse_said"
MIN_SHRUNK_CHARS = 200
#: The person's own words of the messages a summary stands for are quoted after it, in up to
#: this share of the compression's target. A later question points back at what the person
#: said ("that pr for the drill", "the app they asked about"); a small model's summary
#: keeps their names or not. Measured with `pilothouse eval`'s long conversations on the local
#: model: a question about the pull request of a conversation's first message reached the
#: GitHub agent as "PR #12345: Summary of the 27 earlier messages", a number nobody gave.
SAID_SHARE = 0.2


@dataclass(frozen=True)
class CompressionResult:
    """The compressed history and what was done to get it."""

    messages: list[AnyMessage]
    method: str  # "summary" | "deletion" | "shrink" | "none"
    removed: int
    shrunk: int
    tokens_before: int
    tokens_after: int
    note: str = ""


def is_summary(message: BaseMessage) -> bool:
    return message.additional_kwargs.get("pilothouse") == SUMMARY_TAG


def group_units(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    """Split history into units that must stay together (AI tool calls with their results)."""
    units: list[list[BaseMessage]] = []
    for message in messages:
        if isinstance(message, ToolMessage) and units and any(
            isinstance(m, AIMessage) and m.tool_calls for m in units[-1]
        ):
            units[-1].append(message)
        else:
            units.append([message])
    return units


_SAID_HEADING = "\n\nWhat the person said in them, in their words:\n"


def _summary_text(message: BaseMessage) -> str:
    """What a summary message says, without the person's words it quotes."""
    return message_text(message).split(_SAID_HEADING, 1)[0]


def said_before(older: Sequence[BaseMessage]) -> list[str]:
    """The person's own messages among `older`, oldest first, with those an earlier summary
    of them kept (`SAID_KEY`)."""
    said: list[str] = []
    for message in older:
        if is_summary(message):
            said += [str(s) for s in message.additional_kwargs.get(SAID_KEY, ())]
        elif isinstance(message, HumanMessage):
            said.append(" ".join(message_text(message).split()))
    return [s for s in said if s]


def quoted(said: Sequence[str], chars: int, question: str) -> list[str]:
    """`said` within `chars`, in order: the messages sharing words with `question` whole (the
    most shared first, in up to half the room), the others cut to equal shares of the rest."""
    wanted = terms_and_parts(question)
    shared = [len(wanted & terms_and_parts(s)) for s in said]
    whole: set[int] = set()
    room = chars
    for index in sorted(range(len(said)), key=lambda i: -shared[i]):
        if shared[index] and room - len(said[index]) >= chars // 2:
            whole.add(index)
            room -= len(said[index])
    rest = [i for i in range(len(said)) if i not in whole]
    kept = dict(zip(rest, shares([len(said[i]) for i in rest], room), strict=True))
    return [said[i] if i in whole else cut(said[i], kept[i])
            for i in range(len(said)) if i in whole or kept[i]]


def _summary_message(text: str, covered: int, said: Sequence[str]) -> HumanMessage:
    """The message that stands for `covered` older ones: `text`, then the person's own words
    among them (`said`)."""
    words = (_SAID_HEADING + "\n".join(f"- {s}" for s in said)) if said else ""
    return HumanMessage(
        content=f"[Summary of the {covered} earlier messages of this conversation]\n{text}{words}",
        id=f"summary-{uuid.uuid4().hex}",
        additional_kwargs={"pilothouse": SUMMARY_TAG, SAID_KEY: list(said)},
    )


def _shrink(message: BaseMessage, counter: TokenCounter, max_tokens: int) -> BaseMessage:
    """A copy of `message` cut to about `max_tokens` (tool outputs keep their structure)."""
    text = message_text(message) if not isinstance(message, AIMessage) else str(message.content)
    tokens = max(1, counter.count_message(message))
    chars = max(MIN_SHRUNK_CHARS, int(len(text) * max_tokens / tokens * 0.9))
    if isinstance(message, ToolMessage):
        # The call was made and its result is the person's view: the model reads a cut copy
        # (never a refusal, which would have it call the same tool again), and the whole view
        # stays in the artifact. Measured: a follow-up's workflow log, shrunk to fit the
        # GitHub agent's window beside its earlier listing, reached the person as "Output too
        # large ... call the tool again" instead of the log's tail.
        cut, _ = truncate_tool_output(text, chars, refuse=False)
        artifact = message.artifact
        if artifact is None or isinstance(artifact, Mapping):
            shown = {SHOWN_KEY: text, **(artifact or {})}
            return message.model_copy(update={"content": cut, "artifact": shown})
    else:
        marker = "\n[... cut to fit the context window ...]\n"
        cut = text[: chars // 2] + marker + text[-chars // 3 :]
    return message.model_copy(update={"content": cut})


class Compressor:
    """Plans and performs compression of a message list to a token target."""

    def __init__(
        self, counter: TokenCounter, summarizer: Summarizer | None, *, prioritize: bool = False
    ) -> None:
        self.counter = counter
        self.summarizer = summarizer
        self.prioritize = prioritize

    def split(
        self, messages: Sequence[BaseMessage], target: int
    ) -> tuple[list[BaseMessage], list[list[BaseMessage]]]:
        """(older messages to summarize, units kept verbatim within `target`).

        Leading system messages are instructions, not history: they are always kept. The
        newest unit is always kept; then the newest units fill half the budget, and with
        prioritization on, the units most relevant to the current question fill the rest
        (without it, recency fills it all).
        """
        pinned = 0
        while pinned < len(messages) and isinstance(messages[pinned], SystemMessage):
            pinned += 1
        units = group_units(messages[pinned:])
        if not units:
            return [], [list(messages)] if messages else []
        budget = target - min(600, target // 5) - int(target * SAID_SHARE)
        sizes = [self.counter.count_messages(unit) for unit in units]
        used = self.counter.count_messages(messages[:pinned]) + sizes[-1]
        keep = {len(units) - 1}
        newest_first = range(len(units) - 2, -1, -1)
        recency_budget = budget // 2 if self.prioritize else budget
        for index in newest_first:
            if used + sizes[index] > recency_budget:
                break
            keep.add(index)
            used += sizes[index]
        if self.prioritize:
            question = latest_question(messages)
            scores = relevance_scores(question, units) if question else [0.0] * len(units)
            for index in sorted(newest_first, key=lambda i: -scores[i]):
                if index not in keep and scores[index] >= 1.0 and used + sizes[index] <= budget:
                    keep.add(index)
                    used += sizes[index]
        kept = [units[i] for i in sorted(keep)]
        older = [m for i, unit in enumerate(units) if i not in keep for m in unit]
        if pinned:
            kept.insert(0, list(messages[:pinned]))
        return older, kept

    def _finish(
        self,
        messages: Sequence[BaseMessage],
        older: list[BaseMessage],
        kept_units: list[list[BaseMessage]],
        summary: str | None,
        failure: str | None,
        target: int,
    ) -> CompressionResult:
        before = self.counter.count_messages(messages)
        head: list[BaseMessage] = []
        method = "none"
        note = ""
        if older:
            said = quoted(said_before(older), int(target * SAID_SHARE * CHARS_PER_TOKEN_ESTIMATE),
                          latest_question(messages))
            if summary is not None:
                head = [_summary_message(summary, len(older), said)]
                method = "summary"
                note = f"summarized {len(older)} older messages"
            else:
                previous = [m for m in older if is_summary(m)]
                text = (
                    f"{len(older)} older messages were removed to fit the context window "
                    f"(summarizing failed: {failure}). Ask the user to repeat details that "
                    "are missing."
                )
                if previous:  # keep what an earlier summary already preserved
                    text += "\nEarlier summary:\n" + _summary_text(previous[-1])[-2000:]
                head = [_summary_message(text, len(older), said)]
                method = "deletion"
                note = f"deleted {len(older)} older messages ({failure})"
        kept = [m for unit in kept_units for m in unit]
        shrunk = 0
        budget = target - self.counter.count_messages(head)
        while self.counter.count_messages(kept) > budget and kept:
            largest = max(range(len(kept)), key=lambda i: self.counter.count_message(kept[i]))
            size = self.counter.count_message(kept[largest])
            excess = self.counter.count_messages(kept) - budget
            smaller = _shrink(kept[largest], self.counter, max(60, size - excess))
            if self.counter.count_message(smaller) >= size:
                break  # cannot shrink further; the model-call guard handles the rest
            kept[largest] = smaller
            shrunk += 1
        if shrunk:
            method = method if method != "none" else "shrink"
            note = (note + "; " if note else "") + f"shrank {shrunk} oversized message(s)"
        system = [m for m in kept if isinstance(m, SystemMessage)]
        rest = [m for m in kept if not isinstance(m, SystemMessage)]
        result = cast("list[AnyMessage]", [*system, *head, *rest])
        return CompressionResult(
            result, method, len(older), shrunk, before, self.counter.count_messages(result), note
        )

    def compress(self, messages: Sequence[BaseMessage], target: int) -> CompressionResult:
        """Synchronous compression (the summarizer runs with its timeout)."""
        older, kept = self.split(messages, target)
        summary, failure = None, None
        if older:
            if self.summarizer is None:
                failure = "no summarizer configured"
            else:
                try:
                    summary = self.summarizer.summarize(older)
                except SummaryFailed as exc:
                    failure = str(exc)
        return self._finish(messages, older, kept, summary, failure, target)

    async def acompress(self, messages: Sequence[BaseMessage], target: int) -> CompressionResult:
        """Asynchronous compression (the summarizer runs with its timeout)."""
        older, kept = self.split(messages, target)
        summary, failure = None, None
        if older:
            if self.summarizer is None:
                failure = "no summarizer configured"
            else:
                try:
                    summary = await self.summarizer.asummarize(older)
                except SummaryFailed as exc:
                    failure = str(exc)
        return self._finish(messages, older, kept, summary, failure, target)

    def delete_only(self, messages: Sequence[BaseMessage], target: int) -> CompressionResult:
        """Fast compression without a model call (for the last-moment request guard)."""
        older, kept = self.split(messages, target)
        return self._finish(messages, older, kept, None, "no time to summarize", target)
