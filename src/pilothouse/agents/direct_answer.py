"""The supervisor's typed route "answer it yourself", beside its `ask_<agent>` tools.

Measured: asked "In one short sentence: what is Argo CD?" in a code checkout with nothing
configured (so only the DevOps agent ran), the local supervisor asked the DevOps agent, which
set about indexing the checkout; the turn ended "The model did not answer within 600 s". Free
to write an answer or to call a tool, a small model calls the one tool it has.

So answering directly is one more entry of the supervisor's menu, chosen like an agent: on a
turn's first call the model must choose (an agent, or `answer_directly`), and the direct answer
carries its text and, from a closed set, the domain of an agent not configured here that the
question is about ("Argo CD"). Code passes the answer on as it is, with the setting that adds
that agent (it would give live facts), and makes no second model call. Nothing here reads the
question's words: which agents are configured is the topology's, and the choice is the model's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from pilothouse.context.rewrite import RequestRewriteMiddleware
from pilothouse.models.tokens import message_text, turn_messages

DIRECT = "answer_directly"
#: The `about` value of a question about no domain of an agent that is not configured here.
NO_DOMAIN = "none"
#: The longest direct answer: two short sentences. Every character is written by the model at
#: a few tokens a second on two busy cores (measured: 108 tokens, 94 s of a 141 s answer).
MAX_ANSWER_CHARS = 240

#: An agent not configured here: what it covers (its description) and the setting that adds it.
Unconfigured = Mapping[str, tuple[str, str]]


def domain_of(description: str) -> str:
    """The domain an agent's description starts with ("Argo CD: applications..." -> Argo CD)."""
    return description.split(":", 1)[0].strip()


def whole_sentences(answer: str) -> str:
    """`answer` without the sentence its length bound cut short, if one was."""
    text = answer.strip()
    if len(answer) < MAX_ANSWER_CHARS or text.endswith((".", "!", "?")):
        return text
    end = max(text.rfind(f"{mark} ") for mark in ".!?")
    return text[:end + 1] if end > 0 else text


def configuration_hint(agent: str, unconfigured: Unconfigured) -> str:
    """The line that says which agent would give live facts, and how to add it."""
    description, how = unconfigured[agent]
    return f"Live facts from your own {domain_of(description)} would come from the {agent} " \
           f"agent, which is not configured here: {how}"


def direct_answer_tool(unconfigured: Unconfigured) -> BaseTool:
    """`answer_directly(about, answer)`: the answer, with the configuration hint of the agent
    whose domain (`about`, named as the question names it: "Argo CD") is not configured."""
    agents = {domain_of(description): name for name, (description, _) in unconfigured.items()}
    properties: dict[str, Any] = {}
    if agents:
        # First: choosing from a short menu, in the question's own words, is what a small
        # model does well; the answer is then written knowing what it is about.
        properties["about"] = {
            "type": "string", "enum": [*agents, NO_DOMAIN],
            "description": "Which of these the question is about; their agents are not "
                           f"configured here. '{NO_DOMAIN}' for anything else."}
    # Bounded: a small model writing free text inside a JSON string can run on to its token
    # limit (measured: one such answer took the whole 600 s of a model call on two cores).
    properties["answer"] = {
        "type": "string", "maxLength": MAX_ANSWER_CHARS,
        "description": "Your answer to the person, in one or two short sentences, from what "
                       "you know or what this conversation said."}
    schema = {"type": "object", "properties": properties, "required": list(properties)}

    async def answer(answer: str, about: str = NO_DOMAIN) -> str:
        text = whole_sentences(answer)
        if about in agents:
            return f"{text}\n\n{configuration_hint(agents[about], unconfigured)}"
        return text

    domains = ", ".join(f"{domain} (the {name} agent is not configured here)"
                        for domain, name in agents.items())
    return StructuredTool.from_function(
        coroutine=answer, name=DIRECT, args_schema=schema,
        description="Answer the question yourself when none of the agents you can ask covers "
                    "it: general knowledge (what a tool is, how something works), this "
                    "conversation" + (f", or a question about {domains}" if domains else "")
                    + ". Never ask an agent about another agent's domain.")


def _direct_result(request: ModelRequest) -> str | None:
    """The direct answer this turn's only call returned, or None."""
    turn = turn_messages(request.messages)
    if len(turn) != 2:
        return None
    call, result = turn
    if not (isinstance(call, AIMessage) and [c["name"] for c in call.tool_calls] == [DIRECT]
            and isinstance(result, ToolMessage) and result.status == "success"):
        return None
    return message_text(result).strip() or None


class DirectAnswerMiddleware(RequestRewriteMiddleware):
    """Puts `answer_directly` on the supervisor's menu for a turn's first call, where the
    model must choose (an agent or the direct answer); takes it away once an agent was asked;
    and passes the direct answer on without another model call."""

    def __init__(self, unconfigured: Unconfigured) -> None:
        super().__init__()
        self.tools = [direct_answer_tool(unconfigured)]

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        direct = [t for t in request.tools if getattr(t, "name", None) == DIRECT]
        if not direct:
            return request
        agents = [t for t in request.tools if getattr(t, "name", None) != DIRECT]
        if turn_messages(request.messages):  # an agent answered: the model writes the lead
            return request.override(tools=agents)
        # First on the menu, where the prompt's first lines put it too (measured on the local
        # model with only the DevOps agent configured: "what are GitHub Actions?", "what is
        # GitOps?" went to the DevOps agent until the prompt said what the supervisor
        # answers itself; with it, 3 of 3 general questions were answered directly, and a
        # question about this codebase still went to the DevOps agent).
        choice = "required" if request.tool_choice in (None, "auto") else request.tool_choice
        return request.override(tools=[*direct, *agents], tool_choice=choice)

    def answer_without_model(self, request: ModelRequest) -> ModelResponse | None:
        answer = _direct_result(request)
        return ModelResponse(result=[AIMessage(content=answer)]) if answer else None
