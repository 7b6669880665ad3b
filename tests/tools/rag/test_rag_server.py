"""The RAG MCP server through the real MCP client, in process, over a real ChromaDB store."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import numpy as np
import numpy.typing as npt
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from pilothouse.tools.rag.answers import MAX_ANSWER_CHARS, render_hits
from pilothouse.tools.rag.embeddings import MiniLMEmbeddings
from pilothouse.tools.rag.index import CodeIndex, Hit
from pilothouse.tools.rag.server import build_rag_server


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def payload(result: CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    assert text_of(result).strip()  # the rendered view (tools.rag.views)
    return result.structured_content


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git checkout: indexed, unasked, once a question needs its code."""
    root = tmp_path / "svc"
    (root / ".git").mkdir(parents=True)
    (root / "limits.py").write_text(
        '"""Rate limiting for the public API."""\n\n\n'
        "def allow_request(client_id: str, window: dict[str, int], limit: int = 100) -> bool:\n"
        '    """Token bucket: refuse a client that made more than `limit` calls this minute."""\n'
        "    used = window.get(client_id, 0)\n"
        "    window[client_id] = used + 1\n"
        "    return used < limit\n"
    )
    (root / "notes.md").write_text("# Notes\n\nThe on-call rota lives in the wiki.\n")
    return root.resolve()


@pytest.fixture
def other_repo(repo: Path) -> Path:
    """A folder inside the workspace (`repo`): the server indexes nothing outside it."""
    other = repo / "infra"
    other.mkdir()
    (other / "backup.sh").write_text("#!/bin/sh\nbackup_db() {\n  pg_dump prod > /b/db.sql\n}\n")
    return other.resolve()


@pytest.fixture
def big_repo(tmp_path: Path) -> Path:
    big = tmp_path / "big"
    (big / ".git").mkdir(parents=True)
    for n in range(8):
        body = "".join(f"    step_{i} = compute('{'x' * 60}', {i})\n" for i in range(55))
        (big / f"job_{n}.py").write_text(f"def run_job_{n}():\n{body}    return step_0\n")
    return big


ServerFor = Callable[[Path], MCPServer]


@pytest.fixture
def server_for(tmp_path: Path, embeddings: MiniLMEmbeddings) -> ServerFor:
    def make(root: Path) -> MCPServer:
        index = CodeIndex(tmp_path / "store", embeddings)
        # No start-up indexing here: these tests count what their own calls index.
        return build_rag_server(tmp_path / "store", root, index=index, warm_up=False)

    return make


async def test_tools_and_their_schemas(server_for: ServerFor, repo: Path) -> None:
    async with Client(server_for(repo)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"index_directory", "retrieve_code_context", "find_named_code"}
    retrieve = tools["retrieve_code_context"].input_schema
    assert retrieve["required"] == ["query"]
    assert set(retrieve["properties"]) == {"query", "k", "path_filter"}
    assert "ctx" not in tools["index_directory"].input_schema["properties"]


async def test_find_named_code_returns_the_named_symbol_with_its_lines(
    server_for: ServerFor, repo: Path
) -> None:
    async with Client(server_for(repo)) as client:
        before = payload(await client.call_tool("find_named_code", {"question": "x"}))
        await client.call_tool("index_directory", {})
        found = payload(await client.call_tool(
            "find_named_code", {"question": "Why does allow_request refuse clients?"}))
    assert before == {"items": [], "note": "not indexed yet"}
    top = found["items"][0]
    assert top["path"] == "limits.py" and top["symbol"].endswith("allow_request")
    assert "def allow_request" in top["text"] and top["start_line"] <= 4 <= top["end_line"]


async def test_retrieve_indexes_the_default_root_on_first_use(
    server_for: ServerFor, repo: Path
) -> None:
    async with Client(server_for(repo)) as client:
        result = await client.call_tool(
            "retrieve_code_context", {"query": "refuse clients that call too often", "k": 2}
        )
    assert not result.is_error
    body = payload(result)
    assert body["root"] == str(repo)
    top = body["hits"][0]
    assert (top["path"], top["symbol"], top["lines"]) == ("limits.py", "allow_request", "1-8")
    assert "window[client_id] = used + 1" in top["text"]


async def test_a_retrieval_for_a_name_says_every_file_that_holds_it(
    server_for: ServerFor, big_repo: Path
) -> None:
    # `run_job_3` is defined in one file, called in another and named in a note (beside
    # `run_job_30`, another name): passages are the closest few, the files are all of them.
    (big_repo / "runner.py").write_text("from job_3 import run_job_3\n\nrun_job_3()\n")
    (big_repo / "NOTES.md").write_text("Retry run_job_3 by hand; run_job_30 is another.\n")
    async with Client(server_for(big_repo)) as client:
        await client.call_tool("index_directory", {})
        result = await client.call_tool(
            "retrieve_code_context", {"query": "which files use run_job_3?", "k": 3})
        plain = payload(await client.call_tool(
            "retrieve_code_context", {"query": "how is a job run", "k": 3}))
    body = payload(result)
    assert body["occurrences"] == [{"name": "run_job_3", "total": 3,
                                    "files": ["NOTES.md", "job_3.py", "runner.py"]}]
    assert ("`run_job_3` occurs in 3 files: `NOTES.md`, `job_3.py`, `runner.py`."
            in text_of(result))
    assert "occurrences" not in plain  # a question naming no identifier


