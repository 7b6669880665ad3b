"""`pilothouse demo`: the main job on embedded defaults, showing tool calls as they happen."""

from __future__ import annotations

import dataclasses
import importlib.util
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.rule import Rule

from pilothouse.agents.factory import open_configured_agent
from pilothouse.config import Settings
from pilothouse.interfaces.render import EventPrinter, progress_bar
from pilothouse.runtime.events import TurnFailed
from pilothouse.runtime.session import Conversation

GENERAL_QUESTIONS = [
    "In two sentences: what is GitOps, and how does Argo CD apply it?",
    "Which kubectl command shows why a pod is in CrashLoopBackOff?",
]
ARGOCD_QUESTIONS = [
    "Show me production applications",
    "List all ArgoCD applications",
    "Which apps are degraded?",
]


@contextmanager
def _argocd_sandbox(settings: Settings, err: Console) -> Iterator[Settings]:
    """Settings pointing at a freshly started Argo CD sandbox, unless one is configured."""
    if settings.argocd_url or importlib.util.find_spec("pilothouse.sandbox.argocd.server") is None:
        yield settings
        return
    from pilothouse.sandbox.argocd.server import running_sandbox

    with running_sandbox(apps=819) as sandbox:
        err.print(f"[bold]Argo CD sandbox[/] (generated fleet of 819 apps) at {sandbox.url}")
        yield dataclasses.replace(settings, argocd_url=sandbox.url, argocd_token=sandbox.token)


async def run_demo(settings: Settings, questions: list[str], out: Console, err: Console) -> int:
    """Ask each demo question in a conversation of its own; 0 when every answer arrived."""
    printer = EventPrinter(out, err, as_json=False)
    failures = 0
    with _argocd_sandbox(settings, err) as demo_settings, progress_bar(err) as progress:
        async with open_configured_agent(demo_settings, progress=progress) as assistant:
            if not questions:
                questions = ARGOCD_QUESTIONS if assistant.tools else GENERAL_QUESTIONS
            err.print(f"Model: [bold]{assistant.model.name}[/] (window "
                      f"{assistant.model.window.tokens:,} tokens, counting with "
                      f"{assistant.model.counter.source}); agent: {assistant.name}, "
                      f"{len(assistant.tools)} tools")
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
