"""The supervisor: routes a question to specialist agents and combines their answers.

Its tools are the sub-agents, one `ask_<name>` each, over the `SubAgent` interface (in process
or A2A). Each answer is held to a token budget measured with the supervisor's own counter, so
one agent cannot flood its context; an agent that is down or slow comes back as an error result
naming it, and the supervisor answers the rest. An approval a sub-agent asks for becomes the
supervisor's own interrupt, so the person answers it where they asked. This module says what
the supervisor is (tools, prompt, routing); `AgentFactory` builds its graph with every layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException
from langgraph.types import interrupt
from pydantic import BaseModel, Field

from pilothouse.agents.argocd import GROUNDED_FILTERS as ARGOCD_FILTERS
from pilothouse.agents.direct_answer import (
    DIRECT,
    DirectAnswerMiddleware,
    Unconfigured,
    domain_of,
)
from pilothouse.agents.github import GROUNDED_FILTERS as GITHUB_FILTERS
from pilothouse.agents.inventory import Inventory
from pilothouse.agents.passthrough import ANOTHER_APPROVAL, AskResult, SingleAnswerMiddleware
from pilothouse.agents.recall import RecallMiddleware
from pilothouse.agents.routing import (
    DOMAIN_WORDS,
    DomainRouter,
    RoutingHintMiddleware,
)
from pilothouse.agents.toolkit import Toolkit
from pilothouse.agents.workspace_names import workspace_packages
from pilothouse.context.tool_output import SHOWN_KEY
from pilothouse.models.registry import ModelSetup
from pilothouse.models.tokens import TokenCounter
from pilothouse.runtime.answer_budget import fit_shown, fit_to_budget
from pilothouse.runtime.subagent import (
    ExplainsApprovals,
    SubAgent,
    SubAgentReply,
    relaying_activity,
)

SUPERVISOR_PROMPT = """\
You are the supervisor of Pilothouse, a team of agents for platform engineers. You have no \
platform tools of your own: for live facts you ask the specialist agents below and combine \
what they say; what you know yourself (general knowledge, this conversation) you answer with \
{direct}.

{agents}

Routing:
- Ask the agent whose domain the question touches. When a question spans several (apps AND \
pull requests, a failing deploy AND its CI run), call every agent it needs in the same turn, \
each with a complete, self-contained question (they do not see this conversation).
- Pass names, repositories and filters along verbatim; ask for what the user needs, not more.
- A question none of them covers (general knowledge, this conversation, or the domain of an \
agent not configured here): {direct}, never an agent of another domain.

