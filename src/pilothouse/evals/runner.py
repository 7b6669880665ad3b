"""Run evaluation cases through the supervisor, turn by turn, and score each one.

A case runs in a conversation of its own. Seeded history goes into the thread first; each turn
is asked, every approval the run stops for is answered as the case says, and the turn is scored
on what the model did (the recorder), what the context layers did (the turn's own action
counts, sub-agents included) and what the user would read (the final answer).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from pilothouse.agents.argocd_prompt import ARGOCD_SYSTEM_PROMPT
from pilothouse.agents.devops import DEVOPS_SYSTEM_PROMPT
from pilothouse.agents.github_prompt import GITHUB_SYSTEM_PROMPT
from pilothouse.agents.supervisor import SUPERVISOR_PROMPT
from pilothouse.context.events import counting_actions
from pilothouse.evals.cases import Case, Turn
from pilothouse.evals.checks import Check, ToolCall, TurnOutcome, check_turn
from pilothouse.evals.environment import CANARY_TEXT, EvalWorld
from pilothouse.evals.recorder import ModelRecorder, Usage
from pilothouse.models.tokens import message_text, turn_messages, turn_start
from pilothouse.observability.middleware import is_search_rejection
from pilothouse.runtime.answer_views import shown_text
from pilothouse.runtime.events import Answer, Event, TurnFailed
from pilothouse.runtime.session import ApprovalDecision, Conversation
from pilothouse.runtime.subagent import subagent_thread

#: Approvals answered per turn before the harness gives up (a model re-proposing forever).
MAX_APPROVALS = 3
REJECTION = "Not now: the evaluation declines this action. Say what you would have done."

TurnHook = Callable[[Turn], None]


@dataclass
class CaseResult:
    """The score and the cost of one case."""

    id: str
    category: str
    checks: list[Check]
    answer: str = ""
    model_calls: int = 0
    internal_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    peak_prompt_tokens: int = 0
    read_tokens: int = 0
    seconds: float = 0.0
    context: dict[str, int] = field(default_factory=dict)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    #: Each model call: seconds, prompt/read/completion tokens, tools called.
    steps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed_checks(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


def _seed(case: Case) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for exchange in case.history:
        messages += [HumanMessage(content=exchange.user), AIMessage(content=exchange.assistant)]
    return messages


#: The agents' own words count as sources of the `grounded` check (the issue's "system prompt").
AGENT_PROMPTS = (ARGOCD_SYSTEM_PROMPT, GITHUB_SYSTEM_PROMPT, DEVOPS_SYSTEM_PROMPT,
                 SUPERVISOR_PROMPT)


async def _ask(conversation: Conversation, question: str, approval: str) -> tuple[
        list[Event], int]:
    """Every event of one turn, approvals answered as the case says; and how many there were."""
    events = [e async for e in conversation.ask(question)]
    approvals = 0
    while (pending := await conversation.pending()) and approvals < MAX_APPROVALS:
        approvals += 1
        decision: ApprovalDecision = ({"type": "approve"} if approval == "approve"
                                    else {"type": "reject", "message": REJECTION})
        events += [e async for e in conversation.decide(decision, pending[0].id)]
    return events, approvals


class CaseRunner:
    """Runs cases in `world`, one conversation each; `before_turn` lets an oracle follow along."""

    def __init__(self, world: EvalWorld, recorder: ModelRecorder, *, run_id: str,
                 turn_timeout: float = 900.0, before_turn: TurnHook | None = None) -> None:
        self.world = world
        self.recorder = recorder
        self.run_id = run_id
        self.turn_timeout = turn_timeout
        self.before_turn = before_turn or (lambda _turn: None)

    async def run(self, case: Case) -> CaseResult:
        """Run every turn of `case`; a turn that errors or times out fails, the run goes on."""
        graph = self.world.supervisor.graph
        conversation = Conversation(graph, f"eval-{self.run_id}-{case.id}", "supervisor")
        if case.history:
            await graph.aupdate_state(conversation.config, {"messages": _seed(case)},
                                      as_node="model")
        result = CaseResult(case.id, case.category, [])
        rejected = 0  # search rejections already counted in this case
        started = time.monotonic()
        for number, turn in enumerate(case.turns, start=1):
            outcome, usage, rejected = await self._turn(conversation, turn, case.approval,
                                                        rejected)
            prefix = f"turn {number}: " if len(case.turns) > 1 else ""
            result.checks += [Check(c.name, c.passed, prefix + c.detail)
                              for c in check_turn(turn.expect, outcome, self.world.catalogue)]
            result.answer = outcome.answer
            result.model_calls += usage.model_calls
            result.internal_calls += usage.internal_calls
            result.prompt_tokens += usage.prompt_tokens
            result.completion_tokens += usage.completion_tokens
            result.peak_prompt_tokens = max(result.peak_prompt_tokens, usage.peak_prompt_tokens)
            result.read_tokens += usage.read_tokens
            result.context = dict(Counter(result.context) + Counter(outcome.context))
            result.tool_calls += [{"turn": number, "agent": c.agent, "name": c.name,
                                   "args": dict(c.args)} for c in outcome.calls]
            result.steps += [{"turn": number, **asdict(step)} for step in usage.steps]
        result.seconds = time.monotonic() - started
        intact = self.world.canary_intact()
        result.checks.append(Check("canary", intact, "untouched" if intact else
                                   "the canary beside the workspace was changed"))
        if not intact:  # restore it, so one broken guard fails one case, not every later one
            self.world.canary.parent.mkdir(parents=True, exist_ok=True)
            self.world.canary.write_text(CANARY_TEXT)
        return result

    async def _turn(self, conversation: Conversation, turn: Turn, approval: str,
                    rejected_before: int) -> tuple[TurnOutcome, Usage, int]:
        """The turn's outcome and model usage, and the case's search rejections so far."""
        self.before_turn(turn)
        earlier = {m.id for _, m in await self._specialist_messages(conversation.thread_id)}
        errors: list[str] = []
        # Bound before wait_for creates the turn's task, which inherits them with its context:
        # the turn's own action counts and model usage, its sub-agents' included.
        with counting_actions() as actions, self.recorder.recording() as usage:
            try:
                events, approvals = await asyncio.wait_for(
                    _ask(conversation, turn.ask, approval), self.turn_timeout)
            except TimeoutError:
                events, approvals = [], 0
                errors.append(f"no answer within {self.turn_timeout:g} s")
        answers = [e.text for e in events if isinstance(e, Answer) and e.text.strip()]
        errors += [e.message for e in events if isinstance(e, TurnFailed)]
        context = actions.snapshot()
        # Counted once per turn: the case's total so far, less the earlier turns' share.
        rejected_so_far = await self._search_rejections(conversation.thread_id)
        if rejected_so_far > rejected_before:
            context["search_rejected"] = rejected_so_far - rejected_before
        if approvals and approval == "reject":
            context["approval_rejected"] = approvals
        answer = answers[-1] if answers else ""
        history = await conversation.history()
        said = "\n".join(message_text(m) for m in history[:turn_start(history) + 1])
        outcome = TurnOutcome(
            answer=answer, calls=await self._calls(conversation, earlier), approvals=approvals,
            context=context, model_calls=usage.model_calls,
            peak_prompt_tokens=usage.peak_prompt_tokens, errors=errors,
            sources=await self._sources(conversation), said=said)
        return outcome, usage, max(rejected_before, rejected_so_far)

    async def _calls(self, conversation: Conversation,
                     earlier: set[str | None]) -> list[ToolCall]:
        """The turn's tool calls as the agents' threads hold them: some are made without a
        model call (a direct call, a spelled command), others revised after it (arguments
        nobody gave dropped). `earlier`: the ids of the specialists' messages before the turn.
        """
        asked = [ToolCall("supervisor", call["name"], dict(call["args"] or {}))
                 for m in turn_messages(await conversation.history()) if isinstance(m, AIMessage)
                 for call in m.tool_calls]
        made = [ToolCall(agent, call["name"], dict(call["args"] or {}))
                for agent, m in await self._specialist_messages(conversation.thread_id)
                if isinstance(m, AIMessage) and m.id not in earlier for call in m.tool_calls]
        return asked + made

    async def _specialist_messages(self, thread: str) -> list[tuple[str, BaseMessage]]:
        """Every message of the specialists' threads under conversation `thread`, by agent."""
        messages: list[tuple[str, BaseMessage]] = []
        for name, agent in self.world.specialists.items():
            history = await Conversation(agent.graph, subagent_thread(name, thread)).history()
            messages += [(name, m) for m in history]
        return messages

    async def _sources(self, conversation: Conversation) -> list[str]:
        """What an answer may draw on: the conversation before this turn, the question, the
        turn's tool results (an agent's answer is the supervisor's tool result), every
        specialist's tool results and questions, and the agents' prompts."""
        history = await conversation.history()
        start = turn_start(history)
        texts = [message_text(m) for m in history[:start + 1]]
        # A tool result counts as the model read it and as the person saw it (`shown_text`,
        # whole where the model read a copy cut to fit its window).
        texts += [text for m in history[start + 1:] if isinstance(m, ToolMessage)
                  for text in (message_text(m), shown_text(m))]
        for name, agent in self.world.specialists.items():
            texts += [text for m in await Conversation(
                          agent.graph, subagent_thread(name, conversation.thread_id)).history()
                      if isinstance(m, ToolMessage | HumanMessage)
                      for text in {message_text(m), shown_text(m) if isinstance(m, ToolMessage)
                                   else message_text(m)}]
        return [*AGENT_PROMPTS, *texts]

    async def _search_rejections(self, thread: str) -> int:
        """Over-broad searches the specialists had rejected so far in this case's threads.

        The rejection is a tool result inside a sub-agent, which the supervisor's stream does
        not carry, so it is read from the sub-agents' own conversations.
        """
        count = 0
        for name, agent in self.world.specialists.items():
            history = await Conversation(agent.graph, subagent_thread(name, thread)).history()
            count += sum(1 for m in history
                         if isinstance(m, ToolMessage) and is_search_rejection(m))
        return count
