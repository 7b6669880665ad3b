"""One turn of the local model: which prompt and grammar to use, and how many generations.

Each choice was measured on Qwen2.5-Coder-1.5B-Instruct Q4_K_M:

- Tools bound, `tool_choice="auto"`: one generation under a grammar that allows Qwen's
  `<tool_call>` form or plain text (see `local_toolcalls`); plain answers stream.
- Tools bound and the last message is a tool result: the model routes first, with the tools
  in view. It rightly asks for a second tool after a first result (status "Degraded" -> logs),
  but when it should answer it re-calls the same tool or explains how to call it (3/3
  conversations). So a repeated call, or any text, is dropped (text after its first token)
  and the answer is written from `render_answer_prompt` instead (3/3 correct answers).
- `tool_choice="required"` or a tool name: the grammar forces a `<tool_call>`. With
  `TurnOptions.reason_first` and a choice of tools, the call follows one line that opens with
  those words ("The answer is found by"): the model says how it will find the answer, then
  picks the tool (measured where it is used: `agents.devops.REASON_FIRST`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from pilothouse.models.lead import LeadPolicy
from pilothouse.models.local_engine import GenerationStats
from pilothouse.models.local_prompt import render_answer_prompt, render_prompt
from pilothouse.models.local_toolcalls import (
    MAX_PARALLEL_CALLS,
    OutputSplitter,
    ParsedOutput,
    build_grammar,
)
from pilothouse.models.tokens import turn_messages

#: Response metadata key: the prompt tokens a turn evaluated rather than took from the cache.
READ_TOKENS_KEY = "read_tokens"


class TurnEngine(Protocol):
    """What a turn needs of an engine: `WorkerEngine`, `ServiceEngine`, or `LocalEngine`."""

    @property
    def lock(self) -> AbstractContextManager[Any]:
        """Held for a whole turn: one engine runs one turn at a time."""

    def generate(
        self,
        prompt: str,
        *,
        stats: GenerationStats,
        max_tokens: int,
        temperature: float = 0.0,
        grammar: str | None = None,
        stop: Sequence[str] = (),
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[str]:
        """Yield answer text; fill `stats`."""


def normalize_tool_choice(choice: Any, tools: Sequence[dict[str, Any]]) -> str:
    """Map LangChain/OpenAI tool_choice spellings to "auto", "none", "required" or a name."""
    if choice is None or choice == "auto":
        return "auto"
    if choice is True or choice in ("any", "required"):
        return "required"
    if choice is False or choice == "none":
        return "none"
    name = choice
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
    names = [t["function"]["name"] for t in tools]
    if name not in names:
        raise ValueError(f"tool_choice {choice!r} names no bound tool (bound: {names})")
    return str(name)


@dataclass
class TurnOptions:
    """Sampling settings for every generation of a turn."""

    max_tokens: int
    temperature: float = 0.0
    stop: Sequence[str] = ()
    should_stop: Callable[[], bool] = lambda: False
    max_calls: int = MAX_PARALLEL_CALLS
    #: How an answer after tool results is read and held (None: whole results, `max_tokens`).
    lead: LeadPolicy | None = None
    #: The words a forced choice among several tools opens its one line of reasoning with.
    reason_first: str | None = None


@dataclass
class TurnOutcome:
    """The result of a turn, filled in while its text streams."""

    parsed: ParsedOutput = field(default_factory=lambda: ParsedOutput(content=""))
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str = "stop"
    generations: list[str] = field(default_factory=list)
    #: Prompt tokens evaluated over every generation of the turn (the rest were cached).
    read_tokens: int = 0


def _decode(
    engine: TurnEngine,
    prompt: str,
    outcome: TurnOutcome,
    options: TurnOptions,
    *,
    grammar: str | None = None,
    tool_names: frozenset[str] | None = None,
    route_only: bool = False,
    reason_first: bool = False,
) -> Iterator[str]:
    """Generate once, yield answer text, leave calls and counts in `outcome`.

    With `tool_names`, output is split into text and calls; with `route_only`, nothing is
    yielded and generation stops as soon as the output is known to be text.
    """
    stats = GenerationStats()
    splitter = OutputSplitter(tool_names, reason_first) if tool_names is not None else None

    def stop_now() -> bool:
        if splitter is not None and (splitter.finished or (route_only and splitter.mode == "text")):
            return True
        return options.should_stop()

    text = []
    started = time.monotonic()
    first_token: float | None = None
    for piece in engine.generate(
        prompt,
        stats=stats,
        max_tokens=options.max_tokens,
        temperature=options.temperature,
        grammar=grammar,
        stop=options.stop,
        should_stop=stop_now,
    ):
        text.append(piece)
        first_token = first_token if first_token is not None else time.monotonic() - started
        shown = splitter.feed(piece) if splitter is not None else piece
        if shown and not route_only:
            yield shown
    if splitter is not None:
        rest, outcome.parsed = splitter.finish()
        outcome.parsed.tool_calls = outcome.parsed.tool_calls[: options.max_calls]
        if rest and not route_only:
            yield rest
    else:
        outcome.parsed = ParsedOutput(content="".join(text).strip())
    # The first prompt is the whole conversation as the model sees it: that is the size the
    # context-window bookkeeping needs, whatever the second generation re-reads.
    outcome.input_tokens = outcome.input_tokens or stats.prompt_tokens
    outcome.output_tokens += stats.completion_tokens
    outcome.finish_reason = stats.finish_reason
    outcome.read_tokens += stats.read_tokens
    # Where the seconds went: reading the prompt (until the first token) or generating.
    said_first = f"; said first: {splitter.reason.strip()!r}" if splitter and splitter.reason \
        else ""
    outcome.generations.append(
        f"{stats.prompt_tokens}+{stats.completion_tokens} tokens (read {stats.read_tokens}): "
        f"first token {first_token or 0.0:.1f} s, all {time.monotonic() - started:.1f} s"
        + said_first)


def _call_key(call: Any) -> str:
    return str(call["name"]) + json.dumps(call["args"], sort_keys=True, default=str)


def keep_new_calls(messages: list[BaseMessage], parsed: ParsedOutput) -> bool:
    """Drop calls already made since the last user message; True if any call remains."""
    done = {
        _call_key(c) for m in turn_messages(messages) if isinstance(m, AIMessage)
        for c in m.tool_calls
    }
    parsed.tool_calls = [c for c in parsed.tool_calls if _call_key(c) not in done]
    return bool(parsed.tool_calls or parsed.invalid_tool_calls)


def run_turn(
    engine: TurnEngine,
    messages: list[BaseMessage],
    outcome: TurnOutcome,
    options: TurnOptions,
    *,
    tools: list[dict[str, Any]] | None,
    choice: str,
) -> Iterator[str]:
    """Run one model turn under the engine lock, yielding answer text as it is made."""
    names = frozenset(t["function"]["name"] for t in tools or [])
    after_tool = bool(messages) and isinstance(messages[-1], ToolMessage)
    with engine.lock:
        if tools and choice != "none":
            prompt = render_prompt(messages, tools)
            reason = options.reason_first if choice == "required" and len(tools) > 1 else None
            grammar = build_grammar(tools, choice, options.max_calls, reason)
            if not (after_tool and choice == "auto"):
                yield from _decode(engine, prompt, outcome, options, grammar=grammar,
                                   tool_names=names, reason_first=reason is not None)
                return
            routed = _decode(
                engine, prompt, outcome, options, grammar=grammar, tool_names=names, route_only=True
            )
            for _ in routed:
                pass
            if keep_new_calls(messages, outcome.parsed) or options.should_stop():
                return
        if not after_tool:
            yield from _decode(engine, render_prompt(messages), outcome, options)
            return
        lead = options.lead
        prompt = render_answer_prompt(messages, lead.result_chars if lead else None,
                                      history=lead is None)
        limit = min(lead.max_tokens or options.max_tokens, options.max_tokens) if lead \
            else options.max_tokens
        yield from _decode(engine, prompt, outcome, replace(options, max_tokens=limit))
