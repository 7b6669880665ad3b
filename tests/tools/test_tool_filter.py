"""Read-only mode and tool filters, the same on every MCP tool server (argocd, github, shell, rag).

Each server is built as its package builds it and listed and called through the real MCP client;
Argo CD and GitHub answer from their sandboxes over real HTTP on 127.0.0.1. The command line and
an agent's launch parameters are exercised through real stdio child processes.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.sandbox.argocd import RunningSandbox
from pilothouse.sandbox.github import RunningGitHubSandbox
from pilothouse.tools.argocd import build_argocd_server
from pilothouse.tools.argocd.connection import stdio_parameters as argocd_stdio
from pilothouse.tools.github import build_github_server
from pilothouse.tools.rag.embeddings import MiniLMEmbeddings
from pilothouse.tools.rag.index import CodeIndex
from pilothouse.tools.rag.server import build_rag_server
from pilothouse.tools.shell import build_shell_server
from pilothouse.tools.shell.connection import shell_stdio_parameters
from pilothouse.tools.tool_filter import ToolFilter, apply_tool_filter, cli_arguments, filter_for
from pilothouse.tools.tool_server import ToolServer

SERVERS = ("argocd", "github", "shell", "rag")


@dataclass(frozen=True)
class ServerCase:
    """One server: how to build it with all its tools, and which of them write."""

    name: str
    build: Callable[[], ToolServer]
    writing: frozenset[str]
    #: A tool that reads, and arguments with which calling it succeeds.
    reader: tuple[str, dict[str, Any]]


def _argocd_settings(fleet: RunningSandbox, home: Path, **changes: Any) -> Settings:
    return dataclasses.replace(
        Settings(argocd_url=fleet.url, argocd_token=fleet.token, home=home,
                 argocd_read_only=False), **changes)


@pytest.fixture(params=SERVERS)
def case(request: pytest.FixtureRequest, tmp_path: Path) -> ServerCase:
    name: str = request.param
    if name == "argocd":
        fleet: RunningSandbox = request.getfixturevalue("argocd")
        settings = _argocd_settings(fleet, tmp_path)
        return ServerCase(name, lambda: build_argocd_server(settings),
                          frozenset({"sync_application", "rollback_application",
                                     "run_resource_action"}),
                          ("list_clusters", {"page_size": 1}))
    if name == "github":
        hub: RunningGitHubSandbox = request.getfixturevalue("github")
        return ServerCase(name, lambda: build_github_server(hub.url, hub.token, timeout=10),
                          frozenset(), ("list_issues", {"owner": "acme-corp",
                                                        "repo": "payments-api", "per_page": 1}))
    if name == "shell":
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        return ServerCase(name, lambda: build_shell_server(workspace, approval_secret="filters"),
                          frozenset({"run_command"}), ("check_command", {"command": "ls"}))
    model: MiniLMEmbeddings = request.getfixturevalue("embeddings")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("def main() -> None:\n    print('hello')\n")
    store = tmp_path / "store"
    return ServerCase(name, lambda: build_rag_server(store, root, index=CodeIndex(store, model),
                                                     warm_up=False),
                      frozenset({"index_directory"}), ("find_named_code", {"question": "main"}))


async def listed(server: ToolServer) -> dict[str, Any]:
    async with Client(server, mode="legacy") as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error is True
    (block,) = result.content
    assert isinstance(block, TextContent)
    assert isinstance(result.structured_content, dict)
    assert result.structured_content["error"] in block.text  # the view says it in words
    return result.structured_content


async def test_the_annotations_say_which_tools_write(case: ServerCase) -> None:
    tools = await listed(case.build())
    for tool in tools.values():
        assert tool.annotations is not None, tool.name
        assert tool.annotations.read_only_hint is (tool.name not in case.writing), tool.name
    assert case.writing <= tools.keys()
    for name in case.writing:
        assert tools[name].annotations.destructive_hint is not None


async def test_read_only_lists_no_writing_tool_and_a_hidden_one_is_unknown(
        case: ServerCase) -> None:
    server = case.build()
    everything = {tool.name for tool in server.registered_tools()}
    hidden = apply_tool_filter(server, ToolFilter(read_only=True))
    assert set(hidden) == set(case.writing)
    tools = await listed(server)
    assert set(tools) == everything - case.writing
    assert all(tool.annotations.read_only_hint is True for tool in tools.values())
    async with Client(server, mode="legacy") as client:
        assert (await client.call_tool(*case.reader)).is_error is False
        for name in case.writing:
            payload = error_of(await client.call_tool(name, {}))
            assert payload["kind"] == "UserInputError" and name in payload["error"]
            assert case.reader[0] in payload["suggestion"] and name not in payload["suggestion"]


async def test_tools_limits_the_list_and_exclude_tools_removes(case: ServerCase) -> None:
    only = case.build()
    apply_tool_filter(only, ToolFilter(tools=(case.reader[0],)))
    assert set(await listed(only)) == {case.reader[0]}

    without = case.build()
    everything = {tool.name for tool in without.registered_tools()}
    apply_tool_filter(without, ToolFilter(exclude_tools=(case.reader[0],)))
    assert set(await listed(without)) == everything - {case.reader[0]}
    async with Client(without, mode="legacy") as client:
        payload = error_of(await client.call_tool(*case.reader))
    assert payload["kind"] == "UserInputError" and case.reader[0] in payload["error"]


async def test_an_unknown_name_is_refused_listing_the_real_ones(case: ServerCase) -> None:
    for chosen in (ToolFilter(tools=(case.reader[0], "delete_everything")),
                   ToolFilter(exclude_tools=("delete_everything",))):
        server = case.build()
        with pytest.raises(ConfigurationError) as refused:
            apply_tool_filter(server, chosen)
        assert "delete_everything" in refused.value.message
        assert case.reader[0] in (refused.value.hint or "")
        # Refused before anything changed: every tool is still there.
        assert {t.name for t in server.registered_tools()} >= {case.reader[0], *case.writing}


async def test_read_only_refuses_a_writing_tool_named_in_tools(case: ServerCase) -> None:
    for name in case.writing:
        with pytest.raises(ConfigurationError) as refused:
            apply_tool_filter(case.build(), ToolFilter(read_only=True, tools=(name,)))
        assert name in refused.value.message and "read-only" in refused.value.message


async def test_argocd_read_only_is_the_same_mechanism(argocd: RunningSandbox,
                                                      tmp_path: Path) -> None:
    default = Settings(argocd_url=argocd.url, argocd_token=argocd.token, home=tmp_path)
    assert default.argocd_read_only is True
    assert "sync_application" not in await listed(build_argocd_server(default))
    with pytest.raises(ConfigurationError) as refused:
        build_argocd_server(dataclasses.replace(default, mcp_tools={
            "argocd": ("sync_application",)}))
    assert "ARGOCD_READ_ONLY" in refused.value.message
    # ARGOCD_READ_ONLY=false does not override the general read-only mode.
    general = _argocd_settings(argocd, tmp_path, mcp_read_only=True)
    assert "sync_application" not in await listed(build_argocd_server(general))


def test_settings_read_the_filters_per_server() -> None:
    settings = Settings.from_env({
        "PILOTHOUSE_MCP_READ_ONLY": "true",
        "PILOTHOUSE_MCP_GITHUB_TOOLS": "list_issues, search_issues",
        "PILOTHOUSE_MCP_SHELL_EXCLUDE_TOOLS": "check_command",
    })
    assert settings.mcp_read_only is True
    assert settings.mcp_tools == {"github": ("list_issues", "search_issues")}
    assert settings.mcp_exclude_tools == {"shell": ("check_command",)}
    assert filter_for(settings, "github").tools == ("list_issues", "search_issues")
    assert cli_arguments(settings, "shell") == ["--read-only", "--exclude-tools",
                                                "check_command"]
    with pytest.raises(ConfigurationError) as refused:
        Settings.from_env({"PILOTHOUSE_MCP_GITLAB_TOOLS": "x"})
    assert "ARGOCD" in (refused.value.hint or "")


async def test_an_agent_launch_passes_the_filters_to_the_server(
        argocd: RunningSandbox, tmp_path: Path) -> None:
    settings = _argocd_settings(argocd, tmp_path, mcp_exclude_tools={
        "argocd": ("list_projects",)})
    async with Client(argocd_stdio(settings), mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "sync_application" in names and "list_projects" not in names

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    shell = shell_stdio_parameters(workspace, approval_secret="filters",
                                   extra_args=cli_arguments(
                                       Settings(mcp_read_only=True), "shell"))
    async with Client(shell, mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == {"check_command"}


@pytest.mark.parametrize("module", ["argocd", "github", "shell", "rag"])
def test_the_command_refuses_an_unknown_name_at_start_up(module: str, tmp_path: Path) -> None:
    extra = ["--workspace", str(tmp_path)] if module == "shell" else []
    extra += ["--root", str(tmp_path), "--home", str(tmp_path)] if module == "rag" else []
    done = subprocess.run(
        [sys.executable, "-m", f"pilothouse.tools.{module}", *extra,
         "--exclude-tools", "delete_everything"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PILOTHOUSE_HOME": str(tmp_path)})
    assert done.returncode == 2, done.stderr
    assert "delete_everything" in done.stderr and "What to do" in done.stderr
    assert "Traceback" not in done.stderr
