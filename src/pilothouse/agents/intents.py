"""What a question asks of one resource, chosen by the model from a closed set of intents.

A question that names one resource (`agents.named_scope`) is offered the tools about it, and
which one answers it was the model's choice among ten tool names and their schemas, read in
the agent's whole prompt. Measured on the local model, over 27 one-application questions in
everyday words: the tool call picked the right read for 15 of 21 ("what's wrong with X" and
"why is X unhealthy" got the status, not the events), and took 8-28 s. Asked instead to name
what the question asks, from a short list of intents each saying in a line what it answers,
under a grammar that allows only those names, the same model chose right for 26 of 27 in
1.6 s a question (28 of 29 with two more asking which resources are unhealthy or crashing,
once each intent said what its answer is): the list reads like the question, ten tool names
and their schemas do not.

So a turn's first call about one resource starts with that short call. The intent maps to its
tool. Where the resource's name is all the tool needs (a read), code makes the call: the
frame is the call, and no second model call is spent choosing it. Where the question sets more
(a change's dry run, a log's pod or line count), the model writes the arguments with that one
tool offered. Either way the call records its intent, and its result is the answer: the
turn's next call writes the lead (`runtime.tool_choice`). A choice that fails (an error, a
timeout, no intent) leaves the call as it was.

Not used to choose the supervisor's agent: asked which of the agents (or none) answers 19
questions naming no agent, the same model chose right 6 and 9 times (two wordings of the
menu). An agent's domain is too broad to say in a line; the question's resources, resolved
against the live inventories, and its words route it (`agents.request_frame`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from pilothouse.context.rewrite import (
    INTENT_KEY,
    calling,
    final_message,
    first_call,
    question_text,
    with_final,
)
from pilothouse.context.summarizer import INTERNAL_TAG

log = logging.getLogger("pilothouse.agents.intents")

#: The one tool of the intent call: its argument is the intent, from the closed set.
CHOOSE_TOOL = "choose_intent"
#: Seconds the intent call may take before the turn goes on without it (measured: 1.6 s).
CHOOSE_SECONDS = 30.0


@dataclass(frozen=True)
class Intent:
    """A thing a person asks about a resource (`label`, `meaning`), and the tool answering it.

    `by_code`: the resource's name completes the call (a read whose other arguments have
    defaults that answer the plain question), so code makes it without the model.
    """

    label: str
    meaning: str
    tool: str
    by_code: bool = True


def intent_tool(intents: Sequence[Intent]) -> dict[str, Any]:
    """The schema of the intent call: one argument, one of the intents' labels."""
    return {"type": "function", "function": {
        "name": CHOOSE_TOOL,
        "description": "What the person asks. " + "; ".join(
            f"{i.label}: {i.meaning}" for i in intents),
        "parameters": {"type": "object", "required": ["intent"], "properties": {
            "intent": {"type": "string", "enum": [i.label for i in intents]}}}}}


def intent_messages(question: str, task: str, intents: Sequence[Intent]) -> list[Any]:
    """The intent call's whole prompt: the task, the intents one per line, the question."""
    menu = "\n".join(f"- {i.label}: {i.meaning}" for i in intents)
    return [SystemMessage(f"{task} The intents:\n{menu}"), HumanMessage(question)]


def chosen_label(message: Any) -> str | None:
    """The label an intent call's answer names, if it named one."""
    if not isinstance(message, AIMessage):
        return None
    for call in message.tool_calls:
        if call["name"] == CHOOSE_TOOL and isinstance(call["args"].get("intent"), str):
            return str(call["args"]["intent"])
    return None


class IntentMiddleware(AgentMiddleware):
    """On a turn's first call offered only tools of `intents` (two or more), the model names
    the intent in a short call of its own (`task` says what it classifies); its tool is
    called: by code where `by_code`, else by the model with that tool alone."""

    def __init__(self, intents: Sequence[Intent], *, task: str,
                 timeout_seconds: float = CHOOSE_SECONDS) -> None:
        super().__init__()
        self.intents = tuple(intents)
        self.task = task
        self.timeout_seconds = timeout_seconds

    def offered(self, request: ModelRequest) -> list[Intent]:
        """The intents whose tools `request` offers, when it offers nothing else."""
        names = {getattr(t, "name", None) for t in request.tools}
        intents = [i for i in self.intents if i.tool in names]
        covered = {i.tool for i in intents}
        return intents if len(covered) > 1 and names <= covered else []

    async def choose(self, request: ModelRequest, intents: Sequence[Intent]) -> Intent | None:
        """The intent the model names for the turn's question (None: it named none)."""
        model = request.model.bind_tools([intent_tool(intents)], tool_choice=CHOOSE_TOOL)
        messages = intent_messages(question_text(request), self.task, intents)
        try:
            # Internal: no text of it streams to the person, and usage counts it apart.
            answer = await asyncio.wait_for(model.ainvoke(messages, config={
                "tags": [INTERNAL_TAG], "run_name": CHOOSE_TOOL}), self.timeout_seconds)
        except Exception as exc:  # any failure has one outcome: no intent
            log.info("The intent call failed (%s); the model chooses the tool.", exc)
            return None
        label = chosen_label(answer)
        return next((i for i in intents if i.label == label), None)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        intents = self.offered(request) if first_call(request) else []
        chosen = await self.choose(request, intents) if intents else None
        if chosen is None:
            return await handler(request)
        if chosen.by_code:
            # The wrapping layers name the resource in this call, as in one the model wrote.
            return calling(chosen.tool, {}, intent=chosen.label)
        tools = [t for t in request.tools if getattr(t, "name", None) == chosen.tool]
        response = await handler(request.override(tools=tools, tool_choice="required"))
        final = final_message(response)
        if final is None or not final.tool_calls:
            return response
        return with_final(response, additional_kwargs={**final.additional_kwargs,
                                                       INTENT_KEY: chosen.label})
