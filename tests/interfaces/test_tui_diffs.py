"""Diffs in the TUI (Textual's pilot): an answer's diff and a rollback approval's evidence.

The Argo CD agent is the real one (MCP server, sandbox over HTTP, the evidence gate); only the
model is scripted. Added lines show in the theme's success colour, removed lines in its error
colour; the approval dialog shows the diff the rollback would apply and the fingerprint, and
scrolls when they are longer than the screen.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
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
from test_tui import answers, approval_dialog, ask, until
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from pilothouse.config import Settings
from pilothouse.interfaces.tui import PilothouseApp
from pilothouse.interfaces.tui.diff_view import DiffFence
from pilothouse.models.registry import ModelSetup
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_model import tool_call


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=20) as running:
        yield running


def styles_of(content: Content) -> dict[str, set[str]]:
    """Each line of `content` and the styles its spans give it."""
    found: dict[str, set[str]] = {}
    offset = 0
    for line in content.plain.split("\n"):
        end = offset + len(line)
        found.setdefault(line, set()).update(
            str(span.style) for span in content.spans if span.start <= offset and span.end >= end
            and line)
        offset = end + 1
    return found


async def test_an_answers_diff_and_a_rollbacks_evidence_are_coloured_by_line(
    sandbox: RunningSandbox, make_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup], tmp_path: Path,
) -> None:
    settings = writable(make_settings(MAX_CONTEXT_TOKENS="32000"), sandbox)
    setup = scripted_setup([
        tool_call("diff_application", name=DRIFTED), "Two resources drifted from Git.",
        tool_call("rollback_application", name=DEGRADED, dry_run=False), "Not rolled back.",
    ], window=32_000, settings=settings)
    app = PilothouseApp(argocd_agent(settings, setup),
                        registry_path=tmp_path / "conversations.sqlite", thread_id="tui-diff")
    async with app.run_test(size=(130, 40)) as pilot:
        await until(pilot, app.ready.is_set, "the agent to open")
        await ask(pilot, app, f"What is the diff of {DRIFTED}?")
        await until(pilot, lambda: bool(app.query("#chat DiffFence")), "the diff")
        assert ADDED in answers(app)[0] and REMOVED in answers(app)[0]
        fences = list(app.query("#chat DiffFence").results(DiffFence))
        shown = {line: style for fence in fences
                 for line, style in styles_of(fence._highlighted_code).items()}
        assert shown[ADDED] == {"$text-success"} and shown[REMOVED] == {"$text-error"}
        assert shown["@@ -2,5 +2,5 @@"] == {"$text-accent"}

        await ask(pilot, app, f"Please roll back {DEGRADED}.")
        dialog = await approval_dialog(pilot, app)
        description = dialog.query_one("#approval-description", Static).content
        assert isinstance(description, Content)
        lines = description.plain.splitlines()
        assert lines[0] == f"Roll back application '{DEGRADED}'?"
        assert ROLLBACK_ADDED in lines and ROLLBACK_REMOVED in lines
        assert not any(line.startswith("```") for line in lines)
        assert any(re.fullmatch(r"Evidence [0-9a-f]{16}: .*", line) for line in lines)
        styles = styles_of(description)
        assert styles[ROLLBACK_ADDED] == {"$text-success"}
        assert styles[ROLLBACK_REMOVED] == {"$text-error"}
        # The plan and its diff are longer than the dialog: they scroll, the buttons stay.
        assert dialog.query_one("#approval-body", VerticalScroll).max_scroll_y > 0
        assert dialog.query_one("#reject").region.area > 0
        await pilot.click("#reject")
        await until(pilot, lambda: any("Not rolled back." in a for a in answers(app)),
                    "the answer after the rejection")
