"""Grounded arguments: an id the model chose must come from the conversation, or it is dropped.

The answer layer removes numbers no tool or person gave (`context.grounding`); this does the same
for the ids a model puts in a call, where a made-up one does harm before anyone reads an answer.
Measured on the local model: asked to roll an application back, it filled the optional
`history_id` with 1 (no such deploy: the tool refused, nothing was planned) because the grammar
let it write every optional argument. An id argument whose value occurs nowhere in the
conversation (the question, earlier turns, tool results) is removed from the call, so the tool
takes its default (for a rollback, the previous deploy), and the turn reports it. It runs on the
model's response, before the evidence gate computes what a person approves.

Names that narrow a listing (project, label selector) must be a person's words: the local
model copied a few-shot example's `project=` into an unrelated question, made up a selector,
and on a follow-up took a project from the project column of the previous page.

Filters are held to the same rule against the person's words: a status filter nobody asked for
narrows a listing to a wrong answer. Measured on the local model: a question for one
environment's applications became `list_applications(sync_status="Synced",
health_status="Healthy", ...)` (212 of 276 matches). A filter is kept only when a person's
message of the conversation speaks of what it filters (one phrase of any of its values:
"degraded", "healthy", "out of sync"); the model reads which value they meant.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import ToolCall

from pilothouse.agents.inventory import candidates
from pilothouse.agents.question_parts import joined_words
from pilothouse.context.events import ContextAction, report
from pilothouse.context.rewrite import (
    RequestRewriteMiddleware,
    final_message,
    newest_question,
    with_revised_calls,
)
from pilothouse.models.tokens import message_text

#: How close a word the person wrote must be to a subject for the subject to be theirs (a
#: typo, another spelling): difflib's ratio, where "shopfrnt" is 0.93 of "shopfront".
_CLOSE = 0.8


def _parts(value: object) -> list[str]:
    """What of `value` must have been said: a label selector's values ("tier=frontend,env!=dev"
    -> frontend, dev: a person says "frontend apps" as often as "tier=frontend"), else all."""
    text = str(value)
    if "=" not in text:
        return [text]
    return [v for term in text.split(",") if (v := term.rsplit("=", 1)[-1].strip())]


def mentioned(value: object, messages: Sequence[BaseMessage], *,
              people_only: bool = False) -> bool:
    """Whether `value` occurs as a whole word in a person's message or (unless `people_only`)
    a tool result."""
    said = HumanMessage if people_only else HumanMessage | ToolMessage
    texts = [message_text(m) for m in messages if isinstance(m, said)]
    # A whole number: not the 1 of "eu-west-1" or "v1.2", yet "deploy 52." at a sentence's end.
    patterns = [re.compile(rf"(?<![\w.-]){re.escape(part)}(?![\w-])(?!\.\d)", re.IGNORECASE)
                for part in _parts(value)]
    return all(any(p.search(text) for text in texts) for p in patterns)


def _said(phrases: Sequence[str], text: str) -> bool:
    """Whether `text` says one of `phrases` as whole words (a space matches a hyphen too)."""
    words = "|".join(re.escape(p).replace(r"\ ", r"[\s-]+") for p in phrases)
    return bool(re.search(rf"(?<![\w-])(?:{words})(?![\w-])", text, re.IGNORECASE))


def asked_for(value: object, phrases: Mapping[str, Sequence[str]],
              messages: Sequence[BaseMessage]) -> bool:
    """Whether a person's message speaks of what filter value `value` filters: one of the
    phrases of any of the filter's values (`phrases`: value -> phrases).

    Code checks that the person asked about the dimension; which value they meant is the
    model's to read. Measured: "how many apps aren't synced?" came as `OutOfSync`, and code
    that matched the value's own words set it to `Synced` (a word table cannot read "not").
    A value with no phrases listed is left alone (True)."""
    if str(value).replace("_", "").replace(" ", "").lower() not in phrases:
        return True
    said = [phrase for values in phrases.values() for phrase in values]
    return any(_said(said, message_text(m)) for m in messages if isinstance(m, HumanMessage))


def _same_name(value: object, subject: object) -> bool:
    """Whether `value` is the name `subject` already gives (any case)."""
    return isinstance(subject, str) and str(value).strip().lower() == subject.strip().lower()


def _defaults(tools: Sequence[object], name: str) -> dict[str, Any]:
    """The defaults tool `name` declares in its JSON schema (an MCP tool's arguments)."""
    for tool in tools:
        schema = getattr(tool, "args_schema", None)
        if getattr(tool, "name", None) == name and isinstance(schema, dict):
            return {arg: spec["default"] for arg, spec in (schema.get("properties") or {}).items()
                    if isinstance(spec, dict) and "default" in spec}
    return {}


class GroundedArgsMiddleware(RequestRewriteMiddleware):
    """Holds a model's tool calls to what the conversation gave and the person asked.

    Drops the id arguments (`ids`: tool -> argument names) no message of the conversation
    supports, the names (`names`: tool -> argument names) no person gave or that repeat the
    resource the call is about (`about_one` or `subjects`), and the filter
    arguments (`filters`: argument -> value -> phrases) no person asked for. A subject
    (`subjects`: tool -> its required name argument) nobody gave becomes the one resource the
    question names (measured: asked about a rollback of one app, the local model called
    `get_application_changes` with the name of a few-shot example's app). `dry_run` of a
    change (`is_change(call)`) follows the person's words: a preview when they said one of
    `preview_phrases`, else the change itself, which still waits for their approval
    (measured: a request to roll an app back came as a dry run, so the person was never
    asked). When a filter nobody asked for was dropped from a call of the
    `filtered` tools, the one the person did ask for takes its place (measured: a question
    for a later page of the out-of-sync apps came as `list_applications(page=3,
    health_status="Progressing")`, an example's filter). A call with no filter gets none:
    "are all the payments apps healthy?" must see the unhealthy ones too.

    A call of a tool `about_one` resource (`about_one`: tool -> the argument naming it) whose
    resource nobody gave (no message has it, no word the person wrote is close to it: a typo
    is still theirs to be answered with near names) is a guess that no argument can mend: the
    model is asked again without those tools. Measured: "which apps are degraded?" came as
    the events of `orders`, a word of a few-shot example; "how many open tickets does <login>
    have across all our repos" as the pull requests of `<login>/web-frontend`, an example's
    repository.
    """

    def __init__(self, ids: Mapping[str, Sequence[str]],
                 filters: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
                 names: Mapping[str, Sequence[str]] | None = None, *,
                 subjects: Mapping[str, str] | None = None,
                 is_change: Callable[[Mapping[str, Any]], bool] | None = None,
                 preview_phrases: Sequence[str] = (), filtered: Sequence[str] = (),
                 about_one: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.ids = {tool: tuple(args) for tool, args in ids.items()}
        self.names = {tool: tuple(args) for tool, args in (names or {}).items()}
        self.filters = {name: dict(values) for name, values in (filters or {}).items()}
        self.subjects = dict(subjects or {})
        self.is_change = is_change
        self.preview_phrases = tuple(preview_phrases)
        self.filtered = frozenset(filtered)
        self.about_one = dict(about_one or {})

    def _settled(self, call: Mapping[str, Any], messages: Sequence[BaseMessage],
                 misfiltered: bool) -> dict[str, Any]:
        """The arguments the person's words settle: the subject they named, the filter they
        asked for in place of one they did not (`misfiltered`), preview or not."""
        tool, args = str(call["name"]), call["args"]
        question = newest_question(messages)
        settled: dict[str, Any] = {}
        subject = self.subjects.get(tool)
        if subject and args.get(subject) is not None and not mentioned(args[subject], messages):
            named = set(joined_words(question))
            if len(named) == 1:
                settled[subject] = named.pop()
        if tool in self.filtered and misfiltered:
            for name, values in self.filters.items():
                asked = [value for value, phrases in values.items() if _said(phrases, question)]
                if args.get(name) is None and len(asked) == 1:
                    settled[name] = asked[0]
        if self.is_change is not None and self.is_change(call):
            preview = _said(self.preview_phrases, question)
            if bool(args.get("dry_run", True)) != preview:
                settled["dry_run"] = preview
        return settled

    def _unsupported(self, call: Mapping[str, object], messages: Sequence[BaseMessage],
                     defaults: Mapping[str, Any]) -> list[str]:
        args = call["args"]
        assert isinstance(args, Mapping)
        tool = str(call["name"])
        # A value the tool takes anyway (`per_page=20`) needs nobody's words.
        given = {name: value for name, value in args.items()
                 if value is not None and (name not in defaults or defaults[name] != value)}
        ids = [name for name in self.ids.get(tool, ())
               if name in given and not mentioned(given[name], messages)]
        # One word the person wrote names one thing: the resource a call is about is not also
        # its narrowing name (measured: "what waits on a reviewer in <repo>" came with
        # `reviewer=<repo>`, an empty queue).
        about = args.get(self.about_one.get(tool) or self.subjects.get(tool) or "")
        ids += [name for name in self.names.get(tool, ()) if name in given
                and (not mentioned(given[name], messages, people_only=True)
                     or _same_name(given[name], about))]
        filters = [name for name, phrases in self.filters.items()
                   if args.get(name) is not None and not asked_for(args[name], phrases,
                                                                   messages)]
        return ids + filters

    def _guessed(self, call: Mapping[str, Any], messages: Sequence[BaseMessage]) -> bool:
        """Whether `call` is about one resource nobody named (its subject given by no one)."""
        subject = self.about_one.get(str(call["name"]))
        value = call["args"].get(subject) if subject else None
        if not isinstance(value, str) or mentioned(value, messages):
            return False
        said = [word.text.lower() for m in messages if isinstance(m, HumanMessage)
                for word in candidates(message_text(m))]
        return not difflib.get_close_matches(value.lower(), said, n=1, cutoff=_CLOSE)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        response = await super().awrap_model_call(request, handler)
        final = final_message(response)
        guesses = [c for c in (final.tool_calls if final is not None else ())
                   if self._guessed(c, request.messages)]
        offered = [t for t in request.tools if getattr(t, "name", None) not in self.about_one]
        if not guesses or not offered:
            return response
        tool = guesses[0]["name"]
        report(ContextAction("grounding", f"asked again without the tools about one resource: "
                             f"{tool} was called for '{guesses[0]['args'][self.about_one[tool]]}'"
                             ", which nobody named", "grounded_ids", {"calls": len(guesses)}))
        return await super().awrap_model_call(request.override(tools=offered), handler)

    def revise(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        dropped: list[str] = []
        changed: list[str] = []

        def revise_call(call: ToolCall) -> ToolCall:
            unsupported = self._unsupported(call, request.messages,
                                            _defaults(request.tools, call["name"]))
            dropped.extend(f"{name}={call['args'][name]}" for name in unsupported)
            kept: ToolCall = {**call, "args": {k: v for k, v in call["args"].items()
                                               if k not in unsupported}}
            settled = self._settled(kept, request.messages,
                                    misfiltered=any(n in self.filters for n in unsupported))
            changed.extend(f"{name}={value}" for name, value in settled.items())
            return {**kept, "args": {**kept["args"], **settled}}

        response = with_revised_calls(response, revise_call)
        if dropped:
            report(ContextAction("grounding", f"dropped {', '.join(dropped)} from a tool call: "
                                 "nobody gave or asked for it", "grounded_ids",
                                 {"arguments": len(dropped)}))
        if changed:
            report(ContextAction("grounding", f"set {', '.join(changed)} in a tool call, as the "
                                 "person asked", "grounded_ids", {"arguments": len(changed)}))
        return response
