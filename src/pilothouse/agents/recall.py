"""An agent asked about something the person said earlier is given the words they said.

A specialist sees only the supervisor's question, never the conversation. Measured with
`pilothouse eval` on the local model: many exchanges after a person named one pull request
by number and repository, a question about "the pull request I mentioned" reached the GitHub
agent with neither; it listed a page of another repository's pull requests. The model
resolves "it" often; a reference to earlier words ("I said", "I mentioned", "at the start")
it passed on as said.

So when the supervisor's question to an agent in a later turn names nothing to act on, code
finds the person's earlier sentences (the conversation's summary included) that share the most
words with it and carry something to act on, and adds them to the question, quoted. Something
to act on is a number (an id, a count, a time, a version: any word with a digit) or a name one
of the live inventories holds (`agents.inventory`): a name's shape says nothing in a world that
calls its apps `shopfront`. The agent's grounding then treats those names as the person's: they
are. Whether the question points back is read from what it lacks, not from its words: "the
app that paged me", "that ticket", "the repo from before" say it in as many ways as people
talk, and each reaches the agent without what it refers to unless the sentence is quoted.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection, Sequence

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.tool import ToolCall

from pilothouse.agents.inventory import GROUP_KINDS, Inventory, Mention, candidates, name_words
from pilothouse.agents.request_frame import NO_RESOURCE
from pilothouse.context.relevance import terms
from pilothouse.context.rewrite import (
    RequestRewriteMiddleware,
    before_notes,
    final_message,
    newest_question,
    with_revised_calls,
)
from pilothouse.models.tokens import message_text, turn_start

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
#: Earlier sentences added at most (the agent's question stays short).
RECALLED = 2
_NOTE = "\n\n(What the person said earlier, which the question refers to: {quotes})"


def sharing(question: str, earlier: Sequence[str]) -> list[tuple[int, str]]:
    """The sentences of `earlier` (the person's words, oldest first) that share words with
    `question`, each with how many, in the order said."""
    wanted = set(terms(question))
    found = []
    for text in earlier:
        for sentence in _SENTENCE.split(text):
            sentence = sentence.strip().removeprefix("- ")  # a summary's quotes are a list
            shared = len(wanted & set(terms(sentence)))
            if sentence and shared:
                found.append((shared, sentence))
    return found


def acts_on(text: str, names: Collection[str]) -> bool:
    """Whether `text` gives something to act on: a number, or one of the inventory's `names`
    (lowercase)."""
    return any(c.isdigit() for c in text) or any(
        word.text.lower() in names for word in candidates(text))


def unsaid(question: str, conversation: Sequence[BaseMessage]) -> str | None:
    """A word of `question` (a model's question to an agent) with a digit or a joining
    character in it (`inventory.name_words`: a number, or a joined name) that nobody wrote
    in `conversation`: not the person, not an answer, not a tool. A number is an id, a
    count or a page, and a word joined by hyphens, slashes or underscores is written to be a
    name; one the model made up ("PR #12345", "the application named 'my-app'") is a guess
    the agent would act on. A plain word proves nothing either way: it may be the model's
    rewording."""
    said = "\n".join(message_text(m) for m in conversation
                     if not isinstance(m, SystemMessage)).lower()
    return next((word for word in name_words(question)
                 if not word.isalpha() and word.lower() not in said), None)


def recalled(question: str, earlier: Sequence[str], names: Collection[str] = (),
             limit: int = RECALLED) -> list[str]:
    """The sentences of `earlier` that `question` most likely points back at: sharing most of
    its words, with a number or one of the inventory's `names` (lowercase) to give."""
    scored = [(-shared, index, sentence)
              for index, (shared, sentence) in enumerate(sharing(question, earlier))
              if acts_on(sentence, names)]
    return [sentence for *_, sentence in sorted(scored)[:limit]]


async def recalled_mentions(question: str, earlier: Sequence[str],
                            inventory: Inventory) -> list[Mention]:
    """The resources the `earlier` sentences `question` points back at name (`recalled`),
    groups left out: a project's, a cluster's or a folder's name is often an ordinary word
    ("platform", "orders"), evidence of its agent only where the question itself says it."""
    said = dict.fromkeys(sentence for _, sentence in sharing(question, earlier))
    if not said:
        return []
    found = [m for m in await inventory.mentions("\n".join(said)) if m.kind not in NO_RESOURCE]
    quoted = {w.text.lower() for sentence in recalled(question, earlier,
                                                      {m.text.lower() for m in found})
              for w in candidates(sentence)}
    return [m for m in found if m.kind not in GROUP_KINDS and m.text.lower() in quoted]


class RecallMiddleware(RequestRewriteMiddleware):
    """Adds the person's earlier words to a question for an agent that names nothing to act
    on; the names are the ones `inventory` holds (without one: numbers only)."""

    def __init__(self, inventory: Inventory | None = None) -> None:
        super().__init__()
        self.inventory = inventory

    def revise(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        return self._with_recall(request, response, earlier_words(request.messages), ())

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        response = await handler(request)
        final = final_message(response)
        questions = [question for call in (final.tool_calls if final is not None else ())
                     if isinstance(question := call["args"].get("question"), str)]
        earlier = earlier_words(request.messages)
        if not questions or not earlier:
            return response
        names: set[str] = set()
        if self.inventory is not None:
            # The questions and the sentences they could recall are looked up together: one
            # lookup a turn says what each question names and what each sentence gives.
            # The person's question too: it stands in for a question with a made-up number.
            asked = [*questions, newest_question(request.messages)]
            said = dict.fromkeys(sentence for question in asked
                                 for _, sentence in sharing(question, earlier))
            names = {m.text.lower() for m in await self.inventory.mentions(
                         "\n".join([*asked, *said])) if m.kind not in NO_RESOURCE}
        return self._with_recall(request, response, earlier, names)

    @staticmethod
    def _with_recall(request: ModelRequest, response: ModelResponse, earlier: Sequence[str],
                     names: Collection[str]) -> ModelResponse:
        """`response` with each question that names nothing to act on given the `earlier`
        sentences it shares most words with.

        A question the model wrote with a number or name nobody gave (`unsaid`) is the
        person's question instead: what the person did say is what it stands for. Measured in
        long conversations on the local model: "did that pr for thursdays drill ever get
        appoved" reached the GitHub agent as "PR #12345: ...", and "and when did it last get
        a deploy" reached Argo CD as the last deploy "for the application named 'my-app'"."""
        def revise_call(call: ToolCall) -> ToolCall:
            question = call["args"].get("question")
            asked = newest_question(request.messages)
            # A note the model copied is code's, and routing drops it (`before_notes`).
            if isinstance(question, str) and unsaid(before_notes(question), request.messages):
                question = asked
                call = {**call, "args": {**call["args"], "question": question}}
            if not isinstance(question, str) or acts_on(question, names):
                return call
            # The person's words point back ("the thing finance asked about"); the model's
            # rewording of them, which named nothing, may share other words with other
            # sentences (measured: "what pods are running on the cluster" quoted a sentence
            # about a cluster). Its own words are the fallback.
            quotes = recalled(asked, earlier, names) or recalled(question, earlier, names)
            if not quotes:
                return call
            question += _NOTE.format(quotes=" ".join(f'"{q}"' for q in quotes))
            return {**call, "args": {**call["args"], "question": question}}

        return with_revised_calls(response, revise_call)


def earlier_words(messages: Sequence[BaseMessage]) -> list[str]:
    """The person's messages before this turn (a summary of older ones is one of them)."""
    start = turn_start(messages)
    return [message_text(m) for m in messages[:max(start, 0)] if isinstance(m, HumanMessage)]
