"""What the RAG server indexes without being asked, and what it answers while it cannot.

Only a code repository within the cap is indexed unasked (at start with `warm_up`, or for a
retrieval); the home directory and `/` never are. A retrieval never waits longer than its bound:
it answers from a keyword scan, says why, and streams the progress of a run that is going.
Through the real MCP client, over a real ChromaDB store.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import numpy as np
import numpy.typing as npt
import pytest
from mcp import Client
from mcp_types import CallToolResult

from pilothouse.tools.rag.embeddings import MiniLMEmbeddings
from pilothouse.tools.rag.files import survey
from pilothouse.tools.rag.index import CodeIndex
from pilothouse.tools.rag.runs import Indexer
from pilothouse.tools.rag.server import build_rag_server
from pilothouse.tools.workspace_jail import WorkspaceJail

LIMITS = ("def allow_request(client_id, window, limit=100):\n"
          "    \"\"\"Refuse a client over its rate limit.\"\"\"\n"
          "    return window.get(client_id, 0) < limit\n")


def payload(result: CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def folder(root: Path, *, marker: str | None = None, files: int = 1) -> Path:
    """`limits.py` and `files - 1` more modules; `marker` (".git", "pyproject.toml") if given."""
    root.mkdir(parents=True)
    if marker == ".git":
        (root / ".git").mkdir()
    elif marker:
        (root / marker).write_text("")
    (root / "limits.py").write_text(LIMITS)
    for n in range(files - 1 - (marker not in (None, ".git"))):
        (root / f"job_{n}.py").write_text(f"def job_{n}():\n    return {n}\n")
    return root.resolve()


def test_a_repository_is_a_checkout_or_a_project_and_never_home_or_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)  # dotfiles kept in git
    monkeypatch.setenv("HOME", str(home))
    checkout = folder(home / "src" / "api", marker=".git")
    (checkout / "pkg").mkdir()
    project = folder(home / "tools", marker="pyproject.toml")
    notes = folder(home / "notes")

    assert survey(checkout).repository == checkout
    assert survey(checkout / "pkg").repository == checkout  # inside a checkout
    assert survey(project).repository == project
    # Neither the home directory (though it is a checkout), nor a folder under it that is
    # no repository of its own, nor the filesystem root.
    for nowhere in (home, notes, Path("/")):
        found = survey(nowhere)
        assert found.repository is None and not found.indexable
        assert "is not a code repository" in found.reason()


def test_the_cap_counts_what_would_be_indexed_and_no_further(tmp_path: Path) -> None:
    big = folder(tmp_path / "big", marker=".git", files=8)
    (big / "node_modules" / "dep").mkdir(parents=True)  # pruned: never counted
    (big / "node_modules" / "dep" / "index.js").write_text("x\n")

    assert survey(big, max_files=8).indexable
    over = survey(big, max_files=3)
    assert (over.files, over.indexable) == (4, False)  # counting stopped past the cap
    assert "more than 3 files to index (PILOTHOUSE_INDEX_MAX_FILES)" in over.reason()


@pytest.mark.parametrize(("marker", "files", "indexed"), [
    (".git", 2, True), (None, 2, False), (".git", 5, False)])
async def test_warm_up_indexes_only_a_repository_within_the_cap(
    tmp_path: Path, embeddings: MiniLMEmbeddings, marker: str | None, files: int,
    indexed: bool,
) -> None:
    root = folder(tmp_path / "ws", marker=marker, files=files)
    index = CodeIndex(tmp_path / "store", embeddings)
    indexer = Indexer(index, WorkspaceJail.at(root), max_files=3)
    async with anyio.create_task_group() as tasks:
        indexer.tasks = tasks
        await indexer.warm_up()  # returns once it decided (and its run, if any, ended)

    assert index.indexed_roots() == ([str(root)] if indexed else [])


class GatedEmbeddings(MiniLMEmbeddings):
    """The real model, but index writes (batches of several texts) wait for `gate`."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if len(texts) > 1:
            self.gate.wait(timeout=60)
        return super().embed(texts)


