"""Evaluation cases: what to ask, what a good answer uses and says, and what it must not.

Cases live in YAML files (`evals/cases/*.yaml`), one category per file:

    category: argocd
    cases:
      - id: argocd-production-apps
        description: An environment filter is a search, not a full listing.
        turns: ["Show me production applications"]
        expect:
          agents: [argocd]                 # the supervisor asks these specialists
          tools:                           # a specialist calls each of these at least once
            - {name: search_argocd_resources, args: {query: production}}
          facts: ["production", ["page 1", "PAGE 1"]]   # in the answer; a list = any of
          absent: ["PWNED"]                # never in the answer
          max_model_calls: 8
          extra_calls: 0                   # tool calls beyond those above the turn may make

A turn is a question, or `{ask: ..., expect: {...}}` with expectations of its own; the
case-level `expect` belongs to the last turn. `history` seeds earlier exchanges (for long
conversations), `approval` says how the harness answers an approval request. A file may name
the sandbox world its cases run in (`world: <name>`, default: the default world); a run's
cases must share one world.

Cases come in splits (`SPLITS`): `dev`, the cases the product was developed against, and
`test`, written once on another world and never read to write a rule, prompt or example.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pilothouse.context.events import ACTIONS
from pilothouse.errors import UserInputError

CATEGORIES = ("argocd", "github", "devops", "multi_agent", "hostile", "long_conversation")
#: Split -> the folder of its cases, relative to the repository root.
SPLITS: dict[str, Path] = {"dev": Path("evals/cases"), "test": Path("evals/test_split")}
AGENTS = ("argocd", "github", "devops")
#: What the context layers report, plus the rejections the harness counts itself.
CONTEXT_ACTIONS = (*ACTIONS, "search_rejected", "approval_rejected")

Fact = str | list[str]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolExpectation(_Strict):
    """A tool a specialist must call; `args` must match (strings by containment, any case)."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    #: The exact arguments a scripted model sends (harness self-check); default: `args`.
    script_args: dict[str, Any] | None = None

    @property
    def call_args(self) -> dict[str, Any]:
        return dict(self.script_args if self.script_args is not None else self.args)


class Expectation(_Strict):
    """What one turn must do and say."""

    agents: list[Literal["argocd", "github", "devops"]] = Field(default_factory=list)
    tools: list[ToolExpectation] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    absent: list[str] = Field(default_factory=list)
    approval: Literal["requested", "none"] | None = None
    context: list[str] = Field(default_factory=list)
    max_model_calls: int | None = Field(default=None, ge=1)
    max_prompt_tokens: int | None = Field(default=None, ge=1)
    #: Tool calls the turn may make beyond one per expected tool and one `ask_` per agent
    #: (e.g. the steps of a plan once it is approved).
    extra_calls: int = Field(default=0, ge=0)

    @field_validator("context")
    @classmethod
    def _known_actions(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(CONTEXT_ACTIONS))
        if unknown:
            raise ValueError(f"unknown context action(s) {unknown}; known: "
                             + ", ".join(CONTEXT_ACTIONS))
        return value

    @field_validator("facts")
    @classmethod
    def _non_empty_facts(cls, value: list[Fact]) -> list[Fact]:
        for fact in value:
            options = [fact] if isinstance(fact, str) else fact
            if not options or not all(o.strip() for o in options):
                raise ValueError("a fact must be a non-empty string or list of strings")
        return value

    @property
    def is_empty(self) -> bool:
        return self == Expectation()


class Turn(_Strict):
    """One question of a case and what its answer must show."""

    ask: str = Field(min_length=1)
    expect: Expectation = Field(default_factory=Expectation)


class Exchange(_Strict):
    """An earlier exchange seeded into the conversation before the case starts."""

    user: str = Field(min_length=1)
    assistant: str = Field(min_length=1)


