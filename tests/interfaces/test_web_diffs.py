"""Diffs in the web UI (headless Chromium): an answer's diff and a rollback approval's evidence.

The Argo CD agent is the real one (MCP server, sandbox over HTTP, the evidence gate) behind the
API on a real socket; only the model is scripted. A ```diff block is shown as one line element
per diff line with its kind as a class (add, del, hunk, file, context) and its `+`/`-` marker
kept; the approval card shows the diff the rollback would apply the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
import test_web_ui
from change_support import (
    ADDED,
    DEGRADED,
    DRIFTED,
    REMOVED,
    ROLLBACK_ADDED,
    ROLLBACK_REMOVED,
    argocd_agent,
    writable,
)
from fastapi import FastAPI
from interfaces_support import on_socket
from playwright.async_api import Browser, expect
from test_web_ui import ask, open_page

from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_model import tool_call

browser = test_web_ui.browser  # the same fixture: a headless Chromium per test

GREEN_BACKGROUND = "rgb(230, 255, 236)"
RED_BACKGROUND = "rgb(255, 235, 233)"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=20) as running:
        yield running


async def test_diffs_show_line_by_line_in_answers_and_in_the_approval_card(
    browser: Browser, sandbox: RunningSandbox, make_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup], make_app: Callable[..., FastAPI],
) -> None:
    settings = writable(make_settings(MAX_CONTEXT_TOKENS="32000"), sandbox)
    setup = scripted_setup([
        tool_call("diff_application", name=DRIFTED), "Two resources drifted from Git.",
        tool_call("rollback_application", name=DEGRADED, dry_run=False), "Not rolled back.",
    ], window=32_000, settings=settings)
    problems: list[str] = []
    with on_socket(make_app(argocd_agent(settings, setup))) as url:
        page = await open_page(browser, url, problems)
        await page.goto(url)

        await ask(page, f"What is the diff of {DRIFTED}?")
        diff = page.locator(".message.assistant pre.diff").first
        await expect(diff).to_be_visible()
        await expect(diff.locator(".diff-add")).to_have_text([ADDED])
        await expect(diff.locator(".diff-del")).to_have_text([REMOVED])
        await expect(diff.locator(".diff-hunk")).to_have_text(["@@ -2,5 +2,5 @@"])
        await expect(diff.locator(".diff-file")).to_have_count(2)
        await expect(diff.locator(".diff-add")).to_have_css("background-color", GREEN_BACKGROUND)
        await expect(diff.locator(".diff-del")).to_have_css("background-color", RED_BACKGROUND)
        await expect(diff.locator(".diff-add")).to_have_attribute("title", "added")
        # Nothing of the fence is left as text, and the marker keeps it readable uncoloured.
        assert "```" not in await page.locator(".message.assistant").first.inner_text()

        await ask(page, f"Please roll back {DEGRADED}.")
        card = page.locator("section.approval.pending")
        await expect(card).to_be_visible()
        await expect(card.locator("p.description").first).to_contain_text(
            f"Roll back application '{DEGRADED}'?")
        evidence = card.locator("pre.diff")
        await expect(evidence.locator(".diff-add", has_text=ROLLBACK_ADDED)).to_have_count(1)
        await expect(evidence.locator(".diff-del", has_text=ROLLBACK_REMOVED)).to_have_count(1)
        await expect(evidence.locator(".diff-add").first).to_have_css(
            "background-color", GREEN_BACKGROUND)
        await expect(card.locator("p.description").last).to_have_text(
            re.compile(r"^Evidence [0-9a-f]{16}: "))
        assert "```" not in await card.inner_text()

        await card.locator("button.reject").click()
        await expect(page.locator(".message.assistant").last).to_contain_text(
            "Not rolled back.")
    assert problems == []
