"""The answer of a turn: the model's short lead, grounded, then the tools' views verbatim.

Issue 15's principle: the model chooses and comments; code renders every fact. Each tool
result's text is already a rendered view (`tools.views`: the page line, counts, a table); the
model is asked only for a sentence or two on top (what it found, what to do next). When it
answers, this layer:

1. removes from what the model wrote any table or page line (code renders those) and every
   passage with a number or name no message of the conversation supports
   (`context.grounding`), reporting `grounding` as a context action;
2. appends the views of the turn's tool results, unchanged, so no count or row is ever typed
   token by token. A result a later call superseded (an empty page, an error the model
   recovered from) is left out.

The supervisor gets the same layer: its tool results are its agents' answers, passed through
unchanged below its lead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from pilothouse.config import Settings
from pilothouse.context.events import ContextAction, report
from pilothouse.context.grounding import Sources, ground
from pilothouse.context.rewrite import (
    RequestRewriteMiddleware,
    add_result_note,
    final_message,
    with_final,
)
from pilothouse.context.tool_output import SHOWN_KEY
from pilothouse.models.lead import LEAD_INSTRUCTION, LeadPolicy, lead_policy, whole_sentences
from pilothouse.models.tokens import message_text, turn_messages

#: Tools whose results are bookkeeping, not facts for the person (the plan shows on its own).
NOT_VIEWS = frozenset({"propose_plan", "update_plan_step"})
#: Results that answer a question only with the model's explanation: code passages are the
#: evidence for "how does X work?", not its answer, so a lead is always written above them.
EXPLAINED = frozenset({"retrieve_code_context"})
#: At most this much of views in one answer; earlier views give way to later ones.
MAX_VIEW_CHARS = 12_000
WITHHELD = ("I could not back my draft answer with the tools' results, so I left it out. "
            "Ask a more specific question (a name, a project, a status) and I will look it up.")

_TABLE_LINE = re.compile(r"^\s*\|.*\|\s*$")
_PAGE_LINE = re.compile(r"^\s*(\*\*)?(PAGE \d+ of \d+|Showing all \d)", re.I)


def empty_page(message: ToolMessage) -> bool:
    """Whether `message` is a page of a listing that found nothing."""
    artifact = message.artifact
    if not isinstance(artifact, Mapping):
        return False
    pagination = artifact.get("pagination")
    return isinstance(pagination, Mapping) and pagination.get("total_items") == 0


def _waiting(message: ToolMessage) -> bool:
    """A sub-agent's reply that still waits for an approval: a note to the model, not a view."""
    artifact = message.artifact
    return isinstance(artifact, Mapping) and artifact.get("state") == "input_required"


def _tool_error(message: ToolMessage) -> bool:
    artifact = message.artifact
    return isinstance(artifact, Mapping) and "error" in artifact and "suggestion" in artifact


def shown_text(message: ToolMessage) -> str:
    """What the user sees of a tool result: its whole view, even if the model read less."""
    artifact = message.artifact
    if isinstance(artifact, Mapping) and isinstance(artifact.get(SHOWN_KEY), str):
        return str(artifact[SHOWN_KEY]).strip()
    return message_text(message).strip()


def turn_views(messages: Sequence[BaseMessage]) -> list[str]:
    """The views of this turn's tool results worth showing, oldest first."""
    results = [m for m in turn_messages(messages) if isinstance(m, ToolMessage)
               and m.name not in NOT_VIEWS and not _waiting(m)]
    shown: list[str] = []
    for index, result in enumerate(results):
        later = results[index + 1:]
        if result.status == "error" and (
                not _tool_error(result)
                or any(r.name == result.name and r.status != "error" for r in later)):
            # Shown: a tool's own error (what happened, what to do). Not shown: a failed
            # attempt the model recovered from, or a note addressed to the model.
            continue
        if empty_page(result) and any(r.status != "error" and not empty_page(r)
                                       for r in later):
            continue  # a later call found what this one did not
        text = shown_text(result)
        if text and text not in shown:
            shown.append(text)
    while len(shown) > 1 and sum(len(v) for v in shown) > MAX_VIEW_CHARS:
        shown.pop(0)
    return shown


