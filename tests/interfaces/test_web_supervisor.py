"""The web UI in headless Chromium over the supervisor, and while a slow answer streams.

Sub-agents' calls appear nested under the supervisor's `ask_<agent>` call; a sub-agent's
approval shows its real command, where it runs and why, opens on Reject and puts the page in
a waiting state of its own; a slow model's answer streams word by word under a status line
that says what runs and for how long.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import test_web_ui
from fastapi import FastAPI
from interfaces_support import on_socket
from playwright.async_api import Browser, expect
from test_web_ui import ask, open_page
from ui_support import (
    APPS_VIEW,
    ARGOCD_SLOW,
    COMMANDS_RUN,
    LEAD,
    RESTART,
    STREAMING_SCRIPT,
    SUB_LEAD,
    served_model_settings,
    streaming_agent,
    supervisor_agent,
)

from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup, setup_model
from pilothouse.testing.scripted_model import tool_call
from pilothouse.testing.scripted_server import running_scripted_server

browser = test_web_ui.browser  # the same fixture: a headless Chromium per test


async def test_sub_agent_calls_nest_and_their_approval_shows_the_real_command(
    browser: Browser, make_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup], make_app: Callable[..., FastAPI],
    tmp_path: Path,
) -> None:
    open_agent = supervisor_agent(
        make_settings(), tmp_path,
        # The first question names Argo CD: it is asked without a model call.
        supervisor=scripted_setup([tool_call("ask_devops", question="Restart payments-api")]),
        argocd=scripted_setup([tool_call("list_applications", project="payments"),
                               "payments-api is Degraded."]),
        devops=scripted_setup([tool_call("run_command", command=RESTART),
                               "payments-api was restarted."]))
    problems: list[str] = []
    with on_socket(make_app(open_agent)) as url:
        page = await open_page(browser, url, problems)
        await page.goto(url)
        await expect(page.locator(".agent-name")).to_have_text("supervisor")

        # 1. list_applications, which the argocd agent ran, sits under ask_argocd.
        await ask(page, "Which apps are in payments?")
        await expect(page.locator(".message.assistant table.md-table")).to_be_visible()
        parent = page.locator("details.tool", has_text="ask_argocd")
        parent_id = await parent.get_attribute("data-call-id")
        nested = page.locator(f'.subcalls[data-parent-id="{parent_id}"] details.tool.sub')
        await expect(nested).to_have_count(1)
        await expect(nested.locator(".tool-agent")).to_have_text("argocd")
        await expect(nested.locator(".tool-name")).to_have_text("list_applications")
        await expect(nested.locator(".tool-status")).to_have_text(f"{len(APPS_VIEW)} chars")
        await nested.locator("summary").click()
        await expect(nested.locator(".tool-result")).to_contain_text("payments-worker")

        # 2. The devops agent's approval: the real command, its directory, Reject focused.
        await ask(page, "Restart payments-api")
        card = page.locator(".approval")
        await expect(card.locator("h3")).to_have_text("Approval needed: run_command")
        await expect(card.locator(".asked-by")).to_have_text(
            "Asked by the devops agent (through ask_devops)")
        await expect(card.locator("pre.command")).to_have_text(RESTART)
        await expect(card.locator(".description")).to_contain_text(
            f"working directory: {tmp_path}")
        await expect(card.locator(".description")).to_contain_text("changes the cluster")
        await expect(card.locator("button.reject")).to_be_focused()
        await expect(page.locator("#status")).to_have_text("waiting for approval: run_command")
        asking = page.locator("details.tool", has_text="ask_devops")
        await expect(asking.locator(".tool-status")).to_have_text("awaiting approval")
        gated = page.locator("details.tool.sub", has_text="run_command")
        await expect(gated.locator(".tool-status")).to_have_text("awaiting approval")
        assert COMMANDS_RUN == []

        # 3. Reopened later (the URL names the conversation): the same card, still waiting.
        await page.reload()
        await expect(card.locator("h3")).to_have_text("Approval needed: run_command")
        await expect(card.locator("pre.command")).to_have_text(RESTART)
        await expect(card.locator(".asked-by")).to_have_text(
            "Asked by the devops agent (through ask_devops)")
        await expect(page.locator("#status")).to_have_text("waiting for approval: run_command")
        await expect(asking.locator(".tool-status")).to_have_text("awaiting approval")
        await expect(card.locator("button.reject")).to_be_focused()

        await card.locator("button.approve").click()
        await expect(page.locator(".message.assistant .body").last).to_contain_text(
            "payments-api was restarted.")
        await expect(asking.locator(".tool-status")).to_contain_text("chars")
        await expect(page.locator("#status")).to_contain_text("answered in")
    assert COMMANDS_RUN == [RESTART]
    assert problems == []


async def test_a_slow_answer_streams_under_a_status_line_with_a_clock(
    browser: Browser, make_app: Callable[..., FastAPI], home: Path,
) -> None:
    problems: list[str] = []
    with running_scripted_server(STREAMING_SCRIPT) as (model_url, _state), \
            on_socket(make_app(streaming_agent(home, model_url))) as url:
        page = await open_page(browser, url, problems)
        await page.goto(url)
        await ask(page, "Which apps are in payments?")
        status = page.locator("#status")
        # The model thinks before its tool call: the status says so, and its clock moves.
        await expect(status).to_have_text(re.compile(r"^thinking · [1-9]\d*s$"))
        await expect(status).to_have_class("working")
        # The answer arrives word by word: a strict start of it is on screen first.
        draft = page.locator(".message.streaming .body")
        await page.wait_for_function(
            """(lead) => {
                const body = document.querySelector(".message.streaming .body");
                const text = body ? body.textContent : "";
                return text.length > 0 && text.length < lead.length && lead.startsWith(text);
            }""", arg=LEAD)
        await expect(status).to_have_text(re.compile(r"^writing the answer · \d+s$"))
        await expect(draft).to_have_count(0)  # replaced by the rendered answer at the end
        answer = page.locator(".message.assistant .body")
        await expect(answer).to_contain_text(LEAD)
        await expect(answer.locator("table.md-table")).to_be_visible()
        await expect(status).to_have_text(re.compile(r"^answered in \d+s$"))
    assert problems == []


async def test_a_sub_agents_answer_streams_under_its_call_until_the_answer(
    browser: Browser, make_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup], make_app: Callable[..., FastAPI],
    tmp_path: Path, home: Path,
) -> None:
    problems: list[str] = []
    with running_scripted_server(ARGOCD_SLOW) as (model_url, _state):
        open_agent = supervisor_agent(
            make_settings(), tmp_path,
            supervisor=scripted_setup([tool_call("ask_argocd", question="Apps in payments?")]),
            argocd=setup_model(served_model_settings(home, model_url)),
            devops=scripted_setup(["unused"]))
        with on_socket(make_app(open_agent)) as url:
            page = await open_page(browser, url, problems)
            await page.goto(url)
            await ask(page, "Which apps are in payments?")
            draft = page.locator(".subcalls .subagent-draft")
            await page.wait_for_function(
                """(lead) => {
                    const body = document.querySelector(".subagent-draft .draft-text");
                    const text = body ? body.textContent : "";
                    return text.length > 0 && text.length < lead.length && lead.startsWith(text);
                }""", arg=SUB_LEAD)
            await expect(draft.locator(".tool-agent")).to_have_text("argocd")
            await expect(page.locator("#status")).to_have_text(
                re.compile(r"^argocd agent: writing its answer · \d+s$"))
            await expect(page.locator("#status")).to_contain_text("answered in")
            await expect(draft).to_have_count(0)
            await expect(page.locator(".message.assistant .body")).to_contain_text(SUB_LEAD)
    assert problems == []