class Case(_Strict):
    """One evaluation case."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    category: Literal["argocd", "github", "devops", "multi_agent", "hostile",
                      "long_conversation"]
    description: str = ""
    turns: list[Turn] = Field(min_length=1)
    history: list[Exchange] = Field(default_factory=list)
    approval: Literal["approve", "reject"] = "reject"
    #: The sandbox world the case runs in (None: the default world).
    world: str | None = None

    @property
    def question(self) -> str:
        return self.turns[0].ask


def _case(raw: dict[str, Any], category: str) -> Case:
    """A case from its YAML mapping: plain-string turns, case-level `expect` on the last."""
    raw = dict(raw)
    raw.setdefault("category", category)
    turns = [t if isinstance(t, dict) else {"ask": t} for t in raw.pop("turns", [])]
    if "question" in raw:
        turns.insert(0, {"ask": raw.pop("question")})
    expect = raw.pop("expect", None)
    if expect is not None and turns:
        if turns[-1].get("expect"):
            raise ValueError("the last turn has its own `expect`; drop the case-level one")
        turns[-1] = {**turns[-1], "expect": expect}
    return Case.model_validate({**raw, "turns": turns})


def load_case_file(path: Path) -> list[Case]:
    """The cases of one YAML file; a mistake names the file, the case and the field."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise UserInputError(f"Cannot read evaluation cases from {path}: {error}",
                             hint="Fix the file (it must be YAML).") from error
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise UserInputError(f"{path} has no `cases:` list.",
                             hint="See evals/cases/argocd.yaml for the format.")
    category = str(document.get("category", path.stem))
    world = document.get("world")
    cases = []
    for number, raw in enumerate(document["cases"], start=1):
        name = raw.get("id", f"#{number}") if isinstance(raw, dict) else f"#{number}"
        try:
            if not isinstance(raw, dict):
                raise ValueError("a case must be a mapping")
            cases.append(_case({"world": world, **raw} if world else raw, category))
        except (ValidationError, ValueError) as error:
            raise UserInputError(f"{path}: case {name} is invalid: {_first_error(error)}",
                                 hint="Fix the case; the format is in "
                                      "pilothouse/evals/cases.py.") from error
    return cases


def _first_error(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" + (f" ({error.error_count()} errors)"
                                              if error.error_count() > 1 else "")
    return str(error)


def load_cases(sources: Iterable[Path], *, only: Iterable[str] = (),
               per_category: int | None = None) -> list[Case]:
    """Cases from files or folders of `*.yaml`; `only` keeps ids or categories named there.

    `per_category` keeps the first N cases of each category, in file order: a sample that
    covers every category and is the same on every run. Ids must be unique across the set,
    so a report names each case once.
    """
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            files.extend(sorted(source.glob("*.yaml")))
        elif source.is_file():
            files.append(source)
        else:
            raise UserInputError(f"No evaluation cases at {source}.",
                                 hint="Pass a YAML file or a folder of them (evals/cases).")
    cases = [case for path in files for case in load_case_file(path)]
    repeated = [name for name, n in Counter(c.id for c in cases).items() if n > 1]
    if repeated:
        raise UserInputError(f"Case ids are repeated: {', '.join(sorted(repeated))}.",
                             hint="Give each case a unique id.")
    wanted = set(only)
    if wanted:
        cases = [c for c in cases if c.id in wanted or c.category in wanted]
        if not cases:
            raise UserInputError(f"No case has the id or category {', '.join(sorted(wanted))}.",
                                 hint="Categories: " + ", ".join(CATEGORIES) + ".")
    if per_category is not None:
        seen: Counter[str] = Counter()
        sample = []
        for case in cases:
            seen[case.category] += 1
            if seen[case.category] <= per_category:
                sample.append(case)
        cases = sample
    return cases


def world_of(cases: Iterable[Case]) -> str | None:
    """The one sandbox world `cases` run in (None: the default world)."""
    worlds = {case.world for case in cases}
    if len(worlds) > 1:
        raise UserInputError("These cases run in different sandbox worlds: "
                             + ", ".join(sorted(str(w or "default") for w in worlds)) + ".",
                             hint="Run one split at a time (--split dev or --split test).")
    return next(iter(worlds), None)
