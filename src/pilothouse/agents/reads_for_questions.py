"""A question that only asks to know is answered by reading, not by a command that waits for
a person's approval.

Approval is for what the person asked to have done. A question that asks only to know (one of
its parts is a question, led by a question word, "whats the make target ...", "db fails over
mid deploy - how many tries ...", and none is a request, "restart it", "can you run ...") has
an answer that reading finds: a file, a listing, a search of the code. A command the model
wrote for it that the shell policy would put to the person (`make logs`, a test run) is not
put to them: the model is told once that the command would wait for an approval, and why, and
chooses again. What it chooses then stands, an approval included: the nudge costs one model
call, never the person's say. A command the person wrote is theirs, asked as written.

Measured on held-out dev questions: "whats the make target for tailing the dev logs, and
which kube context does it point at?" became `make logs`, and the turn ended at an approval
prompt for a question whose answer is two lines of the Makefile.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from pilothouse.agents.question_parts import clauses
from pilothouse.agents.shell_approval import SHELL_TOOL
from pilothouse.agents.shell_intent import CHANGE_VERB, STEP_BOUNDARY
from pilothouse.context.rewrite import add_turn_note, final_message, question_text

#: A question, as English asks one: a question word anywhere ("whats", "what's", "tell me
#: which"), or an auxiliary opening a yes-or-no question ("is prod different?"). A closed
#: class of the language, not of any world.
_ASKS = re.compile(
    r"\b(?:who|whom|whose|what|which|where|when|why|how)(?:'?s|'?re|'?d|'?ll)?\b|"
    r"^(?:is|are|was|were|do|does|did|has|have|had)\b", re.IGNORECASE)


def asks_only_to_know(question: str) -> bool:
    """Whether `question` asks something (a part of it is a question) and no part of it
    asks for something to be done (a step that changes something: `shell_intent`)."""
    parts = [p.strip() for clause in clauses(question) for p in STEP_BOUNDARY.split(clause)
             if p.strip()]
    return any(_ASKS.search(p) for p in parts) and not any(CHANGE_VERB.match(p) for p in parts)


class ReadsForQuestionsMiddleware(AgentMiddleware):
    """Gives a question that only asks to know one more model call when the model's command
    for it would wait for a person's approval (`reason_to_ask`: the shell policy's reason,
    None for a command it runs at once or refuses)."""

    def __init__(self, reason_to_ask: Callable[[str], str | None]) -> None:
        super().__init__()
        self.reason_to_ask = reason_to_ask

    def _waiting(self, response: ModelResponse, question: str) -> tuple[str, str] | None:
        """The command of `response` that would wait for approval, with the policy's reason;
        None when there is none, or when the person wrote it."""
        final = final_message(response)
        for call in final.tool_calls if final is not None else []:
            command = call["args"].get("command")
            if call["name"] != SHELL_TOOL or not isinstance(command, str) \
                    or command.strip() in question:
                continue
            if (reason := self.reason_to_ask(command)) is not None:
                return command, reason
        return None

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        response = await handler(request)
        question = question_text(request)
        waiting = self._waiting(response, question)
        if waiting is None or not asks_only_to_know(question):
            return response
        command, reason = waiting
        return await handler(add_turn_note(
            request, f"`{command}` would wait for the person's approval ({reason}), and the "
                     "question only asks to know: find the answer by reading (a file, a "
                     "listing, a search of the code), with nothing that needs approval."))
