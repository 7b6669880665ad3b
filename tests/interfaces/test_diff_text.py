"""Diff lines by kind, and the CLI printer's colours for them on a terminal (none in a pipe)."""

from __future__ import annotations

import io
import re

from rich.console import Console

from pilothouse.interfaces.diff_text import evidence_text, fenced_parts, line_kinds
from pilothouse.interfaces.render import EventPrinter, styled_approval_lines
from pilothouse.runtime.events import Answer, ApprovalRequest
from pilothouse.tools.argocd.change_views import capped_diff, diff_view, fenced_diff

DIFF = ("--- live/ConfigMap/shop/web\n+++ desired/ConfigMap/shop/web\n@@ -1,3 +1,3 @@\n"
        " data:\n-  MODE: blue\n+  MODE: green\n--- comment: '-- not a header'\n"
        "--- live/Deployment/shop/web\n+++ desired/Deployment/shop/web\n@@ -4,2 +4,2 @@\n"
        "-  replicas: 2\n+  replicas: 3")
PAYLOAD = {"application": "web", "resources": 4, "differing": 1,
           "diffs": [{"resource": "ConfigMap/shop/web", "status": "modified", "diff": DIFF}]}
SGR = re.compile(r"\x1b\[([0-9;]*)m([^\x1b]*)")


def printed(event: ApprovalRequest | Answer, *, terminal: bool) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    system = "standard" if terminal else "auto"  # as the CLI: colour only on a terminal
    printer = EventPrinter(
        Console(file=out, force_terminal=terminal, color_system=system, width=100),
        Console(file=err, force_terminal=terminal, color_system=system, width=100))
    printer.show(event)
    return out.getvalue(), err.getvalue()


def coloured(raw: str) -> dict[str, str]:
    """Each printed line's text (stripped) and the SGR code it was printed in."""
    return {text.strip(): code for code, text in SGR.findall(raw) if text.strip()}


def test_line_kinds_tell_file_headers_from_removed_lines_that_start_with_dashes() -> None:
    kinds = line_kinds(DIFF.splitlines())
    assert kinds == ["file", "file", "hunk", "context", "del", "add", "del",
                     "file", "file", "hunk", "del", "add"]


def test_an_answers_diff_is_coloured_on_a_terminal_and_plain_in_a_pipe() -> None:
    answer = Answer(text="Lead.\n\n" + diff_view(PAYLOAD))
    on_terminal, _ = printed(answer, terminal=True)
    piped, _ = printed(answer, terminal=False)

    colours = coloured(on_terminal)
    assert colours["+  MODE: green"] == "32" and colours["-  MODE: blue"] == "31"
    assert colours["@@ -1,3 +1,3 @@"] == "36" and colours["--- comment: '-- not a header'"] == "31"
    assert "\x1b" not in piped
    assert "-  MODE: blue\n+  MODE: green\n" in piped and "```diff\n" in piped  # as written


def test_an_approvals_diff_is_coloured_and_its_fences_are_not_shown() -> None:
    description = f"Roll back 'web'?\n{capped_diff(PAYLOAD, 6)}\nEvidence 0123456789abcdef."
    value = {"agent": "argocd", "name": "ask_argocd", "subagent_calls": [
        {"name": "rollback_application", "args": {"name": "web"}, "description": description}]}
    _, on_terminal = printed(ApprovalRequest(id="i1", value=value), terminal=True)
    _, piped = printed(ApprovalRequest(id="i1", value=value), terminal=False)

    colours = coloured(on_terminal)
    assert colours["+  MODE: green"] == "32" and colours["-  MODE: blue"] == "31"
    assert colours["Evidence 0123456789abcdef."] == "33"
    assert "… 6 more diff lines not shown." in piped  # 12 lines, 6 shown
    assert "\x1b" not in piped and "```" not in piped
    styles = dict(styled_approval_lines(value))
    assert styles["  +  MODE: green"] == "green"  # indented under the supervisor's line


def test_a_fence_is_longer_than_any_backticks_in_the_diff() -> None:
    block = fenced_diff("+  README: |\n+    ```sh\n+    make\n+    ```")
    assert block.startswith("````diff\n") and block.endswith("\n````")
    [(is_diff, body)] = list(fenced_parts(block))
    assert is_diff and body.endswith("+    ```")
    assert str(evidence_text(block)).splitlines()[-1] == "+    ```"
