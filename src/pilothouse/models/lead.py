"""The lead: the sentence or two a model writes above the views of a turn's tool results.

Issue 15's principle is that the model chooses and comments while code renders every fact
(`runtime.answer_views`). This module is the whole policy for the comment, used from two
sides: the answer layer asks for it (`LEAD_INSTRUCTION`) and trims one cut off mid-sentence
(`whole_sentences`); the local model, which pays for every token it reads (~40/s on two cores)
and writes (~10/s), writes it from the results' first lines and is held to a lead's length
(`LeadPolicy`). Cloud models get the instruction alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Told to the model after the turn's newest tool result, not in the system prompt: a system
#: prompt that changed once results arrived made the local model re-read it and every tool
#: schema after it (its KV cache reuses only an unchanged prefix), and the same words in the
#: system prompt of every call made it answer "health of payments-api?" without a tool.
LEAD_INSTRUCTION = (
    "These tool results are shown to the user below your reply, exactly as they are. Do not "
    "repeat their tables, lists or counts. Write one or two short sentences: what they show "
    "for the question and, if useful, the next step (e.g. the page to ask for, a filter, an "
    "app to look at). Mention only names and numbers that appear in the results.")

_SENTENCE_END = re.compile(r"[.!?:][*`)\"']*(?=\s|$)")


@dataclass(frozen=True)
class LeadPolicy:
    """What the local model reads and may write for a lead (views on; None with views off,
    where the model writes the whole answer from whole results)."""

    #: How much of each tool result it reads: a view's header line, counts and first rows
    #: (~200 tokens), then "[... N more lines, shown to the user below your answer]".
    result_chars: int = 800
    #: Its most tokens: two short sentences. Leads of 90-160 tokens took 10-15 s of a case on
    #: two cores (`pilothouse eval`'s per-call steps).
    max_tokens: int = 64


def whole_sentences(text: str) -> str:
    """`text` without a last sentence cut off mid-way (unless it is all there is)."""
    text = text.strip()
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    return text[:ends[-1]] if ends else text
