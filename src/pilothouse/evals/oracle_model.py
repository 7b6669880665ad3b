"""An oracle chat model for the evaluation harness's self-check: it does what each case expects.

It plays every role at once, told apart by the tools bound to the request: as the supervisor
it asks exactly the case's agents with the user's question; as a specialist it calls exactly
the case's tools that it has; then it answers with the tool results verbatim (less anything the
case says must not be said: it treats injected orders as data), and writes summaries from the
users' own words. So a case passes with the oracle only when its tools are
called correctly on the real sandboxes and its facts are really in what they return: a check
of the cases and the harness, not of any model.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from pilothouse.context.summarizer import SUMMARY_INSTRUCTIONS
from pilothouse.evals.cases import Case, Expectation
from pilothouse.models.tokens import TokenCounter, message_text, turn_start


@dataclass
class OracleTurn:
    """The expectation of the turn being evaluated; the harness sets it before each turn."""

    expect: Expectation = field(default_factory=Expectation)


class OracleChatModel(BaseChatModel):
    """Follows `turn.expect`; reports usage counted with `counter` (messages + tool schemas)."""

    turn: OracleTurn
    counter: TokenCounter
    bound_tools: list[dict[str, Any]] = Field(default_factory=list)

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @property
    def _llm_type(self) -> str:
        return "oracle"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OracleChatModel:
        return self.model_copy(update={"bound_tools": [convert_to_openai_tool(t)
                                                       for t in tools]})

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        message = self._respond(messages).model_copy(update={"id": f"ai-{uuid.uuid4().hex}"})
        prompt = self.counter.count_messages(messages) + (
            self.counter.count_tools(self.bound_tools) if self.bound_tools else 0)
        completion = self.counter.count_message(message)
        message.usage_metadata = {"input_tokens": prompt, "output_tokens": completion,
                                  "total_tokens": prompt + completion}
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _respond(self, messages: list[BaseMessage]) -> AIMessage:
        if messages and isinstance(messages[0], SystemMessage) and \
                message_text(messages[0]) == SUMMARY_INSTRUCTIONS:
            return AIMessage(content=_summary(message_text(messages[-1])))
        last_question = turn_start(messages)
        turn = messages[last_question + 1:]
        results = [message_text(m) for m in turn if isinstance(m, ToolMessage)]
        if results or any(isinstance(m, AIMessage) and m.tool_calls for m in turn):
            return AIMessage(content=self._withhold("\n\n".join(results) or "Done."))
        names = {t["function"]["name"] for t in self.bound_tools}
        expect = self.turn.expect
        if any(name.startswith("ask_") for name in names):
            question = message_text(messages[last_question]) if last_question >= 0 else ""
            calls = [(f"ask_{agent}", {"question": question}) for agent in expect.agents
                     if f"ask_{agent}" in names]
        else:
            calls = [(tool.name, tool.call_args) for tool in expect.tools if tool.name in names]
        if calls:
            return AIMessage(content="", tool_calls=[
                {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}",
                 "type": "tool_call"} for name, args in calls])
        return AIMessage(content=_from_context(messages[:max(last_question, 0)]))


    def _withhold(self, text: str) -> str:
        """The text without what the case forbids: an oracle reads injected orders as data."""
        for phrase in self.turn.expect.absent:
            text = re.sub(re.escape(phrase), "[withheld]", text, flags=re.IGNORECASE)
        return text


def intended_calls(expect: Expectation) -> list[tuple[str, str]]:
    """What the oracle asks for in a turn, as (tool, arguments as JSON), in a stable order."""
    calls = [(f"ask_{agent}", "") for agent in expect.agents]
    calls += [(tool.name, json.dumps(tool.call_args, sort_keys=True)) for tool in expect.tools]
    return sorted(calls)


def overrides(case: Case, tool_calls: Sequence[Mapping[str, Any]]) -> list[str]:
    """The turns where the product did not make the calls the oracle asked for.

    The product has code between the model and the tools: routing by the question's words,
    calls made from the question before the model is asked, arguments nobody wrote dropped.
    Where that code changes what the model asked for, no model can pass the case, and the
    oracle's result says nothing about the case; this names those turns (`tool_calls` is a
    `CaseResult`'s), so a self-check can tell them from a case that is wrong.
    """
    found = []
    for number, turn in enumerate(case.turns, start=1):
        made = sorted((c["name"], "" if c["agent"] == "supervisor" else
                       json.dumps(c["args"], sort_keys=True))
                      for c in tool_calls if c["turn"] == number)
        wanted = intended_calls(turn.expect)
        if made != wanted:
            extra = [_call(n, a) for n, a in made if (n, a) not in wanted]
            missing = [_call(n, a) for n, a in wanted if (n, a) not in made]
            parts = ([f"made {', '.join(extra)}"] if extra else []) + (
                [f"not {', '.join(missing)}"] if missing else [])
            found.append(f"turn {number}: " + ("; ".join(parts) or "made a call twice"))
    return found


def _call(name: str, args: str) -> str:
    return f"{name}({args})" if args else name


def _summary(transcript: str) -> str:
    """The users' own lines of a transcript: what a faithful summary must keep."""
    lines = [line[:300] for line in transcript.splitlines() if line.startswith("User:")]
    return ("Earlier in this conversation:\n" + "\n".join(lines))[:2000] if lines else \
        "Earlier in this conversation: nothing the user asked is recorded."


def _from_context(earlier: Sequence[BaseMessage]) -> str:
    """An answer from the conversation before this question (summaries included)."""
    parts = [message_text(m) for m in earlier[1:] if not isinstance(m, ToolMessage)]
    text = "\n".join(p for p in parts if p.strip())
    return text or "I have nothing to add without a tool."
