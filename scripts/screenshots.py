"""Regenerate docs/screenshots from the real web UI and TUI.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]

Everything is the product except the model: the Argo CD and GitHub sandboxes over HTTP on
127.0.0.1, the MCP tool servers, the supervisor and its specialists from the factory, the API
and web UI in headless Chromium (/usr/bin/chromium), the TUI through Textual's pilot. The model
is the scripted OpenAI-compatible server, so every run shows the same conversation:

- web-chat.png / tui-chat.svg: a question the supervisor sends to the Argo CD and GitHub agents
  at once; their own tool calls sit under each `ask_<agent>` call;
- web-approval.png / tui-approval.svg: a sync the Argo CD agent asks to run, shown as the real
  call with the dry run Pilothouse computed, Reject focused;
- web-approved.png: the sync after approval.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Page, async_playwright, expect
from textual.widgets import Input

from pilothouse.agents.factory import open_configured_agent
from pilothouse.config import Settings
from pilothouse.interfaces.api import create_api_app
from pilothouse.interfaces.tui import PilothouseApp
from pilothouse.interfaces.tui.dialogs import ApprovalDialog
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.sandbox.github.server import running_github_sandbox
from pilothouse.sandbox.serving import running_app
from pilothouse.testing.scripted_server import running_scripted_server

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
QUESTION = "Which production apps are degraded, and which pull requests are open?"


def _ask(agent: str, question: str) -> dict[str, Any]:
    return {"name": f"ask_{agent}", "arguments": {"question": question}}


def model_script(sync_app: str) -> dict[str, Any]:
    """What the scripted model answers, by agent (told apart by their tools) and request."""
    return {"rules": [
        # The supervisor: the only agent with ask_* tools.
        {"name": "sup-sync", "when": {"tools_include": "ask_argocd", "last_role": "user",
                                      "last_contains": "Sync"},
         "reply": {"tool_calls": [_ask("argocd", f"Sync the application {sync_app}.")]}},
        {"name": "sup-route", "when": {"tools_include": "ask_argocd", "last_role": "user"},
         "reply": {"tool_calls": [
             _ask("argocd", "Which production applications are degraded?"),
             _ask("github", "Which pull requests are open in acme-corp?")]}},
        {"name": "sup-combine", "when": {"tools_include": "ask_argocd", "last_role": "tool"},
         "reply": {"content": "Both agents answered: the degraded production applications "
                              "first, then the open pull requests.", "chunk_delay": 0.02}},
        # The Argo CD agent.
        {"name": "argo-sync", "when": {"tools_include": "sync_application",
                                       "last_role": "user", "last_contains": "Sync"},
         "reply": {"tool_calls": [{"name": "sync_application",
                                   "arguments": {"name": sync_app, "dry_run": False}}]}},
        {"name": "argo-synced", "when": {"tools_include": "sync_application",
                                         "last_tool": "sync_application"},
         "reply": {"content": f"The sync of {sync_app} started."}},
        {"name": "argo-list", "when": {"tools_include": "list_applications",
                                       "last_role": "user"},
         "reply": {"tool_calls": [{"name": "list_applications", "arguments": {
             "health_status": "Degraded", "selector": "env=production", "page_size": 5}}]}},
        {"name": "argo-answer", "when": {"tools_include": "list_applications",
                                         "last_role": "tool"},
         "reply": {"content": "These production applications are Degraded."}},
        # The GitHub agent.
        {"name": "gh-search", "when": {"tools_include": "search_issues", "last_role": "user"},
         "reply": {"tool_calls": [{"name": "search_issues", "arguments": {
             "query": "org:acme-corp is:pr is:open", "per_page": 5}}]}},
        {"name": "gh-answer", "when": {"tools_include": "search_issues", "last_role": "tool"},
         "reply": {"content": "These pull requests are open."}},
    ], "default": {"content": "No scripted answer."}}


def out_of_sync_apps(argocd: RunningSandbox) -> list[str]:
    """Applications a sync would change, read from the sandbox (its fleet is generated)."""
    answer = httpx.get(f"{argocd.url}/api/v1/applications",
                       headers={"Authorization": f"Bearer {argocd.token}"}, timeout=30).json()
    return sorted(a["metadata"]["name"] for a in answer["items"]
                  if a["status"]["sync"]["status"] == "OutOfSync")


async def web_screenshots(settings: Settings, home: Path, out: Path, sync_app: str) -> None:
    app = create_api_app(partial(open_configured_agent, settings, agent="supervisor"),
                         registry_path=home / "web-conversations.sqlite", api_keys=[],
                         bind_host="127.0.0.1")
    expect.set_options(timeout=60_000)
    with running_app(app, lifespan="on") as url:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM,
                                                       args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1280, "height": 900})
                await page.goto(url)
                await ask(page, QUESTION)
                await expect(page.locator(".subcalls details.tool.sub")).to_have_count(2)
                await expect(page.locator("#send")).to_be_enabled()
                await page.screenshot(path=str(out / "web-chat.png"))

                await page.click("#new-conversation")
                await page.mouse.move(1, 1)  # no hover highlight on the button in the picture
                await ask(page, f"Sync {sync_app}")
                card = page.locator(".approval")
                await expect(card.locator("button.reject")).to_be_focused()
                await card.scroll_into_view_if_needed()
                await page.screenshot(path=str(out / "web-approval.png"))
                await card.locator("button.approve").click()
                await expect(page.locator("#status")).to_contain_text("answered in")
                await page.screenshot(path=str(out / "web-approved.png"))
            finally:
                await browser.close()


async def ask(page: Page, question: str) -> None:
    await expect(page.locator("#send")).to_be_enabled()
    await page.fill("#question", question)
    await page.press("#question", "Enter")


async def tui_screenshots(settings: Settings, home: Path, out: Path, sync_app: str) -> None:
    app = PilothouseApp(partial(open_configured_agent, settings, agent="supervisor"),
                        registry_path=home / "tui-conversations.sqlite", thread_id="tui-demo")

    async def until(pilot: Any, condition: Any) -> None:
        for _ in range(3000):
            if condition():
                return
            await pilot.pause(0.02)
        raise TimeoutError("the TUI did not get there within a minute")

    async def ask_tui(pilot: Any, question: str) -> None:
        await until(pilot, lambda: not app.busy)
        box = app.query_one("#question", Input)
        box.focus()
        box.value = question
        await pilot.press("enter")

    async with app.run_test(size=(150, 44)) as pilot:
        await until(pilot, app.ready.is_set)
        await ask_tui(pilot, QUESTION)
        await until(pilot, lambda: not app.busy and len(app.query("#chat Markdown")) == 1)
        app.save_screenshot(filename="tui-chat.svg", path=str(out))
        await ask_tui(pilot, f"Sync {sync_app}")
        await until(pilot, lambda: isinstance(app.screen, ApprovalDialog)
                    and app.screen.query_one("#reject").region.area > 0)
        app.save_screenshot(filename="tui-approval.svg", path=str(out))
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy)


async def main(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="pilothouse-screenshots-") as temp, \
            running_sandbox(apps=40) as argocd, running_github_sandbox() as github:
        home = Path(temp)
        (home / "workspace").mkdir()
        apps = out_of_sync_apps(argocd)
        if len(apps) < 2:
            raise SystemExit("The sandbox fleet has fewer than two OutOfSync applications.")
        with running_scripted_server(model_script(apps[0])) as (model_url, _state):
            env = {"PILOTHOUSE_HOME": str(home), "PILOTHOUSE_MODEL": "openai-compatible:scripted",
                   "OPENAI_BASE_URL": model_url, "MAX_CONTEXT_TOKENS": "32000",
                   "ARGOCD_URL": argocd.url, "ARGOCD_TOKEN": argocd.token,
                   "ARGOCD_READ_ONLY": "false", "GITHUB_API_URL": github.url,
                   "GITHUB_TOKEN": github.token,
                   "PILOTHOUSE_WORKSPACE": str(home / "workspace")}
            settings = Settings.from_env(env)
            await web_screenshots(settings, home, out, apps[0])
        with running_scripted_server(model_script(apps[1])) as (model_url, _state):
            settings = Settings.from_env({**env, "OPENAI_BASE_URL": model_url})
            await tui_screenshots(settings, home, out, apps[1])
    print(f"Screenshots written to {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    target = parser.parse_args().out
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(target))
