"""Which tool a DevOps turn's first call may use, decided from the person's words.

A command spelled in backticks is a command to run, and a request of two or more changing
steps is a plan (`agents.shell_intent` states both). Code offers that tool alone on the turn's
first call (`tool_choice="required"`); the model still writes the arguments, and later calls of
the turn see every tool again. A question no hint matches keeps the whole menu.

The Argo CD and GitHub agents have no hints: their tables of words per tool were fitted to the
development cases (measured: 2 of 12 dev cases, at most 1 of 12 on the other world). Their tools'
descriptions say what each answers, and a question naming one application is offered the
one-application tools (`agents.named_scope`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain.agents.middleware import ModelRequest

from pilothouse.config import Settings
from pilothouse.context.rewrite import RequestRewriteMiddleware, first_call, question_text


@dataclass(frozen=True)
class ToolHint:
    """Requests that `matches` accepts are offered `tools` alone on their first call."""

    tools: tuple[str, ...]
    matches: Callable[[str], bool]


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
    """The hint layers of an agent (`spelled`: those that act on a spelled request first); with
    the `tool_hints` layer off (the ablation run), only the spelled ones: a command the person
    spelled out is run as spelled in any world, while the hints read words."""
    if not settings.layer_enabled("tool_hints"):
        return [*spelled]
    return [*spelled, ToolHintMiddleware(hints)]
