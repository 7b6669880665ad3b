"""`pilothouse demo` gets its agent from the factory: with the memory guard, like every door."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable

from rich.console import Console

from pilothouse.config import Settings
from pilothouse.interfaces.demo import run_demo
from pilothouse.sandbox.argocd.server import running_sandbox


async def test_the_demo_agent_refuses_a_question_over_the_memory_budget(
    make_settings: Callable[..., Settings],
) -> None:
    # The guard refuses before any model call, so the model's address is never contacted.
    settings = make_settings(PILOTHOUSE_MODEL="openai-compatible:scripted",
                             OPENAI_BASE_URL="http://127.0.0.1:9/v1", MAX_CONTEXT_TOKENS="16000",
                             PILOTHOUSE_MEMORY_LIMIT="16MiB")
    out, err = io.StringIO(), io.StringIO()
    with running_sandbox(apps=20) as argocd:
        settings = dataclasses.replace(settings, argocd_url=argocd.url, argocd_token=argocd.token)
        failed = await run_demo(settings, ["Which apps are degraded?"],
                                Console(file=out, width=200), Console(file=err, width=200))

    assert failed == 1
    assert "agent: argocd" in err.getvalue()
    assert "near its memory budget" in out.getvalue() + err.getvalue()
