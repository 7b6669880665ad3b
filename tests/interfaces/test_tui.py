"""The TUI through Textual's pilot: chat, tool activity, approval dialogs, switching threads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from interfaces_support import (
    RESTARTED,
    OpenAgent,
    read_logs,
    restart_application,
)
from textual.pilot import Pilot
from textual.widgets import Input, Markdown, OptionList, Static
from ui_support import APPS_VIEW, list_applications

from pilothouse.interfaces.api.registry import ConversationRegistry
from pilothouse.interfaces.tui import PilothouseApp
from pilothouse.interfaces.tui.dialogs import ApprovalDialog, ConversationSwitcher
from pilothouse.testing.scripted_model import tool_call


async def until(pilot: Pilot[Any], condition: Callable[[], bool], what: str) -> None:
    """Let the app run until `condition` holds (at most about 20 s, for a loaded CI machine)."""
    for _ in range(1000):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what}")


async def approval_dialog(pilot: Pilot[Any], app: PilothouseApp) -> ApprovalDialog:
    """The approval dialog once it is laid out (a click before that would miss its buttons)."""
    await until(pilot, lambda: isinstance(app.screen, ApprovalDialog)
                and bool(app.screen.query("#approve"))
                and app.screen.query_one("#approve").region.area > 0, "the approval dialog")
    assert isinstance(app.screen, ApprovalDialog)
    return app.screen


def texts(app: PilothouseApp, selector: str) -> list[str]:
    return [str(w.content) for w in app.query(selector).results(Static)]


def answers(app: PilothouseApp) -> list[str]:
    return [w.source for w in app.query("#chat Markdown").results(Markdown)]


def leads(app: PilothouseApp) -> list[str]:
    """The model's words of each answer (the tools' views follow them)."""
    return [a.split("\n\n")[0] for a in answers(app)]


async def ask(pilot: Pilot[Any], app: PilothouseApp, question: str) -> None:
    await until(pilot, lambda: not app.busy, "the previous answer")
    box = app.query_one("#question", Input)
    box.focus()
    box.value = question
    await pilot.press("enter")


async def test_chat_shows_answers_and_activity_and_approves_in_a_dialog(
    make_open_agent: Callable[..., OpenAgent], tmp_path: Path
) -> None:
    open_agent = make_open_agent([
        tool_call("list_applications", project="payments"),
        "Two applications in **payments**.",
        tool_call("read_logs", app="payments-api"),
        "The logs show repeated **timeouts** talking to postgres.",
        tool_call("restart_application", name="payments-api"),
        "Restarted payments-api; its 3 pods were replaced.",
    ], tools=[list_applications, read_logs, restart_application])
    app = PilothouseApp(open_agent, registry_path=tmp_path / "conversations.sqlite",
                        thread_id="tui-1")
    async with app.run_test(size=(130, 40)) as pilot:
        await until(pilot, app.ready.is_set, "the agent to open")
        assert "platform · openai:gpt-4 · 8,192 tokens · 3 tools" in app.sub_title

        await ask(pilot, app, "Which apps are in payments?")
        # The model's lead, then the tool's view as it rendered it.
        await until(pilot, lambda: answers(app) == [f"Two applications in **payments**.\n\n"
                                                   f"{APPS_VIEW}"], "the answer")
        assert texts(app, "#chat .user") == ["Which apps are in payments?"]
        activity = texts(app, "#activity .activity")
        assert activity[0] == '→ list_applications(project="payments")'
        assert activity[1].startswith(f"← list_applications: {len(APPS_VIEW)} chars")
        await until(pilot, lambda: not app.busy, "the turn to end")
        assert str(app.status.content).startswith("answered in ")

        await ask(pilot, app, "Show the payments-api logs")
        await until(pilot, lambda: len(answers(app)) == 2, "the second answer")
        assert any(line.startswith("⚙ context: read_logs output cut from")
                   for line in texts(app, "#activity .context"))

        await ask(pilot, app, "Restart payments-api")
        dialog = await approval_dialog(pilot, app)
        assert str(dialog.query_one("#approval-title", Static).content) == (
            "Approval needed: restart_application")
        assert '"name": "payments-api"' in str(dialog.query_one("#approval-action",
                                                                Static).content)
        # A change opens on Reject, and the status line says the run waits for a person.
        assert dialog.focused is dialog.query_one("#reject")
        assert str(app.status.content).startswith(
            "‖ waiting for your approval: restart_application · ")
        assert RESTARTED == []
        assert await pilot.click("#approve")
        await until(pilot, lambda: any("Restarted payments-api" in a for a in answers(app)),
                    "the answer after approval")
        assert RESTARTED == ["payments-api"]
        assert "✔ approved restart_application" in texts(app, "#activity .approval")


async def test_a_rejection_with_a_reason_reaches_the_agent(
    make_open_agent: Callable[..., OpenAgent], tmp_path: Path
) -> None:
    seen: list[str] = []

    def acknowledge(messages: list[Any]) -> str:
        seen.append(str(messages[-1].content))
        return "Understood; nothing was restarted."

    app = PilothouseApp(make_open_agent([tool_call("restart_application", name="payments-api"),
                                         acknowledge]),
                        registry_path=tmp_path / "conversations.sqlite")
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, app.ready.is_set, "the agent to open")
        await ask(pilot, app, "Restart payments-api")
        dialog = await approval_dialog(pilot, app)
        dialog.query_one("#reason", Input).value = "Not during the freeze."
        await pilot.press("escape")  # Esc rejects, with the reason typed so far
        await until(pilot, lambda: answers(app) == ["Understood; nothing was restarted."],
                    "the answer after rejection")
    assert RESTARTED == []
    assert "Not during the freeze." in seen[0]


async def test_the_switcher_lists_conversations_and_resumes_one(
    make_open_agent: Callable[..., OpenAgent], tmp_path: Path
) -> None:
    registry_path = tmp_path / "conversations.sqlite"
    async with ConversationRegistry.open(registry_path) as registry:
        await registry.touch("elsewhere", "Which PRs wait for review?", agent="another-agent")
    app = PilothouseApp(make_open_agent([tool_call("list_applications", project="billing"),
                                         "billing-ui is OutOfSync.", "A fresh start."]),
                        registry_path=registry_path, thread_id="first")
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, app.ready.is_set, "the agent to open")
        await ask(pilot, app, "How is billing?")
        await until(pilot, lambda: leads(app) == ["billing-ui is OutOfSync."], "an answer")

        await pilot.press("ctrl+n")
        await until(pilot, lambda: app.thread_id != "first" and not answers(app),
                    "a new conversation")
        await ask(pilot, app, "Start over")
        await until(pilot, lambda: answers(app) == ["A fresh start."], "the new answer")

        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, ConversationSwitcher)
                    and app.screen.query_one(OptionList).has_focus, "the switcher")
        options = app.screen.query_one(OptionList)
        prompts = [str(options.get_option_at_index(i).prompt)
                   for i in range(options.option_count)]
        assert prompts[0] == "+ New conversation"
        assert any("How is billing?" in p and "(first)" in p for p in prompts)
        assert any(p.startswith("● Start over") for p in prompts)  # the current one
        assert not any("(elsewhere)" in p for p in prompts), "another agent's thread"
        target = next(i for i, p in enumerate(prompts) if "(first)" in p)
        options.highlighted = target
        await pilot.press("enter")
        await until(pilot, lambda: app.thread_id == "first"
                    and leads(app) == ["billing-ui is OutOfSync."], "the resumed history")
        assert texts(app, "#chat .user") == ["How is billing?"]
        assert texts(app, "#activity .tool-call") == ['→ list_applications(project="billing")']
