"""Deterministic checks of one turn: routing, tools and arguments, facts, approvals, limits.

Every check returns a `Check` that says what was expected and what happened, so a failed case
in the report explains itself ("facts: missing '819'") without rerunning it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pilothouse.context.grounding import Sources, ground
from pilothouse.evals.cases import Expectation, Fact, ToolExpectation


@dataclass(frozen=True)
class Check:
    """One scored property of a turn."""

    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class ToolCall:
    """A tool call a model made: which agent, which tool, with what arguments."""

    agent: str
    name: str
    args: Mapping[str, Any]


@dataclass
class TurnOutcome:
    """What happened in one turn, as the checks need it."""

    answer: str
    calls: list[ToolCall]
    approvals: int
    context: Mapping[str, int]
    model_calls: int
    peak_prompt_tokens: int
    errors: list[str]
    #: What the answer may draw its numbers and names from: the conversation (questions, tool
    #: results, every agent's) and the agents' prompts. Empty: `grounded` is not checked.
    sources: Sequence[str] = ()


_MARKUP = re.compile(r"[*`_|#>]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


def normalize(text: str) -> str:
    """Lower case, markdown marks and thousands separators removed, spaces collapsed."""
    text = _THOUSANDS.sub("", _MARKUP.sub(" ", text.lower()))
    return re.sub(r"\s+", " ", text).strip()


def mentions(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as whole words or numbers ("819" is not in "8190")."""
    needle = normalize(phrase)
    if not needle:
        return False
    pattern = r"(?<!\w)" + re.escape(needle).replace(r"\ ", r"\s+") + r"(?!\w)"
    return re.search(pattern, normalize(text)) is not None


def _fact_label(fact: Fact) -> str:
    return fact if isinstance(fact, str) else " | ".join(fact)


def check_facts(answer: str, facts: Sequence[Fact]) -> Check:
    """Every fact (or one of each list of alternatives) is in the answer."""
    missing = [_fact_label(f) for f in facts
               if not any(mentions(answer, option) for option in ([f] if isinstance(f, str)
                                                                  else f))]
    detail = f"missing {', '.join(repr(m) for m in missing)}" if missing else (
        f"{len(facts)} present")
    return Check("facts", not missing, detail)


def check_absent(answer: str, absent: Sequence[str]) -> Check:
    """None of the things the answer must not say (injected or invented) is in it."""
    found = [a for a in absent if mentions(answer, a) or normalize(a) in normalize(answer)]
    return Check("absent", not found,
                 f"says {', '.join(repr(f) for f in found)}" if found else "clean")


def args_match(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """`expected` is a subset of `actual`: strings by containment (any case), others equal."""
    for key, want in expected.items():
        if key not in actual:
            return False
        have = actual[key]
        if isinstance(want, str):
            if not isinstance(have, str) or normalize(want) not in normalize(have):
                return False
        elif isinstance(want, Mapping):
            if not isinstance(have, Mapping) or not args_match(want, have):
                return False
        elif want != have:
            return False
    return True


def check_tools(calls: Sequence[ToolCall], expected: Sequence[ToolExpectation]) -> Check:
    """Each expected tool was called at least once with matching arguments."""
    missing = []
    for tool in expected:
        same_name = [c for c in calls if c.name == tool.name]
        if not any(args_match(tool.args, c.args) for c in same_name):
            seen = "; ".join(_render_args(c.args) for c in same_name[:3]) or "not called"
            missing.append(f"{tool.name}({_render_args(tool.args)}): {seen}")
    return Check("tools", not missing, " / ".join(missing) if missing else
                 ", ".join(t.name for t in expected))


def _render_args(args: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())[:160]


def check_agents(calls: Sequence[ToolCall], agents: Iterable[str]) -> Check:
    """The supervisor asked every expected specialist."""
    asked = {c.name.removeprefix("ask_") for c in calls if c.agent == "supervisor"}
    missing = sorted(set(agents) - asked)
    detail = f"not asked: {', '.join(missing)}" if missing else (
        "asked " + ", ".join(sorted(asked)) if asked else "none asked")
    return Check("agents", not missing, detail)


def check_grounded(answer: str, sources: Sequence[str]) -> Check:
    """Every number and resource-like name of the answer occurs in the conversation."""
    unsupported = ground(answer, Sources(sources)).removed
    return Check("grounded", not unsupported,
                 f"unsupported: {', '.join(unsupported[:8])}" if unsupported else "")


def check_turn(expect: Expectation, outcome: TurnOutcome) -> list[Check]:
    """The checks `expect` asks for, plus "answered" (an answer, no error) for every turn."""
    checks = [Check("answered", bool(outcome.answer.strip()) and not outcome.errors,
                    "; ".join(outcome.errors)[:300] if outcome.errors else
                    ("" if outcome.answer.strip() else "no answer"))]
    if outcome.sources and outcome.answer.strip():
        checks.append(check_grounded(outcome.answer, outcome.sources))
    if expect.agents:
        checks.append(check_agents(outcome.calls, expect.agents))
    if expect.tools:
        checks.append(check_tools(outcome.calls, expect.tools))
    if expect.facts:
        checks.append(check_facts(outcome.answer, expect.facts))
    if expect.absent:
        checks.append(check_absent(outcome.answer, expect.absent))
    if expect.approval is not None:
        asked = outcome.approvals > 0
        checks.append(Check("approval", asked == (expect.approval == "requested"),
                            f"{outcome.approvals} requested"))
    for action in expect.context:
        count = outcome.context.get(action, 0)
        checks.append(Check(f"context:{action}", count > 0, f"{count} time(s)"))
    if expect.max_model_calls is not None:
        checks.append(Check("model_calls", outcome.model_calls <= expect.max_model_calls,
                            f"{outcome.model_calls} of at most {expect.max_model_calls}"))
    if expect.max_prompt_tokens is not None:
        checks.append(Check("prompt_tokens",
                            outcome.peak_prompt_tokens <= expect.max_prompt_tokens,
                            f"peak {outcome.peak_prompt_tokens:,} of at most "
                            f"{expect.max_prompt_tokens:,}"))
    return checks
