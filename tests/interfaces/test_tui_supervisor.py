"""The TUI over the supervisor: sub-agents' calls nested, their approvals shown as the real call.

Through Textual's pilot; the supervisor and its specialists are real agents over scripted
models, the DevOps specialist's `run_command` gated by the real shell policy.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from interfaces_support import OpenAgent
from test_tui import answers, approval_dialog, ask, texts, until
from textual.app import App
from textual.widgets import Static
from ui_support import COMMANDS_RUN, RESTART, supervisor_agent

from pilothouse.config import Settings
from pilothouse.interfaces.tui import PilothouseApp
from pilothouse.interfaces.tui.app import CSS as TUI_CSS
from pilothouse.interfaces.tui.dialogs import ApprovalDialog
from pilothouse.models.registry import ModelSetup
from pilothouse.testing.scripted_model import tool_call


async def test_sub_agent_work_is_nested_and_an_approval_shows_the_command_with_reject_focused(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
    tmp_path: Path,
) -> None:
    open_agent = supervisor_agent(
        make_settings(), tmp_path,
        supervisor=scripted_setup([tool_call("ask_argocd", question="Apps in payments?"),
                                   tool_call("ask_devops", question="Restart payments-api"),
                                   "Nothing was restarted."]),
        argocd=scripted_setup([tool_call("list_applications", project="payments"),
                               "payments-api is Degraded."]),
        devops=scripted_setup([tool_call("run_command", command=RESTART),
                               "Nothing was restarted."]))
    app = PilothouseApp(open_agent, registry_path=tmp_path / "conversations.sqlite")
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, app.ready.is_set, "the agent to open")
        await ask(pilot, app, "Which apps are in payments?")
        await until(pilot, lambda: len(answers(app)) == 1, "the answer")
        activity = texts(app, "#activity .activity")
        # The first question names one agent: it is passed on in the person's words.
        assert activity[0] == '→ ask_argocd(question="Which apps are in payments?")'
        assert activity[1] == '  ↳ argocd: → list_applications(project="payments")'
        assert activity[2].startswith("  ↳ argocd: ← list_applications: ")
        assert activity[3].startswith("← ask_argocd: ")
        assert len(app.query("#activity .nested")) == 2

        await ask(pilot, app, "Restart payments-api")
        dialog = await approval_dialog(pilot, app)
        # The real call, not the question the supervisor passed on.
        assert str(dialog.query_one("#approval-title", Static).content) == (
            "Approval needed: run_command")
        assert str(dialog.query_one("#approval-asked-by", Static).content) == (
            "Asked by the devops agent (through ask_devops)")
        assert str(dialog.query_one("#approval-action", Static).content) == RESTART
        description = str(dialog.query_one("#approval-description", Static).content)
        assert f"working directory: {tmp_path}" in description
        assert "changes the cluster" in description
        assert any(line.startswith("‖ waiting for approval: run_command (asked by the devops")
                   for line in texts(app, "#activity .approval"))
        # Reject has the focus: the Enter a person might press by habit changes nothing.
        assert dialog.focused is dialog.query_one("#reject")
        await pilot.press("enter")
        await until(pilot, lambda: not app.busy and len(answers(app)) == 2,
                    "the answer after rejection")
        assert "✘ rejected run_command: The user rejected this action." in texts(
            app, "#activity .approval")
    assert COMMANDS_RUN == []


async def test_a_plan_dialog_shows_its_steps_and_opens_on_approve(
    make_open_agent: Callable[..., OpenAgent], tmp_path: Path
) -> None:
    """Approving a plan changes nothing by itself (each step's action is asked for again)."""
    plan = tool_call("propose_plan", goal="Restart the failed nightly job",
                     steps=[{"title": "Read the job's logs", "tools": ["read_logs"]},
                            {"title": "Restart the job", "tools": ["restart_application"]}])
    app = PilothouseApp(make_open_agent([plan, "Not now, then."], planning=True),
                        registry_path=tmp_path / "conversations.sqlite")
    async with app.run_test(size=(130, 40)) as pilot:
        await until(pilot, app.ready.is_set, "the agent to open")
        await ask(pilot, app, "Restart the failed nightly job")
        dialog = await approval_dialog(pilot, app)
        assert str(dialog.query_one("#approval-title", Static).content) == (
            "Approval needed: propose_plan")
        assert str(dialog.query_one("#approval-action", Static).content) == (
            "Restart the failed nightly job\n1. Read the job's logs\n2. Restart the job")
        assert dialog.focused is dialog.query_one("#approve")
        await pilot.press("escape")
        await until(pilot, lambda: not app.busy, "the turn to end")


async def test_a_long_dry_run_scrolls_and_the_buttons_stay_on_screen() -> None:
    class Host(App[None]):
        CSS = TUI_CSS

    diff = "\n".join(f"- apply Deployment payments/worker-{i} (OutOfSync)" for i in range(60))
    value = {"type": "tool_approval", "tool_call_id": "call-1", "name": "sync_application",
             "args": {"name": "payments-api", "dry_run": False},
             "description": f"Sync application 'payments-api' on the cluster?\n{diff}"}
    async with Host().run_test(size=(110, 30)) as pilot:
        dialog = ApprovalDialog(value)
        pilot.app.push_screen(dialog)
        await until(pilot, lambda: bool(dialog.query("#reject"))
                    and dialog.query_one("#reject").region.area > 0, "the dialog")
        for button in ("#approve", "#reject"):
            region = dialog.query_one(button).region
            assert region.y >= 0 and region.bottom <= 30, (button, region)
        assert dialog.focused is dialog.query_one("#reject")
        body = dialog.query_one("#approval-body")
        assert body.max_scroll_y > 0  # the rest of the diff is a scroll away, not cut off
