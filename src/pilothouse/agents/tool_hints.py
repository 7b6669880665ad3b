"""Which tool a turn's first call may use, decided from the person's words.

A 1.5B model picks well from a menu of one or two and badly from a dozen near neighbours.
Measured with `pilothouse eval` on the local model: a question for one application's sync and
health came as `list_applications(project=<the app>)`; a question for an app's warning events,
and one for who deployed it, both as `get_application_changes` (the widest tool); a request for
a resource's available actions ran the `restart` action. The words of such requests name their
tool plainly ("events", "logs", "history", "roll back", "diff"), so code reads them and offers
that tool alone on the turn's first call (`tool_choice="required"`); the model still writes
the arguments, and later calls of the turn see every tool again (the result may call for
another). A question no hint matches keeps the whole menu.

Hints are ordered: the first that matches wins ("roll back to the previous deploy" is a
rollback, not a history question, so the rollback hint comes first).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain.agents.middleware import ModelRequest

from pilothouse.agents.question_parts import names_resource
from pilothouse.config import Settings
from pilothouse.context.rewrite import RequestRewriteMiddleware, first_call, question_text


@dataclass(frozen=True)
class ToolHint:
    """Requests that `matches` accepts are offered `tools` alone on their first call."""

    tools: tuple[str, ...]
    matches: Callable[[str], bool]


#: Words of a question about many resources, where a hyphenated name is a project or a team.
MANY = re.compile(r"\b(?:apps|applications|repos|repositories)\b", re.IGNORECASE)


def words(pattern: str, *, named: bool = False) -> Callable[[str], bool]:
    """A matcher of `pattern` (case-insensitive); with `named`, the question must also name
    one resource (a tool about one application needs one), not ask about many."""
    compiled = re.compile(pattern, re.IGNORECASE)
    return lambda question: bool(compiled.search(question)) and (
        not named or (names_resource(question) and not MANY.search(question)))


def hinted_tools(question: str, hints: Sequence[ToolHint]) -> tuple[str, ...]:
    """The tools the first matching hint offers; () when none matches."""
    return next((hint.tools for hint in hints if hint.matches(question)), ())


class ToolHintMiddleware(RequestRewriteMiddleware):
    """Offers a turn's first call only the tools `hints` give its question (when offered)."""

    def __init__(self, hints: Sequence[ToolHint]) -> None:
        super().__init__()
        self.hints = tuple(hints)

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        if not first_call(request):
            return request
        wanted = set(hinted_tools(question_text(request), self.hints))
        offered = [t for t in request.tools if getattr(t, "name", None) in wanted]
        if not offered:
            return request
        return request.override(tools=offered, tool_choice="required")


def tool_hints(settings: Settings, hints: Sequence[ToolHint], *,
               spelled: Sequence[RequestRewriteMiddleware] = ()) -> list[RequestRewriteMiddleware]:
    """The hint layers of an agent (`spelled`: those that act on a spelled request first), or
    none when the `tool_hints` layer is off (the ablation run)."""
    if not settings.layer_enabled("tool_hints"):
        return []
    return [*spelled, ToolHintMiddleware(hints)]
