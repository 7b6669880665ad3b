"""The code index stays inside its workspace: through the real MCP client, a real ChromaDB store.

A canary folder beside the workspace holds a secret; every way of pointing the index at it
(an absolute path, `..`, a symlink inside the workspace, a file that became a symlink after it
was indexed) must leave the secret out of every answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from pilothouse.tools.rag.embeddings import MiniLMEmbeddings
from pilothouse.tools.rag.index import CodeIndex
from pilothouse.tools.rag.server import build_rag_server

SECRET = "CANARY-7f3d9a41-do-not-leak"


def payload(result: CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def everything(result: CallToolResult) -> str:
    """All a caller receives: the rendered view and the structured result."""
    return json.dumps([b.model_dump() for b in result.content]) + json.dumps(
        result.structured_content)


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    folder = tmp_path / "canary"
    folder.mkdir()
    (folder / "secret.txt").write_text(f"def vault_password():\n    return '{SECRET}'\n")
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "billing.py").write_text(
        "def invoice_total(lines):\n    return sum(line['amount'] for line in lines)\n")
    return root.resolve()


@pytest.fixture
def server(tmp_path: Path, workspace: Path, embeddings: MiniLMEmbeddings) -> MCPServer:
    index = CodeIndex(tmp_path / "store", embeddings)
    return build_rag_server(tmp_path / "store", workspace, index=index, warm_up=False)


@pytest.mark.parametrize("spelling", ["absolute", "dotdot", "symlink", "missing"])
async def test_index_directory_refuses_a_folder_outside_the_workspace(
    server: MCPServer, workspace: Path, canary: Path, tmp_path: Path, spelling: str,
) -> None:
    (workspace / "link").symlink_to(canary, target_is_directory=True)
    path = {"absolute": str(canary), "dotdot": "../canary", "symlink": "link",
            "missing": str(tmp_path / "nowhere")}[spelling]
    async with Client(server) as client:
        refused = await client.call_tool("index_directory", {"path": path})
        after = await client.call_tool("retrieve_code_context",
                                       {"query": "vault password secret"})
    assert refused.is_error
    error = payload(refused)
    assert error["kind"] == "UserInputError"
    assert f"'{path}' is outside the workspace ({workspace})" in error["error"]
    assert f"PILOTHOUSE_WORKSPACE={path}" in error["suggestion"]
    assert "does not exist" not in error["error"]  # no oracle for what lies outside
    # The searched root is still the workspace, and the secret is in no answer.
    assert payload(after)["root"] == str(workspace)
    assert SECRET not in everything(refused) + everything(after)


async def test_a_folder_inside_the_workspace_is_indexed_relative_to_it(
    server: MCPServer, workspace: Path,
) -> None:
    async with Client(server) as client:
        report = payload(await client.call_tool("index_directory", {"path": "src"}))
        found = payload(await client.call_tool("retrieve_code_context",
                                               {"query": "invoice total"}))
    assert report["root"] == str(workspace / "src")
    assert found["root"] == report["root"] and found["hits"][0]["path"] == "billing.py"


async def test_links_inside_the_workspace_that_point_outside_are_never_read(
    server: MCPServer, workspace: Path, canary: Path,
) -> None:
    (workspace / "src" / "vault.txt").symlink_to(canary / "secret.txt")
    (workspace / "outside").symlink_to(canary, target_is_directory=True)
    async with Client(server) as client:
        report = payload(await client.call_tool("index_directory", {}))
        retrieved = await client.call_tool("retrieve_code_context",
                                           {"query": "vault_password secret", "k": 20})
        named = await client.call_tool("find_named_code",
                                       {"question": "What does src/vault.txt hold?"})
    assert report["files_indexed"] == 1  # billing.py; the link is counted as skipped
    assert any("symlink" in reason for reason in report["skipped"])
    assert SECRET not in everything(retrieved) + everything(named)


async def test_a_file_that_became_a_link_after_indexing_is_not_quoted(
    server: MCPServer, workspace: Path, canary: Path,
) -> None:
    source = workspace / "src" / "billing.py"
    async with Client(server) as client:
        await client.call_tool("index_directory", {})
        before = payload(await client.call_tool("find_named_code",
                                                {"question": "What does invoice_total do?"}))
        source.unlink()
        source.symlink_to(canary / "secret.txt")
        after = await client.call_tool("find_named_code",
                                       {"question": "What does invoice_total do?"})
    assert "def invoice_total" in before["items"][0]["text"]  # the excerpt is read from disk
    assert payload(after)["items"][0]["text"] == ""
    assert SECRET not in everything(after)
