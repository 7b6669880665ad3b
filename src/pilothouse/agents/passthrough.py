"""One agent asked, one good answer: the supervisor passes it on instead of rewriting it.

Measured with `pilothouse eval` on the local model: after the Argo CD agent had answered with
a table, the supervisor's own answer was "The argocd agent is unavailable." (a line of its
prompt), and when it did rewrite, it dropped the numbers. Combining is the supervisor's job
when several agents answered; with one, its answer is the specialist's answer, and a model
call re-reading it costs tokens and latency and can only lose facts. An error, an approval
still pending, several agents, or an agent the question names still to ask go to the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, TypedDict

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage

from pilothouse.context.rewrite import RequestRewriteMiddleware
from pilothouse.models.tokens import turn_messages
from pilothouse.runtime.answer_views import shown_text
from pilothouse.runtime.subagent import ReplyState

#: How the supervisor's tool tells the model a sub-agent needs one more approval.
ANOTHER_APPROVAL = "needs another approval"


class AskResult(TypedDict):
    """The artifact of an `ask_<agent>` result: which agent replied, and in what state."""

    agent: str
    state: ReplyState
    #: The whole answer, when the model was given it cut to the answer budget.
    shown: NotRequired[str]


def awaits_approval(result: ToolMessage) -> bool:
    """Whether an `ask_<agent>` result says the agent still waits for an approval."""
    artifact = result.artifact
    return isinstance(artifact, Mapping) and artifact.get("state") == "input_required"


def single_answer(request: ModelRequest) -> str | None:
    """The one sub-agent answer this turn is waiting to relay, or None.

    None too when the request must call a tool: the routing hint still has agents to ask.
    """
    if request.tool_choice in ("required", "any"):
        return None
    turn = turn_messages(request.messages)
    if len(turn) != 2:
        return None
    call, result = turn
    if not (isinstance(call, AIMessage) and len(call.tool_calls) == 1
            and isinstance(result, ToolMessage) and result.status == "success"
            and result.tool_call_id == call.tool_calls[0]["id"]):
        return None
    text = shown_text(result)
    return text if text and not awaits_approval(result) else None


class SingleAnswerMiddleware(RequestRewriteMiddleware):
    """Answers with the only sub-agent's answer of the turn, without a model call."""

    def answer_without_model(self, request: ModelRequest) -> ModelResponse | None:
        answer = single_answer(request)
        return ModelResponse(result=[AIMessage(content=answer)]) if answer else None