Answering: the user sees each agent's answer as it is, below your words. Write one or two \
sentences that connect them (never retype their tables or counts). When an agent failed, say \
which part of the answer is missing and why. Never invent data no agent returned.
"""


class AskInput(BaseModel):
    """Arguments of an `ask_<agent>` tool."""

    question: str = Field(description="A complete question for the agent, with every name, "
                                      "repository and filter it needs.")
    # Injected, not the model's: the sub-agent's relayed activity and approvals name this call.
    tool_call_id: Annotated[str, InjectedToolCallId]


def approval_request(agent: SubAgent, question: str, request: str, *,
                     tool_call_id: str | None = None,
                     calls: Sequence[Any] = ()) -> dict[str, Any]:
    """The supervisor's interrupt for an approval a sub-agent asked for.

    The shape of LangChain's per-call approval gate (`tool_call_id` is the `ask_<agent>`
    call), so every interface can render it as it renders the agents' own approvals; `agent`
    and `subagent_calls` (the sub-agent's own pending interrupt values: the real call's name,
    args and description) let it show what would really run instead of the question.
    """
    value: dict[str, Any] = {
        "type": "tool_approval", "name": f"ask_{agent.name}", "args": {"question": question},
        "description": f"The {agent.name} agent asks: {request}",
        "allowed_decisions": ["approve", "reject"], "agent": agent.name,
        "subagent_calls": [dict(c) if isinstance(c, dict) else c for c in calls]}
    if tool_call_id is not None:
        value["tool_call_id"] = tool_call_id
    return value


def subagent_tool(agent: SubAgent, *, counter: TokenCounter, budget_tokens: int,
                  not_for: str = "") -> BaseTool:
    """`ask_<name>`: one question to `agent` in this conversation's thread, answer in budget.

    `not_for` says what the agent does not cover (it joins the tool's description).
    """

    async def ask(question: str, tool_call_id: str,
                  config: RunnableConfig) -> tuple[str, AskResult]:
        with relaying_activity(agent.name, tool_call_id):
            return await _ask(question, tool_call_id, config)

    async def _ask(question: str, tool_call_id: str,
                   config: RunnableConfig) -> tuple[str, AskResult]:
        thread = str((config.get("configurable") or {}).get("thread_id", "default"))
        # One approval per call: after a resume LangGraph runs the tool again from the top,
        # and the sub-agent is then the one that knows an approval is pending.
        request = await agent.waiting(thread)
        calls: Sequence[Any] = ()
        if request is None:
            reply = await agent.ask(question, thread, budget_tokens=budget_tokens)
            if reply.state != "input_required":
                return _finish(reply, counter, budget_tokens)
            request, calls = reply.text, reply.requests
        elif isinstance(agent, ExplainsApprovals):
            calls = await agent.pending_requests(thread)
        decision = interrupt(approval_request(agent, question, request,
                                              tool_call_id=tool_call_id, calls=calls))
        reply = await agent.decide(thread, decision)
        if reply.state == "input_required":
            # The text is for the model; the artifact tells the layers (no passthrough).
            return (f"The {agent.name} agent {ANOTHER_APPROVAL}: {reply.text} Call "
                    f"ask_{agent.name} again to put it to the user.",
                    AskResult(agent=agent.name, state=reply.state))
        return _finish(reply, counter, budget_tokens)

    return StructuredTool.from_function(
        coroutine=ask, name=f"ask_{agent.name}", args_schema=AskInput,
        description=f"Ask the {agent.name} agent. {agent.description}"
                    + (f" Not for {not_for}." if not_for else ""),
        handle_tool_error=True, response_format="content_and_artifact",
    )


def _finish(reply: SubAgentReply, counter: TokenCounter,
            budget_tokens: int) -> tuple[str, AskResult]:
    if reply.state == "failed":
        raise ToolException(reply.text)  # an error result the model must report, not a crash
    # The budget protects what the supervisor's model reads; the person gets the whole answer.
    fitted = fit_to_budget(reply.text, budget_tokens, counter, agent=reply.agent)
    result = AskResult(agent=reply.agent, state=reply.state)
    if fitted != reply.text:
        result[SHOWN_KEY] = fit_shown(reply.text, reply.agent)
    return fitted, result


def supervisor_prompt(agents: Sequence[SubAgent], unconfigured: Unconfigured | None = None) -> str:
    """The supervisor's prompt: the agents it can ask, and those not configured here."""
    lines = "\n".join(f"- ask_{a.name}: {a.description}" for a in agents)
    missing = "\n".join(f"- {name}: {description}" for name, (description, _)
                         in (unconfigured or {}).items())
    if missing:
        lines = (lines or "(no agents are configured)") + \
            f"\n\nNot configured here (answer about them with {DIRECT}):\n{missing}"
    return SUPERVISOR_PROMPT.format(agents=lines or "(no agents are configured)", direct=DIRECT)


SUPERVISOR = "supervisor"
#: The agent of the local workspace: the one a question naming nothing else is about.
WORKSPACE_AGENT = "devops"
SUPERVISOR_DESCRIPTION = ("Pilothouse supervisor: routes platform questions to the Argo CD, "
                          "GitHub and DevOps agents and combines their answers.")


def supervisor_toolkit(
    model: ModelSetup,
    agents: Sequence[SubAgent],
    *,
    answer_budget_tokens: int | None = None,
    subagent_timeout_seconds: float = 180.0,
    workspace: Path | None = None,
    unconfigured: Unconfigured | None = None,
    inventory: Inventory | None = None,
) -> Toolkit:
    """The supervisor's equipment over `agents`: one `ask_<agent>` tool each, routing, and
    the direct answer (`direct_answer`) for what no agent here covers.

    The answer budget defaults to a tenth of the window per agent: three agents answering at
    once still leave most of the window for the conversation. The `workspace`'s top-level
    packages are DevOps domain words, and the names a question mentions are resolved against
    `inventory` (`agents.request_frame`). `unconfigured` are the specialists not configured here,
    each with its description and the setting that adds it.
    """
    budget = answer_budget_tokens or max(256, model.window.tokens // 10)
    unconfigured = {n: v for n, v in (unconfigured or {}).items()
                    if n not in {a.name for a in agents}}
    # Each agent's menu entry says what it is not for: asked "what are GitHub Actions?" with
    # only the DevOps agent configured, the local model asked it (measured).
    missing = " or ".join(domain_of(description) for description, _ in unconfigured.values())
    not_for = "general knowledge" + (f", nor questions about {missing} (not configured "
                                     f"here: {DIRECT})" if missing else f" ({DIRECT})")
    tools = [subagent_tool(a, counter=model.counter, budget_tokens=budget, not_for=not_for)
             for a in agents]
    # A question that names a domain is asked of its agents: left free, the local model
    # answered "the argocd agent is unavailable" without asking (pilothouse eval). One that
    # names none ("what was the ticket I gave you?") may be answered from the conversation.
    domains = {a.name: DOMAIN_WORDS.get(a.name, ()) for a in agents}
    if workspace is not None and WORKSPACE_AGENT in domains:
        taken = [w for words in domains.values() for w in words]
        domains[WORKSPACE_AGENT] = (*domains[WORKSPACE_AGENT],
                                    *workspace_packages(workspace, taken))
    router = DomainRouter(domains, {a.name: a.description for a in agents})
    # The words of the statuses Argo CD and GitHub filter by (their tools' own tables): a
    # question about everything's state is theirs even when it names nothing.
    status_words = [phrase for table in (ARGOCD_FILTERS["health_status"],
                                         ARGOCD_FILTERS["sync_status"], GITHUB_FILTERS["status"])
                    for phrases in table.values() for phrase in phrases]
    routing = [RoutingHintMiddleware(router, inventory, workspace_agent=WORKSPACE_AGENT,
                                     status_words=status_words), SingleAnswerMiddleware(),
               RecallMiddleware(inventory)] if tools else []
    return Toolkit(
        name=SUPERVISOR, prompt=supervisor_prompt(agents, unconfigured), tools=list(tools),
        extra_middleware=[*routing, DirectAnswerMiddleware(unconfigured)],
        # The sub-agent's own timeout must fire first: its message names the agent.
        per_tool_timeouts={t.name: subagent_timeout_seconds + 30 for t in tools})
