"""What a question that points back carries: the answers it points at, as a note.

An agent sees only the questions it is asked and its own tool calls, never what another agent
answered. A question that says "it" or "that commit" of something another agent showed reaches
it without its referent, and the agent makes one up or asks for the wrong thing. Two such
questions carry the answers they point at, in a note after the question (a note, not the
question: what reads the person's words, such as tool hints or a subject's grounding, must not
take an answer's "#34" for the pull request asked about):

- a part of a compound question, the answers of the agents asked before it this turn
  (measured: a clause asking for the pull requests between an app's recent deploys reached
  the GitHub agent without the deploys Argo CD had just shown; it compared two commits it made
  up);
- a later turn's question, the previous turn's answers of the other agents (measured on dev:
  "pull that commit up on github" after Argo CD showed a deploy reached the GitHub agent as
  "Pull the commit up on GitHub": it searched open issues). The agent that gave an answer keeps
  its own conversation, so it is not told its answer again.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from pilothouse.context.rewrite import ANSWERS_NOTE, TURN_NOTE
from pilothouse.models.tokens import turn_messages, turn_start
from pilothouse.runtime.answer_views import shown_text

#: How much of each earlier agent's answer a question carries.
ANSWER_CHARS = 1_500


def _agent_answers(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """The agents' answers among `messages` that are answers (not errors)."""
    return [m for m in messages if isinstance(m, ToolMessage)
            and (m.name or "").startswith("ask_") and m.status != "error"]


def _with_answers(question: str, answers: Sequence[ToolMessage]) -> str:
    if not answers:
        return question
    return question + TURN_NOTE + ANSWERS_NOTE + "\n\n".join(
        shown_text(m)[:ANSWER_CHARS] for m in answers)


def with_answers_so_far(question: str, messages: Sequence[BaseMessage]) -> str:
    """`question` (a part saying "its") with the answers of the agents asked before it this
    turn."""
    return _with_answers(question, _agent_answers(turn_messages(messages)))


def with_answers_before(question: str, messages: Sequence[BaseMessage], agent: str) -> str:
    """`question` (a later turn's, saying "that") with the previous turn's answers of the
    agents other than `agent`."""
    start = turn_start(messages)
    earlier = messages[:max(start, 0)]
    previous = next((i for i in range(len(earlier) - 1, -1, -1)
                     if isinstance(earlier[i], HumanMessage)), -1)
    if start < 0 or previous < 0:
        return question
    answers = [m for m in _agent_answers(earlier[previous + 1:]) if m.name != f"ask_{agent}"]
    return _with_answers(question, answers)
