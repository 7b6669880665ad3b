"""What `pilothouse serve` and `pilothouse tui` run: the configured assistant behind each UI."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from interfaces_support import in_process, parse_sse
from textual.widgets import Input, Markdown

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.interfaces.api import assistant_app
from pilothouse.interfaces.api.server import registry_path
from pilothouse.interfaces.tui import tui_app
from pilothouse.models.registry import ModelSetup


async def test_serve_builds_the_api_over_the_configured_assistant(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup]
) -> None:
    settings = make_settings()
    app = assistant_app(settings, model=scripted_setup(["Pilothouse is up."]))
    async with in_process(app) as client:
        agents = (await client.get("/agents")).json()["agents"]
        events = parse_sse((await client.post("/conversations/s1/ask",
                                              json={"question": "status?"})).text)
    assert agents[0]["name"] == "pilothouse" and agents[0]["health"]["status"] == "ok"
    assert [e["text"] for e in events if e["kind"] == "answer"] == ["Pilothouse is up."]
    assert registry_path(settings).exists()
    assert registry_path(settings).parent == settings.checkpoint_path.parent


def test_serve_without_keys_refuses_a_public_address(
    make_settings: Callable[..., Settings]
) -> None:
    with pytest.raises(ConfigurationError, match=r"may only listen on 127\.0\.0\.1"):
        assistant_app(make_settings(), host="0.0.0.0")


async def test_the_tui_opens_the_configured_assistant_and_answers(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup]
) -> None:
    app = tui_app(make_settings(), thread_id="cli-1",
                  model=scripted_setup(["Hello from the terminal."]))
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(500):
            if app.ready.is_set():
                break
            await pilot.pause(0.02)
        assert app.sub_title.startswith("pilothouse · openai:gpt-4 · 8,192 tokens · 0 tools")
        app.query_one("#question", Input).value = "hello"
        await pilot.press("enter")
        answers: list[Any] = []
        for _ in range(500):
            answers = [m.source for m in app.query("#chat Markdown").results(Markdown)]
            if answers:
                break
            await pilot.pause(0.02)
    assert answers == ["Hello from the terminal."]
