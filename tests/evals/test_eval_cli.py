"""`pilothouse eval` as a user runs it: a real process, a model behind real HTTP, a JSON report.

The model is a scripted OpenAI-compatible server that lists Argo CD applications and repeats
tool results, and knows nothing else (each question names one agent, so the supervisor asks it
without a model call): the Argo CD case passes, the GitHub case fails, and the exit code, the
tables and the report say so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pilothouse.testing.scripted_server import running_scripted_server

REPO = Path(__file__).resolve().parents[2]
SCRIPT = {
    "rules": [
        {"name": "list", "when": {"tools_include": "list_applications", "last_role": "user"},
         "reply": {"tool_calls": [{"name": "list_applications", "arguments": {"page": 1}}]}},
        {"name": "answer", "when": {"last_role": "tool"}, "reply": {"content": "{tool_results}"}},
    ],
    "default": {"content": "I do not know."},
}
CASES = """\
category: argocd
cases:
  - id: cli-inventory
    turns: ["List all ArgoCD applications"]
    expect:
      agents: [argocd]
      tools: [{name: list_applications, args: {page: 1}}]
      facts: ["819"]
  - id: cli-review-queue
    category: github
    turns: ["Which PRs wait for review in payments-api?"]
    expect: {agents: [github], facts: ["18"]}
"""


def pilothouse(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pilothouse", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


def test_a_run_prints_the_tables_writes_the_report_and_exits_by_pass_rate(
    tmp_path: Path,
) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text(CASES)
    report = tmp_path / "out" / "report.json"
    with running_scripted_server(SCRIPT) as (url, _state):
        env = {**os.environ, "PILOTHOUSE_HOME": str(tmp_path / "home"),
               "PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": url,
               "MAX_CONTEXT_TOKENS": "8192"}
        done = pilothouse("eval", str(cases), "--report", str(report), "--fail-under", "0.9",
                          env=env)

    assert done.returncode == 1, done.stderr
    assert "pass cli-inventory" in done.stderr and "FAIL cli-review-queue" in done.stderr
    assert "Evaluation of openai-compatible:scripted" in done.stdout
    assert "facts: missing '18'" in done.stdout
    written = json.loads(report.read_text())
    assert [(c["id"], c["passed"]) for c in written["cases"]] == [
        ("cli-inventory", True), ("cli-review-queue", False)]
    assert written["summary"][-1]["pass_rate"] == 0.5
    assert written["meta"]["model"] == "openai-compatible:scripted"


def test_bad_arguments_exit_2_and_say_what_to_do(tmp_path: Path) -> None:
    env = {**os.environ, "PILOTHOUSE_HOME": str(tmp_path / "home")}
    wrong_model = pilothouse("eval", "--model", "gpt-4o", env=env)
    assert wrong_model.returncode == 2
    assert "--model='gpt-4o' must look like provider:model" in wrong_model.stderr
    no_split = pilothouse("eval", "--split", "holdout", env=env)
    assert no_split.returncode == 2 and "choose one of dev, test" in no_split.stderr
    no_cases = pilothouse("eval", str(tmp_path / "nowhere"), env=env)
    assert no_cases.returncode == 2
    assert "No evaluation cases at" in no_cases.stderr and "What to do:" in no_cases.stderr


#: A supervisor that asks the Argo CD agent, and an agent that lists Degraded applications.
TEST_SPLIT_SCRIPT = {
    "rules": [
        {"name": "route", "when": {"tools_include": "ask_argocd", "last_role": "user"},
         "reply": {"tool_calls": [{"name": "ask_argocd", "arguments": {
             "question": "{question}"}}]}},
        {"name": "list", "when": {"tools_include": "list_applications", "last_role": "user"},
         "reply": {"tool_calls": [{"name": "list_applications",
                                   "arguments": {"health_status": "Degraded"}}]}},
        {"name": "answer", "when": {"last_role": "tool"}, "reply": {"content": "{tool_results}"}},
    ],
    "default": {"content": "I do not know."},
}


def test_the_test_split_runs_on_its_own_world_and_says_so(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    with running_scripted_server(TEST_SPLIT_SCRIPT) as (url, _state):
        env = {**os.environ, "PILOTHOUSE_HOME": str(tmp_path / "home"),
               "PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": url,
               "MAX_CONTEXT_TOKENS": "8192"}
        done = pilothouse("eval", "--split", "test", "--only", "tw-broken-now-a", "--report",
                          str(report), env=env)

    assert done.returncode == 0, done.stderr
    assert "pass tw-broken-now-a" in done.stderr
    assert "(test split, world tidewater)" in done.stdout
    written = json.loads(report.read_text())
    assert (written["meta"]["split"], written["meta"]["world"]) == ("test", "tidewater")
    assert [c["id"] for c in written["cases"]] == ["tw-broken-now-a"]
