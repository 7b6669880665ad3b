"""Soak: 200 questions through the REST API against the Argo CD sandbox, memory stays flat.

The agent is the real Argo CD agent (its MCP server as a child process, the sandbox over HTTP)
on a scripted model and real SQLite; questions go over HTTP to uvicorn with SSE answers. Memory
is this process's resident size after a warm-up versus after all 200 questions. Keys are set,
as in production: every question is authenticated, and the conversations are the soak
identity's alone.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable
from functools import partial
from pathlib import Path

import httpx
from fastapi import FastAPI
from interfaces_support import kinds, new_conversation, on_socket, parse_sse
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from pilothouse.agents.factory import open_configured_agent
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.observability.limits import resident_bytes
from pilothouse.sandbox.argocd.server import running_sandbox
from pilothouse.testing.scripted_model import tool_call

QUESTIONS = 200
WARM_UP = 20
CONVERSATIONS = 10
SOAK_KEY, OTHER_KEY = "soak-key-1f5b9d3a7c0e4f8b2d6a1c9e", "other-key-6c0a4e8b2f5d9a3c7e1b4f"


def step(messages: list[BaseMessage]) -> object:
    last = messages[-1]
    if isinstance(last, HumanMessage):
        page = int(str(last.content).rsplit(" ", 1)[-1])
        return tool_call("list_applications", page=page, page_size=20)
    assert isinstance(last, ToolMessage)
    pagination = last.artifact["pagination"]  # the structured result (the text is its view)
    return f"PAGE {pagination['page']} of {pagination['total_pages']}."


async def test_two_hundred_questions_keep_memory_flat_and_never_fail(
    tmp_path: Path, make_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup], make_app: Callable[..., FastAPI],
) -> None:
    with running_sandbox(apps=819) as sandbox:
        settings = dataclasses.replace(make_settings(MAX_CONTEXT_TOKENS="16000"),
                                       argocd_url=sandbox.url, argocd_token=sandbox.token)
        setup = scripted_setup([], default=step, window=16_000, settings=settings)

        open_agent = partial(open_configured_agent, settings, agent="argocd", model=setup)
        app = make_app(open_agent, api_keys=[f"soak={SOAK_KEY}", f"other={OTHER_KEY}"])
        answers: list[str] = []
        baseline = 0
        with on_socket(app) as url:
            async with httpx.AsyncClient(base_url=url, timeout=60,
                                         headers={"Authorization": f"Bearer {SOAK_KEY}"}) as client:
                threads = [await new_conversation(client) for _ in range(CONVERSATIONS)]
                for number in range(1, QUESTIONS + 1):
                    thread = threads[number % CONVERSATIONS]
                    page = 1 + number % 41
                    response = await client.post(f"/conversations/{thread}/ask",
                                                 json={"question": f"Show page {page}"})
                    events = parse_sse(response.text)
                    assert response.status_code == 200 and "error" not in kinds(events), events
                    answers.extend(e["text"] for e in events if e["kind"] == "answer")
                    # The scripted model records every request it saw; that is the test's
                    # memory, not the server's.
                    setup.chat_model.script.requests.clear()  # type: ignore[attr-defined]
                    if number == WARM_UP:
                        gc.collect()
                        baseline = resident_bytes()
                listed = (await client.get("/conversations")).json()
                assert listed["total"] == CONVERSATIONS
                assert {c["owner"] for c in listed["conversations"]} == {"soak"}
                other = await client.get("/conversations",
                                         headers={"Authorization": f"Bearer {OTHER_KEY}"})
                assert other.json()["total"] == 0
        gc.collect()
        growth = (resident_bytes() - baseline) / baseline

    assert len(answers) == QUESTIONS
    # The model's retyped page line gives way to the tool's view, page line first.
    page = 1 + QUESTIONS % 41
    assert answers[-1].startswith(
        f"PAGE {page} of 41 (819 applications). Ask for page {page + 1} for more.")
    print(f"RSS growth over {QUESTIONS - WARM_UP} questions: {growth:.1%}")
    assert growth < 0.10