def strip_rendered(text: str) -> str:
    """The model's text without the tables and page lines code renders itself."""
    kept = [line for line in text.splitlines()
            if not _TABLE_LINE.match(line) and not _PAGE_LINE.match(line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def _said_by(lead: str, views: Sequence[str]) -> bool:
    words = " ".join(re.sub(r"[^\w\s-]", " ", lead.lower()).split())
    shown = " ".join(re.sub(r"[^\w\s-]", " ", "\n".join(views).lower()).split())
    return bool(words) and words in shown


def _sources(request: ModelRequest) -> Sources:
    texts = [message_text(m) for m in request.messages]
    if request.system_message is not None:
        texts.append(message_text(request.system_message))
    return Sources(texts)


class AnswerViewsMiddleware(RequestRewriteMiddleware):
    """Builds each final answer from the model's grounded lead and the turn's views.

    `lead` None (views off, the ablation of issue 15) keeps the model's whole text, grounded;
    `grounding` off keeps it unchecked. A lead policy without leads over answers makes no model
    call once the turn's views answer the question (`tool_choice="none"`): the answer is the
    views alone.
    """

    def __init__(self, *, lead: LeadPolicy | None = None, grounding: bool = True) -> None:
        super().__init__()
        self.lead = lead
        self.views = lead is not None
        self.grounding = grounding

    def answer_without_model(self, request: ModelRequest) -> ModelResponse | None:
        """The views-only answer, when no lead is to be written above them."""
        if self.lead is None or self.lead.over_answers or request.tool_choice != "none" \
                or not request.messages or not isinstance(request.messages[-1], ToolMessage) \
                or not turn_views(request.messages) or any(
                    isinstance(m, ToolMessage) and m.name in EXPLAINED
                    for m in turn_messages(request.messages)):
            return None
        return self.revise(request, ModelResponse(result=[AIMessage(content="")]))

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        if not self.views or not request.messages \
                or not isinstance(request.messages[-1], ToolMessage):
            return request
        return add_result_note(request, LEAD_INSTRUCTION)

    def revise(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        final = final_message(response)
        if final is None or final.tool_calls:
            return response
        text = message_text(final)
        views = turn_views(request.messages) if self.views else []
        # A table or page line the model typed is dropped even with no view this turn: code
        # renders those, and one typed after a page follow-up was the last page retyped.
        lead = strip_rendered(text) if self.views else text
        if text.strip() and not lead and not views:
            lead = WITHHELD
        if final.response_metadata.get("finish_reason") == "length":
            lead = whole_sentences(lead)
        if self.grounding:
            grounded = ground(lead, _sources(request))
            if grounded.removed:
                count = len(grounded.removed)
                report(ContextAction(
                    "grounding", f"removed {count} unsupported claim{'s' * (count != 1)} "
                    f"({', '.join(grounded.removed[:5])})", "grounding", {"claims": count}))
            lead = grounded.text if grounded.text or views or not grounded.removed \
                else WITHHELD
        if views and _said_by(lead, views):
            lead = ""  # the model restated a view: it is shown once, as rendered
        answer = "\n\n".join(part for part in (lead, *views) if part)
        if answer == text:
            return response
        return with_final(response, content=answer)


def answer_layers(settings: Settings) -> list[AgentMiddleware[Any, Any, Any]]:
    """The answer layer as Settings enable it (`PILOTHOUSE_DISABLE_LAYERS=views,grounding`)."""
    lead, grounding = lead_policy(settings), settings.layer_enabled("grounding")
    return [AnswerViewsMiddleware(lead=lead, grounding=grounding)] if lead or grounding \
        else []

