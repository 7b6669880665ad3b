"""`pilothouse demo --scenario rollback`, end to end through the real sandbox and tool server.

The model is scripted (what changed, then the real rollback); everything else is the product:
the Argo CD MCP server over stdio, the sandbox over HTTP, the evidence gate. The approval the
demo prints must carry the plan, the diff and the evidence; rejecting (the default without a
terminal) must leave the deploy history as it was, approving must add the rollback to it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import pytest
from rich.console import Console

from pilothouse.config import Settings
from pilothouse.interfaces.demo import DEMO_APPS, Verdict, rollback_candidate, run_demo
from pilothouse.models.registry import ModelSetup
from pilothouse.sandbox.argocd import deploys
from pilothouse.sandbox.argocd.fleet import Fleet, FleetSpec
from pilothouse.testing.scripted_model import tool_call


def test_the_candidate_is_a_degraded_app_whose_newest_deploy_broke_it() -> None:
    fleet = Fleet(FleetSpec(apps=DEMO_APPS))
    name = rollback_candidate()
    index = fleet.index_of(name)
    assert index is not None
    record = fleet.app(index)
    history = deploys.deploys(record)
    assert record.health == "Degraded" and history[-1].broken and len(history) >= 2
    newest = max(deploys.deploys(fleet.app(i))[-1].deployed_at for i in range(len(fleet))
                 if fleet.app(i).health == "Degraded")
    assert history[-1].deployed_at == newest


@pytest.mark.parametrize(("verdict", "proof"), [
    (None, "unchanged"),
    ("approve", None),
])
async def test_the_rollback_scenario_shows_the_evidence_and_acts_only_when_approved(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
    verdict: Verdict | None, proof: str | None,
) -> None:
    app = rollback_candidate()
    settings = make_settings(MAX_CONTEXT_TOKENS="32000")
    steps = [tool_call("get_application_changes", name=app),
             "The newest deploy came right before the trouble.",
             tool_call("rollback_application", name=app, dry_run=False),
             "That is where the rollback stands."]
    model = scripted_setup(steps, window=32_000, settings=settings)
    out, err = io.StringIO(), io.StringIO()
    code = await run_demo(settings, [], Console(file=out, width=200),
                          Console(file=err, width=200), scenario="rollback", verdict=verdict,
                          model=model)
    shown = err.getvalue()

    assert code == 0, shown + out.getvalue()
    assert f"What changed before {app} went Degraded?" in shown
    assert "→ get_application_changes(" in shown and "→ rollback_application(" in shown
    approval = shown[shown.index("Approval needed:"):]
    assert f"Roll back application '{app}'?" in approval
    assert "Target commit" in approval  # the plan: where it goes back to
    assert re.search(r"^\s+[-+] ", approval, re.MULTILINE), "the diff it would apply"
    fingerprint = re.search(r"Evidence ([0-9a-f]{16})", approval)
    assert fingerprint, approval
    entries = re.search(rf"{re.escape(app)} is Degraded; its deploy history has (\d+) entries",
                        shown)
    assert entries, shown
    before = int(entries.group(1))
    if verdict is None:
        assert "not a terminal and no --approve/--reject, so the demo rejects" in shown
        assert f"Deploy history of {app}: unchanged" in shown
    else:
        assert "approving (--approve)" in shown
        assert f"Deploy history of {app}: {before} -> {before + 1} entries" in shown
    assert proof is None or proof in shown
