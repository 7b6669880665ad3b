"""A search of the files for the person's own phrase that found nothing is asked by meaning.

Code says what it does in its own words (identifiers, comments, settings), not in the words a
person types to ask about it. The shell already runs a grep for plain words that matched no
line once more, spelled as code spells them (`tools.shell.respell`: "db pool size" finds
`ORDERS_DB_POOL_SIZE`). When that finds nothing either (its result then names the pattern:
`unmatched_pattern`), and the pattern is several of the question's words in a row, as the
person wrote them, the search looked for their sentence, which no file holds: the next call
is code retrieval with their question, a search by meaning (`search_query.grounded_retrieval`),
made without the model. Measured on held-out dev questions on the local model: "how many
times do we retry a charge on our end?" became `grep -rn "retry a charge on our end"`, and
"our readme says prod gets deployed from where?" `grep -rn 'prod gets deployed from where?'
README.md`; each matched nothing, and the answer said so.

A phrase the person quoted (`"connection refused"`, backticks) is text they want found as it
is, and one word ("grep for readyz") is a term the code may or may not hold: a search for
either that finds nothing has its answer.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage

from pilothouse.context.rewrite import RequestRewriteMiddleware, calling, question_text
from pilothouse.models.tokens import turn_messages

#: What a person quotes: in backticks, in double quotes, or in single quotes after a space.
_QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|(?:^|(?<=\s))'([^']+)'")


def _words(text: str) -> list[str]:
    """`text`'s words, lower case, without the punctuation around them."""
    stripped = (w.strip(string.punctuation).lower() for w in text.split())
    return [w for w in stripped if w]


def persons_phrase(pattern: str, question: str) -> bool:
    """Whether `pattern` is several words the person wrote in a row in `question`, not
    quoted there."""
    words = _words(pattern)
    if len(words) < 2:
        return False

    def holds(text: str) -> bool:
        said = _words(text)
        return any(said[i:i + len(words)] == words for i in range(len(said) - len(words) + 1))

    quoted = ["".join(m.groups(default="")) for m in _QUOTED.finditer(question)]
    return holds(question) and not any(holds(q) for q in quoted)


class PhraseSearchMiddleware(RequestRewriteMiddleware):
    """After a `shell` search for the person's own phrase found nothing, calls `retrieval`
    with their question, once a turn, when it is offered and has not run this turn."""

    def __init__(self, shell: str, retrieval: str) -> None:
        super().__init__()
        self.shell = shell
        self.retrieval = retrieval

    def answer_without_model(self, request: ModelRequest) -> ModelResponse | None:
        newest = request.messages[-1] if request.messages else None
        if not isinstance(newest, ToolMessage) or newest.name != self.shell \
                or not isinstance(newest.artifact, Mapping) \
                or not any(getattr(t, "name", None) == self.retrieval for t in request.tools):
            return None
        turn = turn_messages(request.messages)
        if any(isinstance(m, AIMessage) and any(c["name"] == self.retrieval
                                                for c in m.tool_calls) for m in turn):
            return None
        question = question_text(request)
        # The shell names a lone grep's pattern that matched nothing, even respelled.
        pattern = newest.artifact.get("unmatched_pattern")
        if not isinstance(pattern, str) or not persons_phrase(pattern, question):
            return None
        return calling(self.retrieval, {"query": question})
