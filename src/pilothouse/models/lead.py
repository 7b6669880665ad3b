"""The lead: the sentence or two a model writes above the views of a turn's tool results.

Issue 15's principle is that the model chooses and comments while code renders every fact
(`runtime.answer_views`). This module is the whole policy for the comment, used from two
sides: the answer layer asks for it (`LEAD_INSTRUCTION`) and trims one cut off mid-sentence
(`whole_sentences`); the local model, which pays for every token it reads (~40/s on two cores)
and writes (~10/s), writes it from the results' first lines and is held to a lead's length
(`LeadPolicy`), and by default writes none above views that answer the question by themselves
(a page of applications, a deploy history, logs: the answering tools of each agent). Measured
with `pilothouse eval`'s per-call steps, such a lead took 10-50 s of a 20-70 s case on two cores
and mostly restated the view, sometimes wrongly ("There are 41 applications" above "PAGE 1 of
41 (819 applications)"). Cloud models get the instruction alone and always write a lead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pilothouse.config import Settings

#: Told to the model after the turn's newest tool result, not in the system prompt: a system
#: prompt that changed once results arrived made the local model re-read it and every tool
#: schema after it (its KV cache reuses only an unchanged prefix), and the same words in the
#: system prompt of every call made it answer "health of <an app>?" without a tool.
LEAD_INSTRUCTION = (
    "These tool results are shown to the user below your reply, exactly as they are. Do not "
    "repeat their tables, lists or counts. Write one or two short sentences: what they show "
    "for the question and, if useful, the next step (e.g. the page to ask for, a filter, an "
    "app to look at). Mention only names and numbers that appear in the results.")

_SENTENCE_END = re.compile(r"[.!?:][*`)\"']*(?=\s|$)")


@dataclass(frozen=True)
class LeadPolicy:
    """What a model reads and may write for a lead (None with views off, where the model
    writes the whole answer from whole results)."""

    #: How much of each tool result it reads: a view's header line, counts and first rows
    #: (~200 tokens), then "[... N more lines, shown to the user below your answer]".
    #: None: whole results.
    result_chars: int | None = 800
    #: Its most tokens: two short sentences. Leads of 90-160 tokens took 10-15 s of a case on
    #: two cores (`pilothouse eval`'s per-call steps). None: the model's own limit.
    max_tokens: int | None = 64
    #: Whether a lead is written above views that answer the question (`tool_choice="none"`:
    #: the model would have nothing to choose, only to comment).
    over_answers: bool = True


def lead_policy(settings: Settings) -> LeadPolicy | None:
    """The lead policy `settings` ask for: None with views off; on the local model a short lead
    over the results' first lines, and none over answering views unless
    PILOTHOUSE_LOCAL_LEADS; elsewhere the model's own lead over whole results."""
    if not settings.layer_enabled("views"):
        return None
    if settings.provider == "local":
        return LeadPolicy(over_answers=settings.local_leads)
    return LeadPolicy(result_chars=None, max_tokens=None)


def whole_sentences(text: str) -> str:
    """`text` without a last sentence cut off mid-way (unless it is all there is)."""
    text = text.strip()
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    return text[:ends[-1]] if ends else text