async def test_retrieval_returns_at_least_three_passages(
    server_for: ServerFor, big_repo: Path
) -> None:
    # The passage that answers is often the second or third; one asked for is three.
    async with Client(server_for(big_repo)) as client:
        one = payload(await client.call_tool(
            "retrieve_code_context", {"query": "run job 3", "k": 1}))
        six = payload(await client.call_tool(
            "retrieve_code_context", {"query": "run job 3", "k": 6}))
    assert len(one["hits"]) == 3
    assert len(six["hits"]) == 6


async def test_index_directory_reports_and_streams_progress(
    server_for: ServerFor, repo: Path
) -> None:
    updates: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total))

    async with Client(server_for(repo)) as client:
        first = payload(
            await client.call_tool("index_directory", {}, progress_callback=on_progress)
        )
        again = payload(await client.call_tool("index_directory", {"path": str(repo)}))
    assert (first["files_indexed"], first["files_removed"]) == (2, 0)
    assert first["chunks"] == first["total_chunks"] >= 2
    assert (again["files_indexed"], again["files_skipped_unchanged"]) == (0, 2)
    assert updates and updates[-1] == (2, 2)


async def test_index_directory_switches_the_searched_root(
    server_for: ServerFor, repo: Path, other_repo: Path
) -> None:
    other = other_repo
    async with Client(server_for(repo)) as client:
        await client.call_tool("index_directory", {"path": str(other)})
        body = payload(await client.call_tool("retrieve_code_context", {"query": "dump the db"}))
    assert body["root"] == str(other)
    assert [h["path"] for h in body["hits"]] == ["backup.sh"]


async def test_errors_come_back_as_tool_errors_that_say_what_to_do(
    server_for: ServerFor, repo: Path, tmp_path: Path
) -> None:
    async with Client(server_for(repo)) as client:
        missing = await client.call_tool("index_directory", {"path": str(repo / "gone")})
        bad_filter = await client.call_tool(
            "retrieve_code_context", {"query": "limits", "path_filter": "*.java"}
        )
    assert missing.is_error and bad_filter.is_error
    error = payload(missing)
    assert error["kind"] == "UserInputError" and "does not exist" in error["error"]
    assert error["suggestion"]
    assert "path_filter" in payload(bad_filter)["error"]


async def test_answers_stay_within_the_size_bound_for_large_k(
    server_for: ServerFor, big_repo: Path
) -> None:
    async with Client(server_for(big_repo)) as client:
        result = await client.call_tool("retrieve_code_context", {"query": "run a job", "k": 20})
    text = text_of(result)
    assert len(text) <= MAX_ANSWER_CHARS
    hits = payload(result)["hits"]
    assert len(hits) >= 5
    assert any("more lines]" in h["text"] for h in hits)


def test_render_hits_respects_the_budget_even_with_heavy_escaping() -> None:
    quote_heavy = '"\\' * 3000
    hits = [Hit(f"f{i}.py", 1, 80, "f", 0.5, quote_heavy) for i in range(10)]
    answer = render_hits("/r", "q", hits, budget=4000)
    assert len(answer) <= 4000
    body = json.loads(answer)
    assert body["omitted_hits"] == 10 - len(body["hits"])


class GatedEmbeddings(MiniLMEmbeddings):
    """The real model, but index writes (batches of several texts) wait for `gate`."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.writing = threading.Event()

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if len(texts) > 1:
            self.writing.set()
            self.gate.wait(timeout=60)
        return super().embed(texts)


async def test_start_up_indexes_in_the_background_and_retrieval_does_not_wait(
    tmp_path: Path, repo: Path
) -> None:
    gated = GatedEmbeddings()
    index = CodeIndex(tmp_path / "store", gated)
    server = build_rag_server(tmp_path / "store", repo, index=index, index_wait_seconds=0.2)
    async with Client(server) as client:
        # No tool was called: the server started indexing on its own.
        assert await anyio.to_thread.run_sync(gated.writing.wait, 60)
        during = payload(await client.call_tool("retrieve_code_context", {"query": "rate limit"}))
        # Nothing is indexed yet: the passages come from a keyword scan, and the note says so.
        assert [h["path"] for h in during["hits"]] == ["limits.py"]
        assert during["indexing"] == {"files_done": 0, "files_total": 2}
        assert "indexing 2 files: 0%" in during["note"] and "keyword scan" in during["note"]
        gated.gate.set()
        # Waits for the start-up run, then finds nothing left to do.
        report = payload(await client.call_tool("index_directory", {}))
        assert (report["files_indexed"], report["files_skipped_unchanged"]) == (0, 2)
        after = payload(await client.call_tool("retrieve_code_context", {"query": "rate limit"}))
    assert after["hits"][0]["path"] == "limits.py" and "indexing" not in after


async def test_a_retrieval_right_after_start_up_waits_for_a_small_repository(
    tmp_path: Path, repo: Path, embeddings: MiniLMEmbeddings
) -> None:
    index = CodeIndex(tmp_path / "store", embeddings)
    server = build_rag_server(tmp_path / "store", repo, index=index, index_wait_seconds=60)
    async with Client(server) as client:
        body = payload(await client.call_tool("retrieve_code_context", {"query": "rate limit"}))
    assert body["hits"][0]["path"] == "limits.py" and "indexing" not in body