async def test_a_retrieval_answers_from_a_scan_while_the_index_it_started_is_built(
    tmp_path: Path,
) -> None:
    root = folder(tmp_path / "svc", marker=".git", files=2)
    gated = GatedEmbeddings()
    server = build_rag_server(tmp_path / "store", root, index=CodeIndex(tmp_path / "store",
                                                                        gated),
                              warm_up=False, index_wait_seconds=0.5)
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with Client(server) as client:
        during = payload(await client.call_tool(
            "retrieve_code_context", {"query": "rate limit"}, progress_callback=on_progress))
        gated.gate.set()
        report = payload(await client.call_tool("index_directory", {}))
        after = payload(await client.call_tool("retrieve_code_context", {"query": "rate limit"}))

    # The question started the run, saw its progress, and did not wait for it.
    assert updates and updates[0] == (0, 2, "indexing 2 files: 0%")
    assert during["indexing"] == {"files_done": 0, "files_total": 2}
    assert [h["path"] for h in during["hits"]] == ["limits.py"]
    assert "keyword scan" in during["note"]
    # The run went on after the call returned; the next question has the whole index.
    assert report["files_indexed"] + report["files_skipped_unchanged"] == 2
    assert after["hits"][0]["symbol"] == "allow_request" and "note" not in after


async def test_over_the_cap_nothing_is_indexed_and_index_directory_says_what_to_do(
    tmp_path: Path, embeddings: MiniLMEmbeddings,
) -> None:
    root = folder(tmp_path / "mono", marker=".git", files=5)
    index = CodeIndex(tmp_path / "store", embeddings)
    server = build_rag_server(tmp_path / "store", root, index=index, max_files=3)
    async with Client(server) as client:
        found = payload(await client.call_tool("retrieve_code_context", {"query": "rate limit"}))
        refused = await client.call_tool("index_directory", {})

    assert [h["path"] for h in found["hits"]] == ["limits.py"]
    assert "more than 3 files" in found["note"] and "indexing" not in found
    assert refused.is_error
    error = payload(refused)
    assert "more than 3 files to index" in error["error"]
    assert f"pilothouse index {root}" in error["suggestion"]
    assert index.indexed_roots() == []


async def test_outside_a_repository_the_scan_leaves_hidden_files_alone(
    tmp_path: Path, embeddings: MiniLMEmbeddings,
) -> None:
    root = folder(tmp_path / "desk")
    (root / ".secrets").mkdir()
    (root / ".secrets" / "vault.txt").write_text("vault_password = 'CANARY-hidden'\n")
    (root / ".env").write_text("VAULT_PASSWORD=CANARY-hidden\n")
    server = build_rag_server(tmp_path / "store", root,
                              index=CodeIndex(tmp_path / "store", embeddings))
    async with Client(server) as client:
        found = await client.call_tool("retrieve_code_context", {"query": "vault_password"})

    assert "CANARY-hidden" not in str(payload(found)) + str(found.content)
    assert "is not a code repository" in payload(found)["note"]


async def test_an_index_from_an_earlier_session_is_brought_up_to_date_by_the_first_question(
    tmp_path: Path, embeddings: MiniLMEmbeddings,
) -> None:
    root = folder(tmp_path / "svc", marker=".git")
    index = CodeIndex(tmp_path / "store", embeddings)
    index.index_directory(root)  # an earlier session
    (root / "billing.py").write_text("def invoice_total(lines):\n    return sum(lines)\n")
    server = build_rag_server(tmp_path / "store", root, index=index, warm_up=False,
                              index_wait_seconds=60)
    async with Client(server) as client:
        found = payload(await client.call_tool("retrieve_code_context",
                                               {"query": "invoice_total"}))

    assert found["hits"][0]["path"] == "billing.py"
    assert "indexing" not in found and "note" not in found  # from the index, whole
