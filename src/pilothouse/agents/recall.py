"""An agent asked about something the person said earlier is given the words they said.

A specialist sees only the supervisor's question, never the conversation. Measured with
`pilothouse eval` on the local model: many exchanges after a person named one pull request
by number and repository, a question about "the pull request I mentioned" reached the GitHub
agent with neither; it listed a page of another repository's pull requests. The model
resolves "it" often; a reference to earlier words ("I said", "I mentioned", "at the start")
it passed on as said.

So when the supervisor's question to an agent points back at earlier words, code finds the
person's earlier sentences (the conversation's summary included) that share the most words
with it and carry a name or a number, and adds them to the question, quoted. The agent's
grounding then treats those names as the person's: they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.tool import ToolCall

from pilothouse.agents.question_parts import names_resource
from pilothouse.context.relevance import terms
from pilothouse.context.rewrite import RequestRewriteMiddleware, with_revised_calls
from pilothouse.models.tokens import message_text, turn_start

#: Words that point back at what the person said before.
POINTS_BACK = re.compile(
    r"\bI\s+(?:said|mentioned|named|gave(?:\s+you)?|told\s+you|noted|pasted|shared)\b|"
    r"\b(?:earlier|at\s+the\s+(?:very\s+)?(?:start|beginning)|my\s+first\s+message|"
    r"(?:we|you)\s+(?:discussed|noted|talked\s+about)|(?:this|our)\s+(?:conversation|chat))\b",
    re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_NUMBER = re.compile(r"(?<![\w.-])#?\d+(?![\w-])")
#: Earlier sentences added at most (the agent's question stays short).
RECALLED = 2
_NOTE = "\n\n(What the person said earlier, which the question refers to: {quotes})"


def recalled(question: str, earlier: Sequence[str], limit: int = RECALLED) -> list[str]:
    """The sentences of `earlier` (the person's words, oldest first) that `question` most
    likely points back at: sharing most of its words, with a name or a number."""
    wanted = set(terms(question))
    scored: list[tuple[int, int, str]] = []
    for text in earlier:
        for sentence in _SENTENCE.split(text):
            sentence = sentence.strip()
            if not (names_resource(sentence) or _NUMBER.search(sentence)):
                continue
            shared = len(wanted & set(terms(sentence)))
            if shared:
                scored.append((-shared, len(scored), sentence))
    return [sentence for *_, sentence in sorted(scored)[:limit]]


class RecallMiddleware(RequestRewriteMiddleware):
    """Adds the person's earlier words to a question for an agent that points back at them."""

    def revise(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        earlier = _earlier_words(request.messages)

        def revise_call(call: ToolCall) -> ToolCall:
            question = call["args"].get("question")
            if not isinstance(question, str) or not POINTS_BACK.search(question):
                return call
            quotes = recalled(question, earlier)
            if not quotes:
                return call
            question += _NOTE.format(quotes=" ".join(f'"{q}"' for q in quotes))
            return {**call, "args": {**call["args"], "question": question}}

        return with_revised_calls(response, revise_call)


def _earlier_words(messages: Sequence[BaseMessage]) -> list[str]:
    """The person's messages before this turn (a summary of older ones is one of them)."""
    start = turn_start(messages)
    return [message_text(m) for m in messages[:max(start, 0)] if isinstance(m, HumanMessage)]
