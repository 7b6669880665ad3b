"""One conformance suite every MCP tool server runs: a failed call looks the same everywhere.

Each server (argocd, github, shell, rag) is built as its package builds it and called through
the real MCP client; Argo CD and GitHub answer from their sandboxes over real HTTP on 127.0.0.1.
Whatever fails (an unknown tool, arguments of the wrong type, a request the tool refuses) must
come back flagged `is_error`, as compact JSON `{error, kind, suggestion, ...}` whose text and
structured content agree, with no SDK prefix, validation dump or traceback.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from pilothouse.config import Settings
from pilothouse.sandbox.argocd import RunningSandbox
from pilothouse.sandbox.argocd.server import running_app
from pilothouse.sandbox.github import RunningGitHubSandbox
from pilothouse.tools.argocd import build_argocd_server
from pilothouse.tools.github import build_github_server
from pilothouse.tools.mcp_connect import as_langchain_tool
from pilothouse.tools.rag.embeddings import MiniLMEmbeddings
from pilothouse.tools.rag.index import CodeIndex
from pilothouse.tools.rag.server import build_rag_server
from pilothouse.tools.shell import build_shell_server
from pilothouse.tools.tool_server import ERROR_KEYS

Call = tuple[str, dict[str, Any]]
#: Every tool server package; `test_every_server_is_covered` keeps this list whole.
SERVERS = ("argocd", "github", "shell", "rag")


@dataclass(frozen=True)
class ServerCase:
    """One server under test and the calls that exercise it."""

    name: str
    build: Callable[[], MCPServer[Any]]
    #: A call that succeeds.
    success: Call
    #: A call whose argument `bad_field` has the wrong type.
    bad_arguments: Call
    bad_field: str
    #: A call the tool refuses (shell: one missing its command), and the `kind` it must name.
    refused: Call
    refused_kind: str


@pytest.fixture(params=SERVERS)
def case(request: pytest.FixtureRequest, tmp_path: Path) -> ServerCase:
    name: str = request.param
    if name == "argocd":
        fleet: RunningSandbox = request.getfixturevalue("argocd")
        settings = Settings(argocd_url=fleet.url, argocd_token=fleet.token, home=tmp_path)
        return ServerCase(
            name, lambda: build_argocd_server(settings),
            success=("list_clusters", {"page_size": 1}),
            bad_arguments=("list_projects", {"page": "first"}), bad_field="page",
            refused=("get_application", {"name": "Not A Valid Name!"}),
            refused_kind="UserInputError")
    if name == "github":
        hub: RunningGitHubSandbox = request.getfixturevalue("github")
        return ServerCase(
            name, lambda: build_github_server(hub.url, hub.token, timeout=10),
            success=("list_issues", {"owner": "acme-corp", "repo": "payments-api",
                                     "per_page": 1}),
            bad_arguments=("get_pull_request", {"owner": "acme-corp", "repo": "infra-live",
                                                "number": "the latest"}), bad_field="number",
            refused=("get_pull_request", {"owner": "acme-corp", "repo": "no-such-repo",
                                          "number": 1}),
            refused_kind="UserInputError")
    if name == "shell":
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        return ServerCase(
            name, lambda: build_shell_server(workspace, approval_secret="conformance"),
            success=("check_command", {"command": "ls"}),
            bad_arguments=("run_command", {"command": "ls", "timeout_seconds": "soon"}),
            bad_field="timeout_seconds",
            refused=("run_command", {}), refused_kind="UserInputError")
    model: MiniLMEmbeddings = request.getfixturevalue("embeddings")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("def main() -> None:\n    print('hello')\n")
    store = tmp_path / "store"
    return ServerCase(
        name, lambda: build_rag_server(store, root, index=CodeIndex(store, model),
                                       warm_up=False),
        success=("find_named_code", {"question": "main"}),
        bad_arguments=("retrieve_code_context", {"query": "main", "k": "many"}), bad_field="k",
        refused=("index_directory", {"path": str(tmp_path / "gone")}),
        refused_kind="UserInputError")


@asynccontextmanager
async def session(case: ServerCase) -> AsyncIterator[Client]:
    async with Client(case.build(), mode="legacy") as client:
        yield client


def tool_error(result: CallToolResult) -> dict[str, Any]:
    """The payload of `result`, after checking it is a tool error in the one shape."""
    assert result.is_error is True
    (block,) = result.content
    assert isinstance(block, TextContent)
    payload = result.structured_content
    assert isinstance(payload, dict)
    assert set(ERROR_KEYS) <= payload.keys()
    # The text says the same in sentences (`tools.views.error_view`), suggestion included.
    assert payload["error"] in block.text and payload["suggestion"] in block.text
    assert all(isinstance(payload[key], str) and payload[key] for key in ERROR_KEYS)
    for leak in ("Error executing tool", "Traceback", "errors.pydantic.dev"):
        assert leak not in block.text
    return payload  # type: ignore[no-any-return]


async def test_a_successful_call_is_not_flagged(case: ServerCase) -> None:
    async with session(case) as client:
        result = await client.call_tool(*case.success)
    assert result.is_error is False, result.content


async def test_an_unknown_tool_is_a_tool_error_naming_the_real_ones(case: ServerCase) -> None:
    async with session(case) as client:
        result = await client.call_tool("delete_everything", {})
    payload = tool_error(result)
    assert payload["kind"] == "UserInputError" and "delete_everything" in payload["error"]
    assert case.success[0] in payload["suggestion"]


async def test_arguments_of_the_wrong_type_name_the_field(case: ServerCase) -> None:
    async with session(case) as client:
        result = await client.call_tool(*case.bad_arguments)
    payload = tool_error(result)
    assert payload["kind"] == "UserInputError"
    assert case.bad_field in payload["error"] and case.bad_arguments[0] in payload["error"]


async def test_a_refused_request_is_a_tool_error_that_says_what_to_do(case: ServerCase) -> None:
    async with session(case) as client:
        result = await client.call_tool(*case.refused)
    assert tool_error(result)["kind"] == case.refused_kind


async def test_the_agent_sees_a_tool_error_as_an_error_message(case: ServerCase) -> None:
    async with session(case) as client:
        tool, arguments = case.refused
        listed = {t.name: t for t in (await client.list_tools()).tools}
        bridge = as_langchain_tool(client, tool, listed[tool].description or "",
                                   listed[tool].input_schema)
        message = await bridge.ainvoke({"type": "tool_call", "id": "call-1", "name": tool,
                                        "args": arguments})
    assert isinstance(message, ToolMessage) and message.status == "error"
    assert isinstance(message.artifact, dict) and message.artifact["kind"] == case.refused_kind
    assert message.artifact["suggestion"] in str(message.content)


def _wrong_shapes(request: Request) -> JSONResponse:
    return JSONResponse(["an Argo CD that answers lists where it should answer objects"])


@pytest.fixture
def broken_argocd(tmp_path: Path) -> Iterator[Settings]:
    """An Argo CD URL whose server answers every request with a document of the wrong shape."""
    app = Starlette(routes=[Route("/{path:path}", _wrong_shapes)])
    with running_app(app) as url:
        yield Settings(argocd_url=url, argocd_token="conformance-token", home=tmp_path)


async def test_a_crash_is_an_internal_error_without_its_details(
        broken_argocd: Settings, caplog: pytest.LogCaptureFixture) -> None:
    server = build_argocd_server(broken_argocd)
    async with Client(server, mode="legacy") as client:
        result = await client.call_tool("get_application", {"name": "payments-api"})
    payload = tool_error(result)
    assert payload["kind"] == "InternalError" and "get_application" in payload["error"]
    assert "AttributeError" not in json.dumps(payload)
    assert any(r.exc_info for r in caplog.records)  # the details stay in the server log


def test_every_server_is_covered() -> None:
    """The suite's parameters name every tool server package."""
    tools = Path(__file__).parents[2] / "src" / "pilothouse" / "tools"
    packages = {p.name for p in tools.iterdir() if (p / "__main__.py").exists()}
    assert packages == set(SERVERS)

