"""The web UI in a real headless Chromium against the API on a real socket.

The agent is real (LangGraph, SQLite, tools, context guard, approval gate); only the model is
scripted. The documentation's screenshots come from scripts/screenshots.py, not from here.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from interfaces_support import (
    RESTARTED,
    OpenAgent,
    on_socket,
    read_logs,
    restart_application,
)
from langchain_core.tools import tool
from playwright.async_api import Browser, Page, async_playwright, expect
from ui_support import APPS_VIEW

from pilothouse.testing.scripted_model import tool_call

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_INSTALLED = CHROMIUM.exists()
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
# A loaded CI machine can take longer than Playwright's default of 5 s for an assertion.
expect.set_options(timeout=15_000)
INJECTION = 'Careful: <img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'


@tool
def list_applications(project: str = "") -> str:
    """List applications (a rendered view; a hostile annotation rides along in it)."""
    return APPS_VIEW + "\n\n" + INJECTION


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    if not CHROMIUM_INSTALLED:
        pytest.fail("Chromium is missing at /usr/bin/chromium: run apt-get install -y chromium")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                    args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


async def open_page(browser: Browser, url: str, problems: list[str]) -> Page:
    """A page that records script errors, CSP violations and requests leaving the server."""
    page = await browser.new_page(viewport={"width": 1280, "height": 860})
    page.set_default_timeout(15_000)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda message: problems.append(f"console: {message.text}")
            if message.type == "error" else None)
    page.on("request", lambda request: problems.append(f"external request: {request.url}")
            if not request.url.startswith((url, "data:")) else None)
    return page


async def ask(page: Page, question: str) -> None:
    await expect(page.locator("#send")).to_be_enabled()  # the previous answer has finished
    await page.fill("#question", question)
    await page.press("#question", "Enter")


def script() -> list[Any]:
    return [
        tool_call("list_applications", project="payments"),
        "Two applications in **payments**.",
        tool_call("read_logs", app="payments-api"),
        "The logs show repeated **timeouts** talking to postgres.",
        tool_call("restart_application", name="payments-api"),
        "Restarted payments-api; its 3 pods were replaced.",
    ]


async def test_chat_streams_tools_tables_context_and_approvals(
    browser: Browser, make_open_agent: Callable[..., OpenAgent],
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(make_open_agent(
        script(), tools=[list_applications, read_logs, restart_application]))
    problems: list[str] = []
    with on_socket(app) as url:
        page = await open_page(browser, url, problems)
        await page.goto(url)
        await expect(page.locator(".agent-name")).to_have_text("platform")

        # 1. A tool call, then the answer: a markdown table rendered as an HTML table.
        await ask(page, "Which apps are in payments?")
        table = page.locator(".message.assistant table.md-table")
        await expect(table).to_be_visible()
        assert await table.locator("th").all_inner_texts() == ["name", "health", "sync"]
        assert await table.locator("tbody tr").count() == 2
        assert await table.locator("tbody tr").first.locator("td").all_inner_texts() == [
            "payments-api", "Degraded", "Synced"]
        tool = page.locator("details.tool").first
        await expect(tool.locator(".tool-name")).to_have_text("list_applications")
        await expect(tool.locator(".tool-status")).to_contain_text("chars")
        await tool.locator("summary").click()
        await expect(tool.locator(".tool-args")).to_contain_text('"project": "payments"')
        await expect(tool.locator(".tool-result")).to_contain_text("payments-worker")
        # HTML in a tool's view is shown as text, never run.
        answer = page.locator(".message.assistant").first
        await expect(answer).to_contain_text('<script>window.pwned=2</script>')
        assert await answer.locator("img, script").count() == 0
        assert await page.evaluate("window.pwned") is None
        await expect(page.locator("#send")).to_be_enabled()

        # 2. A long tool output is cut by the context guard, and the UI says so.
        await ask(page, "Show the payments-api logs")
        note = page.locator(".note.context", has_text="read_logs output cut from")
        await expect(note).to_be_visible()
        await expect(page.locator(".message.assistant strong").last).to_have_text("timeouts")

        # 3. An action that needs approval: nothing runs until Approve is clicked.
        await ask(page, "Restart payments-api")
        card = page.locator(".approval")
        await expect(card.locator("h3")).to_have_text("Approval needed: restart_application")
        await expect(card.locator("pre.command")).to_contain_text('"name": "payments-api"')
        await expect(card.locator(".description")).to_contain_text("Restart this application")
        gated = page.locator("details.tool").last
        await expect(gated.locator(".tool-status")).to_have_text("awaiting approval")
        # Waiting is a state of its own, and a change opens on Reject (Enter must not act).
        await expect(page.locator("#status")).to_have_text(
            "waiting for approval: restart_application")
        await expect(card.locator("button.reject")).to_be_focused()
        assert RESTARTED == []
        await expect(page.locator("#send")).to_be_enabled()
        await card.scroll_into_view_if_needed()
        await card.locator("button.approve").click()
        await expect(page.locator(".message.assistant .body").last).to_contain_text(
            "Restarted payments-api; its 3 pods were replaced.")
        await expect(card.locator(".outcome")).to_have_text("✔ Approved")
        await expect(page.locator("#status")).to_contain_text("answered in")
        assert RESTARTED == ["payments-api"]
        await expect(gated.locator(".tool-status")).to_have_text("39 chars")
        await expect(page.locator("#send")).to_be_enabled()

        # 4. The sidebar lists the conversation; a new one is empty; resuming restores it.
        entry = page.locator("#conversations li")
        await expect(entry).to_have_count(1)
        await expect(entry.locator(".title")).to_have_text("Which apps are in payments?")
        await page.click("#new-conversation")
        await expect(page.locator("#messages .message")).to_have_count(0)
        await entry.locator("button.open").click()
        await expect(page.locator(".message.user")).to_have_count(3)
        await expect(page.locator(".message.assistant table.md-table")).to_have_count(1)
        await expect(page.locator("details.tool")).to_have_count(3)
        await expect(page.locator(".approval")).to_have_count(0)
        restored = page.locator("details.tool").nth(2)
        await restored.locator("summary").click()
        await expect(restored.locator(".tool-result")).to_contain_text("3 pods replaced")
    assert problems == []


async def test_with_keys_the_page_asks_for_one_and_then_works(
    browser: Browser, make_open_agent: Callable[..., OpenAgent],
    make_app: Callable[..., FastAPI],
) -> None:
    key = "s3cret-web-ui-key-5b9d3f7a1c6e0b4d"
    app = make_app(make_open_agent(["Hello from Pilothouse."]), api_keys=[key])
    problems: list[str] = []
    with on_socket(app) as url:
        page = await open_page(browser, url, problems)
        await page.goto(url)
        await expect(page.locator("#key-form")).to_be_visible()
        await page.fill("#api-key", key)
        await page.click("#key-form button")
        await expect(page.locator("#key-form")).to_be_hidden()
        await ask(page, "hello")
        await expect(page.locator(".message.assistant .body")).to_have_text(
            "Hello from Pilothouse.")
    # The refused list call before the key was entered is the only error the page saw.
    assert [p for p in problems if "401" not in p] == []


async def test_api_docs_render_offline(
    browser: Browser, make_open_agent: Callable[..., OpenAgent],
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(make_open_agent(["hi"]))
    problems: list[str] = []
    with on_socket(app) as url:
        page = await open_page(browser, url, problems)
        await page.goto(f"{url}/docs")
        await expect(page.locator(".opblock").first).to_be_visible()
        assert await page.locator(".opblock").count() >= 10
    assert [p for p in problems if p.startswith("external")] == []


MARKDOWN = """# Status
Some `code <b>` and [docs](https://example.com/a) and [bad](javascript:alert(1)).

1. first
2. second

- a
- b

| app | note |
|:---|---:|
| x \\| y | <i>z</i> |

```sh
echo "<script>"
```
> quoted **bold**"""


async def test_the_markdown_renderer_builds_safe_html(
    browser: Browser, make_open_agent: Callable[..., OpenAgent],
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(make_open_agent(["hi"]))
    problems: list[str] = []
    with on_socket(app) as url:
        page = await open_page(browser, url, problems)
        await page.goto(url)
        rendered = await page.evaluate("""(source) => {
            const box = document.createElement("div");
            box.append(window.PilothouseMarkdown.render(source));
            return {html: box.innerHTML,
                    unsafe: box.querySelectorAll("script, img, i, b, [onerror]").length};
        }""", MARKDOWN)
    html = rendered["html"]
    assert rendered["unsafe"] == 0
    assert "<h3>Status</h3>" in html
    assert "<code>code &lt;b&gt;</code>" in html
    assert ('<a href="https://example.com/a" rel="noopener noreferrer" target="_blank">docs</a>'
            in html)
    assert "[bad](javascript:alert(1))" in html and "javascript:" not in html.split("[bad]")[0]
    assert "<ol><li>first</li><li>second</li></ol>" in html
    assert "<ul><li>a</li><li>b</li></ul>" in html
    assert '<td style="text-align: left;">x | y</td>' in html
    assert '<td style="text-align: right;">&lt;i&gt;z&lt;/i&gt;</td>' in html
    assert '<pre><code class="language-sh">echo "&lt;script&gt;"</code></pre>' in html
    assert "<blockquote><p>quoted <strong>bold</strong></p></blockquote>" in html
    assert problems == []


async def test_a_conversation_gone_meanwhile_is_said_and_the_next_question_starts_anew(
    browser: Browser, make_open_agent: Callable[..., OpenAgent],
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(make_open_agent(["First answer.", "Second answer."]))
    problems: list[str] = []
    with on_socket(app) as url:
        page = await open_page(browser, url, problems)
        await page.goto(url)
        await ask(page, "hello")  # the page creates the conversation, then asks in it
        await expect(page.locator(".message.assistant").last).to_contain_text("First answer.")
        first = str(await page.evaluate("location.hash"))[1:]
        async with httpx.AsyncClient(base_url=url) as http:  # deleted from elsewhere
            # The answer shows before the server has closed its turn; until then a delete
            # is refused with 409 (a turn is running), which is right, so wait for the end.
            deleted = await http.delete(f"/conversations/{first}")
            for _ in range(100):
                if deleted.status_code != 409:
                    break
                await asyncio.sleep(0.1)
                deleted = await http.delete(f"/conversations/{first}")
            assert deleted.status_code == 204

        await ask(page, "still there?")
        await expect(page.locator(".error", has_text="This conversation is gone")).to_be_visible()
        await ask(page, "and now?")
        await expect(page.locator(".message.assistant").last).to_contain_text("Second answer.")
        second = str(await page.evaluate("location.hash"))[1:]
    assert second and second != first
    # The refused ask is the only failed request (the browser reports its 404 on the console).
    assert [p for p in problems if "status of 404" not in p] == []
