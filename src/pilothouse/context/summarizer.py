"""Summarize older messages with a chat model, within a time limit and the model's own window.

LangChain's `SummarizationMiddleware` lets a failed summary propagate and counts no tool schemas;
we keep its idea (a model writes the summary) but bound the summarizer's input to its window,
put a timeout on the call, and turn every failure into `SummaryFailed` so the caller can fall
back to deletion instead of breaking the conversation.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig

SUMMARY_INSTRUCTIONS = (
    "You compress a conversation between a platform engineer and an assistant so it can "
    "continue within a small context window. Write at most 150 words. Keep: the user's goals "
    "and questions, names (applications, repositories, files, clusters), numbers, statuses, "
    "decisions, commands run and their outcomes, and open questions. Drop pleasantries and "
    "raw listings (keep their totals). Write plain sentences, no preamble."
)


SUMMARY_REQUEST = "Write the summary now."
#: The most tokens a summary may take: 150 words and some room. Measured with `pilothouse
#: eval` on the local model: unbounded, one summary ran to 1,041 tokens (~100 s on two cores);
#: asked for 250 words, one ran to its bound of 400 tokens (56 s of a case's 300 s, at ~7
#: tokens/s). The person's own words, which later questions point back at, are what the
#: transcript keeps whole (`render_for_summary`), so a shorter summary loses less of them.
SUMMARY_MAX_TOKENS = 250

#: Tag on the summarizer's own model calls, so interfaces do not stream them as the answer.
INTERNAL_TAG = "pilothouse-internal"
_INTERNAL_CONFIG: RunnableConfig = {"tags": [INTERNAL_TAG], "run_name": "summarize_history"}


class SummaryFailed(Exception):
    """The summarizer could not produce a summary (error, timeout or empty answer)."""


def shares(lengths: Sequence[int], budget: int) -> list[int]:
    """How many characters each of `lengths` keeps within `budget`: an equal share each, a
    shorter one whole and what it leaves shared among the longer ones."""
    kept = [0] * len(lengths)
    left = max(0, budget)
    by_length = sorted(range(len(lengths)), key=lengths.__getitem__)
    for rank, index in enumerate(by_length):
        kept[index] = min(lengths[index], left // (len(by_length) - rank))
        left -= kept[index]
    return kept


_CUT = " [...]"


def cut(text: str, chars: int) -> str:
    """`text` whole, or its first `chars` characters with a mark that it was cut."""
    return text if len(text) <= chars else text[: max(0, chars - len(_CUT))] + _CUT


def render_for_summary(messages: Sequence[BaseMessage], max_chars: int) -> str:
    """Plain-text transcript of `messages` within `max_chars`, every message's start kept.

    The person's words are cut last: they hold the goals, names and numbers a summary must
    keep, and they are short beside the assistant's replies, which share what is left (at
    least half the room when they need it). Measured: keeping the newest characters of 34
    messages cut the conversation's first exchange out of the summarizer's input, the one
    that named the application a later question pointed back at.
    """
    lines: list[tuple[str, str, bool]] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            role = "User"
        elif isinstance(message, AIMessage):
            role = "Assistant"
        elif isinstance(message, ToolMessage):
            role = f"Tool result ({message.name or 'tool'})"
        else:
            role = message.type.capitalize()
        text = message.content if isinstance(message.content, str) else str(message.content)
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = ", ".join(f"{c['name']}({c['args']})" for c in message.tool_calls)
            text = f"{text}\n[called {calls}]".strip()
        lines.append((f"{role}: ", text, isinstance(message, HumanMessage)))
    room = max_chars - sum(len(role) + 1 for role, _, _ in lines)
    theirs = [len(text) for _, text, person in lines if person]
    others = [len(text) for _, text, person in lines if not person]
    person_shares = shares(theirs, room - min(sum(others), room // 2))
    other_shares = iter(shares(others, room - sum(person_shares)))
    person_kept = iter(person_shares)
    return "\n".join(role + cut(text, next(person_kept if person else other_shares))
                     for role, text, person in lines)


class Summarizer:
    """Writes summaries with `model`; `max_input_chars` keeps its prompt inside its window."""

    def __init__(self, model: BaseChatModel, *, timeout: float, max_input_chars: int) -> None:
        self.model = model
        self.timeout = timeout
        self.max_input_chars = max_input_chars
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        # Passed per call where the model has the setting (OpenAI, Anthropic, the local
        # model); a model without it keeps its own limit.
        self._limit: dict[str, Any] = ({"max_tokens": SUMMARY_MAX_TOKENS}
                                       if "max_tokens" in type(model).model_fields else {})

    def _prompt(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        transcript = render_for_summary(messages, self.max_input_chars)
        # The request comes last: ending on the transcript, whose last line is often the
        # assistant's, the local model took the conversation as finished and wrote nothing
        # (0 tokens in 7 of 8 long conversations of `pilothouse eval`).
        return [
            SystemMessage(content=SUMMARY_INSTRUCTIONS),
            HumanMessage(content=f"Conversation to summarize:\n{transcript}\n\n{SUMMARY_REQUEST}"),
        ]

    @staticmethod
    def _text(answer: BaseMessage) -> str:
        text = answer.text if hasattr(answer, "text") else str(answer.content)
        text = text.strip()
        if not text:
            raise SummaryFailed("the summarizer returned an empty answer")
        return text

    def summarize(self, messages: Sequence[BaseMessage]) -> str:
        """Summary text, or `SummaryFailed` after an error or `timeout` seconds."""
        future = self._pool.submit(self.model.invoke, self._prompt(messages), _INTERNAL_CONFIG,
                                   **self._limit)
        try:
            return self._text(future.result(timeout=self.timeout))
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise SummaryFailed(f"timed out after {self.timeout:g} s") from None
        except SummaryFailed:
            raise
        except Exception as exc:
            raise SummaryFailed(f"{type(exc).__name__}: {exc}"[:300]) from exc

    async def asummarize(self, messages: Sequence[BaseMessage]) -> str:
        """Async `summarize`."""
        try:
            answer = await asyncio.wait_for(
                self.model.ainvoke(self._prompt(messages), _INTERNAL_CONFIG, **self._limit),
                timeout=self.timeout
            )
        except TimeoutError:
            raise SummaryFailed(f"timed out after {self.timeout:g} s") from None
        except Exception as exc:
            raise SummaryFailed(f"{type(exc).__name__}: {exc}"[:300]) from exc
        return self._text(answer)
