"""A newcomer's first question on the command line, with nothing configured, in a checkout.

`pilothouse ask` runs as a user runs it (a process of its own, the real DevOps agent with its
shell and RAG servers on the current folder); only the model is scripted. A question no
configured agent covers is answered by the supervisor in one model call, naming the agent that
would know more and its setting, and nothing is indexed; a question about the code starts the
index, and its progress reaches `--json` nested under the DevOps agent's call.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import json_lines, pilothouse

from pilothouse.testing.scripted_server import ScriptState, running_scripted_server
from pilothouse.tools.rag.embeddings import MiniLMEmbeddings
from pilothouse.tools.rag.index import CodeIndex

GENERAL = "In one short sentence: what is Argo CD?"
SENTENCE = "Argo CD is a declarative GitOps continuous delivery tool for Kubernetes."
CODE = "Which function in the code computes invoice totals?"

SCRIPT: dict[str, Any] = {"rules": [
    {"name": "direct", "when": {"tools_include": "answer_directly", "last_role": "user",
                                "last_contains": "what is Argo CD"},
     "reply": {"tool_calls": [{"name": "answer_directly", "arguments": {
         "about": "Argo CD", "answer": SENTENCE}}]}},
    {"name": "devops-call", "when": {"tools_include": "retrieve_code_context",
                                     "last_role": "user"},
     "reply": {"tool_calls": [{"name": "retrieve_code_context",
                               "arguments": {"query": "compute_invoice_total"}}]}},
    {"name": "devops-answer", "when": {"tools_include": "retrieve_code_context",
                                       "last_role": "tool"},
     "reply": {"content": "DEVOPS: it is in billing.py."}},
], "default": {"content": "No scripted answer."}}


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A small git checkout: the folder the person stands in."""
    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "billing"\n')
    (root / "billing.py").write_text(
        "def compute_invoice_total(lines):\n"
        "    return round(sum(line['amount'] for line in lines) * 1.2, 2)\n")
    return root.resolve()


def indexed(home: Path) -> list[str]:
    return CodeIndex(home / "rag", MiniLMEmbeddings()).indexed_roots()


def test_a_general_question_is_answered_by_the_supervisor_in_one_model_call(
    tmp_path: Path, model: tuple[str, ScriptState], checkout: Path,
) -> None:
    url, state = model
    before = len(state.requests)

    done = pilothouse(tmp_path / "home", url, "ask", "--json", GENERAL, cwd=checkout)

    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    assert [e["text"] for e in events if e["kind"] == "tool_call"] == ["answer_directly"]
    answer = next(e["text"] for e in events if e["kind"] == "answer")
    assert answer.startswith(SENTENCE)
    assert "argocd agent" in answer and "set ARGOCD_URL and ARGOCD_TOKEN" in answer
    # One model call in all: no sub-agent ran, and nothing was indexed.
    assert [r.rule for r in state.requests[before:]] == ["direct"]
    assert indexed(tmp_path / "home") == []


def test_a_code_question_starts_the_index_and_its_progress_shows_nested(
    tmp_path: Path, model: tuple[str, ScriptState], checkout: Path,
) -> None:
    done = pilothouse(tmp_path / "home", model[0], "ask", "--json", CODE, cwd=checkout)

    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    [ask] = [e for e in events if e["kind"] == "tool_call" and e["text"] == "ask_devops"]
    progress = [e for e in events if e["kind"] == "progress"]
    assert progress, events
    assert {(e["data"]["name"], e["data"]["agent"], e["data"]["parent_id"]) for e in progress} \
        == {("retrieve_code_context", "devops", ask["data"]["id"])}
    assert progress[0]["text"].startswith("indexing 2 files: ")
    assert "DEVOPS: it is in billing.py." in next(e["text"] for e in events
                                                  if e["kind"] == "answer")
    assert indexed(tmp_path / "home") == [str(checkout)]
