"""`pilothouse demo`: the main job on embedded defaults, showing tool calls as they happen.

Two scenarios. `overview` asks independent questions about the Argo CD sandbox's fleet.
`rollback` is one conversation with the Argo CD agent about a Degraded application the fleet
generator says was just deployed: what changed, then "roll it back". The rollback stops at the
approval gate, which shows the plan, the diff and the evidence fingerprint Pilothouse computed;
a person answers it at a terminal, `--approve`/`--reject` answer it in a script, and without
either (no terminal, CI) the demo rejects. The deploy history before and after is the proof:
a rejected rollback leaves it as it was, an approved one adds the rollback.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from rich.console import Console
from rich.rule import Rule

from pilothouse.agents.factory import open_configured_agent
from pilothouse.config import Settings
from pilothouse.interfaces.cli_conversation import parse_verdict
from pilothouse.interfaces.render import EventPrinter, progress_bar
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import TurnFailed
from pilothouse.runtime.handle import AgentHandle
from pilothouse.runtime.session import ApprovalDecision, Conversation
from pilothouse.tools.mcp_connect import call_for_payload

Scenario = Literal["overview", "rollback"]
Verdict = Literal["approve", "reject"]
SCENARIOS: tuple[Scenario, ...] = ("overview", "rollback")
DEMO_APPS = 819

GENERAL_QUESTIONS = [
    "In two sentences: what is GitOps, and how does Argo CD apply it?",
    "Which kubectl command shows why a pod is in CrashLoopBackOff?",
]
ARGOCD_QUESTIONS = [
    "Show me production applications",
    "List all ArgoCD applications",
    "Which apps are degraded?",
]
WHAT_CHANGED = "What changed before {app} went Degraded?"
ROLL_BACK = "Roll {app} back to its previous deploy."
DEMO_DECLINED = "The demo declined: not a terminal, and neither --approve nor --reject given."


def rollback_candidate(apps: int = DEMO_APPS) -> str:
    """The Degraded application of the generated fleet whose newest deploy is the most recent.

    Its newest deploy carries the breaking change, so rolling back to the one before is the
    right move, and the what-changed answer points at it.
    """
    from pilothouse.sandbox.argocd import deploys
    from pilothouse.sandbox.argocd.fleet import Fleet, FleetSpec

    fleet = Fleet(FleetSpec(apps=apps))
    newest: tuple[int, str] | None = None
    for index in range(len(fleet)):
        record = fleet.app(index)
        if record.health != "Degraded":
            continue
        history = deploys.deploys(record)
        if len(history) >= 2 and history[-1].broken and \
                (newest is None or history[-1].deployed_at > newest[0]):
            newest = (history[-1].deployed_at, record.name)
    if newest is None:
        raise LookupError("The generated fleet has no Degraded application with a deploy to "
                          "roll back.")
    return newest[1]


@contextmanager
def _argocd_sandbox(settings: Settings, err: Console, *,
                    writable: bool = False) -> Iterator[Settings]:
    """Settings pointing at a freshly started Argo CD sandbox, unless one is configured.

    `writable` (the rollback scenario) always starts the sandbox: a demo never changes a real
    Argo CD, whatever ARGOCD_URL says.
    """
    if not writable and (settings.argocd_url or
                         importlib.util.find_spec("pilothouse.sandbox.argocd.server") is None):
        yield settings
        return
    from pilothouse.sandbox.argocd.server import running_sandbox

    with running_sandbox(apps=DEMO_APPS) as sandbox:
        err.print(f"[bold]Argo CD sandbox[/] (generated fleet of {DEMO_APPS} apps) at "
                  f"{sandbox.url}")
        yield dataclasses.replace(settings, argocd_url=sandbox.url, argocd_token=sandbox.token,
                                  argocd_username=None, argocd_password=None,
                                  argocd_read_only=not writable)


def _introduce(assistant: AgentHandle, err: Console) -> None:
    err.print(f"Model: [bold]{assistant.model.name}[/] (window "
              f"{assistant.model.window.tokens:,} tokens, counting with "
              f"{assistant.model.counter.source}); agent: {assistant.name}, "
              f"{len(assistant.tools)} tools")


async def run_demo(settings: Settings, questions: list[str], out: Console, err: Console, *,
                   scenario: Scenario = "overview", verdict: Verdict | None = None,
                   interactive: bool = False, model: ModelSetup | None = None) -> int:
    """Run `scenario`; 0 when every answer arrived.

    `verdict` answers the rollback's approval; without it a terminal (`interactive`) asks the
    person and anything else rejects. `model` replaces the configured one (tests).
    """
    if scenario == "rollback":
        return await _run_rollback(settings, out, err, verdict=verdict,
                                   interactive=interactive, model=model)
    printer = EventPrinter(out, err, as_json=False)
    failures = 0
    with _argocd_sandbox(settings, err) as demo_settings, progress_bar(err) as progress:
        async with open_configured_agent(demo_settings, model=model,
                                         progress=progress) as assistant:
            if not questions:
                questions = ARGOCD_QUESTIONS if assistant.tools else GENERAL_QUESTIONS
            _introduce(assistant, err)
            run = uuid.uuid4().hex[:8]
            for number, question in enumerate(questions, start=1):
                err.print(Rule(f"[bold]{question}"))
                # Independent questions, independent conversations: the small local model
                # otherwise copies the previous turn's tool arguments into the next question.
                conversation = Conversation(assistant.graph, f"demo-{run}-{number}",
                                            assistant.name)
                async for event in conversation.ask(question):
                    printer.show(event)
                    failures += isinstance(event, TurnFailed)
    return 1 if failures else 0


async def deploy_history(assistant: AgentHandle, app: str) -> list[str]:
    """The application's deploy history, newest first, through the agent's own tool."""
    tool = next(t for t in assistant.tools if t.name == "get_application_history")
    answer = await call_for_payload(tool, {"name": app, "page_size": 20})
    return [f"#{row.get('id')} {str(row.get('revision'))[:12]} {row.get('deployed_at')}"
            + (" (running)" if row.get("current") else "") for row in answer.get("items", [])]


async def _decision(err: Console, verdict: Verdict | None,
                    interactive: bool) -> ApprovalDecision:
    if verdict == "approve":
        err.print("[bold]Demo:[/] approving (--approve).")
        return {"type": "approve"}
    if verdict == "reject":
        err.print("[bold]Demo:[/] rejecting (--reject).")
        return {"type": "reject", "message": "The user declined."}
    if interactive:
        answer = await asyncio.to_thread(err.input, "Approve? [y = approve / n = reject] ",
                                         markup=False)
        return parse_verdict(answer)
    err.print("[bold]Demo:[/] not a terminal and no --approve/--reject, so the demo rejects; "
              "run `pilothouse demo --scenario rollback --approve` to roll back.")
    return {"type": "reject", "message": DEMO_DECLINED}


async def _run_rollback(settings: Settings, out: Console, err: Console, *,
                        verdict: Verdict | None, interactive: bool,
                        model: ModelSetup | None) -> int:
    """What changed before a Degraded app broke, then its rollback, in one conversation."""
    app = rollback_candidate()
    printer = EventPrinter(out, err, as_json=False)
    failures = 0
    with _argocd_sandbox(settings, err, writable=True) as demo_settings, \
            progress_bar(err) as progress:
        async with open_configured_agent(demo_settings, agent="argocd", model=model,
                                         progress=progress) as assistant:
            _introduce(assistant, err)
            before = await deploy_history(assistant, app)
            err.print(f"[bold]{app}[/] is Degraded; its deploy history has {len(before)} "
                      f"entries, newest {before[0] if before else 'none'}.")
            conversation = Conversation(assistant.graph, f"demo-rollback-{uuid.uuid4().hex[:8]}",
                                        assistant.name)
            for question in (WHAT_CHANGED.format(app=app), ROLL_BACK.format(app=app)):
                err.print(Rule(f"[bold]{question}"))
                events = conversation.ask(question)
                while True:  # the turn, then each approval it waits for, answered
                    async for event in events:
                        printer.show(event)
                        failures += isinstance(event, TurnFailed)
                    pending = await conversation.pending()
                    if not pending:
                        break
                    decision = await _decision(err, verdict, interactive)
                    events = conversation.decide(decision, pending[0].id)
            after = await deploy_history(assistant, app)
    err.print(Rule("[bold]Proof"))
    changed = "unchanged" if after == before else f"{len(before)} -> {len(after)} entries"
    err.print(f"Deploy history of {app}: {changed}; newest now "
              f"{after[0] if after else 'none'}.", markup=False, highlight=False)
    return 1 if failures else 0
