"""A summary is held to SUMMARY_MAX_TOKENS on models that take a token limit per call."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

from pilothouse.context.summarizer import SUMMARY_MAX_TOKENS, Summarizer
from pilothouse.testing.scripted_model import Script, ScriptedChatModel

CONVERSATION = [HumanMessage("Remember ticket INC-1."), AIMessage("Noted: INC-1.")]


class LimitedModel(ScriptedChatModel):
    """A scripted model with a `max_tokens` setting, as OpenAI's and the local model have."""

    max_tokens: int = 1024
    limits: list[Any] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.limits.append(kwargs.get("max_tokens"))
        return super()._generate(messages, stop, run_manager, **kwargs)


async def test_a_model_with_a_token_setting_gets_the_summary_limit() -> None:
    model = LimitedModel(script=Script(["The user gave ticket INC-1."]), limits=[])
    summarizer = Summarizer(model, timeout=10, max_input_chars=4_000)

    assert summarizer.summarize(CONVERSATION) == "The user gave ticket INC-1."
    model.script.steps.append("Ticket INC-1.")
    assert await summarizer.asummarize(CONVERSATION) == "Ticket INC-1."
    assert model.limits == [SUMMARY_MAX_TOKENS, SUMMARY_MAX_TOKENS]


def test_a_model_without_one_is_called_as_it_is() -> None:
    model = ScriptedChatModel.from_steps(["Ticket INC-1."])
    assert Summarizer(model, timeout=10, max_input_chars=4_000).summarize(
        CONVERSATION) == "Ticket INC-1."
