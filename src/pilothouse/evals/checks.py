"""Deterministic checks of one turn: routing, tools and arguments, facts, approvals, limits.

Every check returns a `Check` that says what was expected and what happened, so a failed case
in the report explains itself ("facts: missing '819'") without rerunning it.

Doing more than asked fails too, as a person would count it: an agent the turn did not need
(`routing`), a tool call beyond the expected ones (`extra_calls`: a second try, a listing
before the lookup, a tool nobody asked for) and a name the world does not have, unless the
person wrote it (`names`: a guessed application, organisation or run id).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

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
    #: The conversation up to the turn's question, question included: a name written here is
    #: the person's, not a guess.
    said: str = ""


class NameCatalogue(Protocol):
    """What exists in the world a turn ran in (`evals.catalogue.Catalogue`)."""

    def unknown(self, agent: str, args: Mapping[str, Any]) -> list[tuple[str, str]]: ...


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


def _asked(calls: Sequence[ToolCall]) -> Counter[str]:
    """How often the supervisor asked each agent."""
    return Counter(c.name.removeprefix("ask_") for c in calls
                   if c.agent == "supervisor" and c.name.startswith("ask_"))


def check_routing(calls: Sequence[ToolCall], agents: Iterable[str]) -> Check:
    """The supervisor asked no agent beyond the expected ones (over-routing fails)."""
    extra = sorted(set(_asked(calls)) - set(agents))
    return Check("routing", not extra, f"also asked: {', '.join(extra)}" if extra else
                 "no other agent")


def _matching(calls: Sequence[ToolCall], expected: Sequence[ToolExpectation]) -> int:
    """How many calls can be paired one-to-one with the expected tools (Kuhn's matching)."""
    owner: dict[int, int] = {}  # expected entry -> the call paired with it

    def pair(call: int, seen: set[int]) -> bool:
        for entry, tool in enumerate(expected):
            if entry in seen or tool.name != calls[call].name or \
                    not args_match(tool.args, calls[call].args):
                continue
            seen.add(entry)
            if entry not in owner or pair(owner[entry], seen):
                owner[entry] = call
                return True
        return False

    return sum(pair(k, set()) for k in range(len(calls)))


def check_extra_calls(calls: Sequence[ToolCall], expect: Expectation) -> Check:
    """No call beyond one `ask_` per agent and one per expected tool, plus `extra_calls`."""
    asked = _asked(calls)
    repeated = sum(n - 1 for n in asked.values() if n > 1)
    made = [c for c in calls if c.agent != "supervisor"]
    unexpected = len(made) - _matching(made, expect.tools)
    extra = repeated + unexpected
    names = [f"{c.agent}.{c.name}" for c in made][:8]
    detail = (f"{extra} extra of {expect.extra_calls} allowed ({repeated} repeated asks; "
              f"calls: {', '.join(names) or 'none'})")
    return Check("extra_calls", extra <= expect.extra_calls, detail)


def check_names(calls: Sequence[ToolCall], catalogue: NameCatalogue, said: str) -> Check:
    """Every resource a call names exists in the world, or the person named it."""
    guessed = [f"{kind} {name!r} ({call.name})" for call in calls
               for kind, name in catalogue.unknown(call.agent, call.args)
               if not mentions(said, name)]
    return Check("names", not guessed, "guessed " + "; ".join(guessed[:6]) if guessed else
                 "all exist")


def check_grounded(answer: str, sources: Sequence[str]) -> Check:
    """Every number and resource-like name of the answer occurs in the conversation."""
    unsupported = ground(answer, Sources(sources)).removed
    return Check("grounded", not unsupported,
                 f"unsupported: {', '.join(unsupported[:8])}" if unsupported else "")


def check_turn(expect: Expectation, outcome: TurnOutcome,
               catalogue: NameCatalogue | None = None) -> list[Check]:
    """The checks `expect` asks for, plus "answered" (an answer, no error) for every turn.

    A turn that expects anything is also held to it: no other agent, no extra call; and with
    a `catalogue`, no call names what the world does not have.
    """
    checks = [Check("answered", bool(outcome.answer.strip()) and not outcome.errors,
                    "; ".join(outcome.errors)[:300] if outcome.errors else
                    ("" if outcome.answer.strip() else "no answer"))]
    if outcome.sources and outcome.answer.strip():
        checks.append(check_grounded(outcome.answer, outcome.sources))
    if expect.agents:
        checks.append(check_agents(outcome.calls, expect.agents))
    if not expect.is_empty:
        checks.append(check_routing(outcome.calls, expect.agents))
        checks.append(check_extra_calls(outcome.calls, expect))
    if catalogue is not None and outcome.calls:
        checks.append(check_names(outcome.calls, catalogue, outcome.said))
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
