"""The answer budget: how many tokens a sub-agent's answer may take in the caller's context.

The supervisor passes the budget along (the sub-agent is asked to be brief) and holds the
answer its model reads to it with its own token counter (a sub-agent that ignores the request
is cut), so one sub-agent cannot flood the supervisor's context. In process or over A2A alike.
The person is shown more: the answer whole up to `SHOWN_CHARS`, cut only at a line, because
an answer is mostly its tools' rendered views and a view cut mid-table misleads.
"""

from __future__ import annotations

from pilothouse.context.rewrite import TURN_NOTE
from pilothouse.models.tokens import TokenCounter

#: Request metadata key carrying the budget to a remote agent (A2A message metadata).
BUDGET_METADATA_KEY = "answer_budget_tokens"
#: The most of one agent's answer the person is shown through the supervisor: half of what
#: one answer's views may take (`answer_views.MAX_VIEW_CHARS`), so two agents fit.
SHOWN_CHARS = 6_000


def with_answer_budget(question: str, tokens: int | None) -> str:
    """`question` plus the instruction to answer within `tokens` tokens.

    After `TURN_NOTE`, like every note layers add: what reads the person's question
    (`question_text`: routing, tool hints, grounded arguments) reads it without the note
    (measured: its "say how many more" read as a count question)."""
    if not tokens:
        return question
    return (f"{question}{TURN_NOTE}Answer in at most {tokens} tokens: one summary line, then "
            "only the rows that matter; say how many more there are instead of listing them.")


def fit_to_budget(text: str, tokens: int, counter: TokenCounter, *, agent: str) -> str:
    """`text` cut to at most `tokens` tokens (by `counter`), with a note saying so."""
    total = counter.count_text(text)
    if total <= tokens:
        return text
    note = (f"\n[... {agent}'s answer was cut to {tokens} of {total} tokens to protect the "
            f"supervisor's context; ask {agent} a narrower question for the rest.]")
    room = max(tokens - counter.count_text(note), 1)
    # Binary search on characters: the longest prefix that fits the token budget.
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if counter.count_text(text[:middle]) <= room:
            low = middle
        else:
            high = middle - 1
    return text[:low].rstrip() + note


def fit_shown(text: str, agent: str, chars: int = SHOWN_CHARS) -> str:
    """`text` whole, or cut at a line so that it fits `chars` with a note saying so."""
    if len(text) <= chars:
        return text
    kept = text[:chars - 200]  # room for the note
    kept = kept[:kept.rfind("\n")] if "\n" in kept else kept
    # No figure in the note: it is code's words in the answer, and a count no tool returned
    # would read as an unsupported claim to the grounding check.
    return (f"{kept.rstrip()}\n\n[... the rest of {agent}'s answer is left out; ask {agent} "
            "a narrower question for it.]")
