"""`pilothouse index PATH` and `pilothouse mcp rag`: the Typer entry points, run for real."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import typer
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import TextContent
from typer.testing import CliRunner

from pilothouse.tools.rag.cli import index_command, mcp_cli


@pytest.fixture
def cli() -> typer.Typer:
    """The commands mounted the way the main CLI mounts them."""
    app = typer.Typer()
    mcp = typer.Typer()
    mcp.add_typer(mcp_cli, name="rag")
    app.add_typer(mcp, name="mcp")
    app.command("index")(index_command)
    return app


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "ops"
    root.mkdir()
    (root / "rotate.py").write_text(
        "def rotate_credentials(vault, service: str) -> str:\n"
        '    """Issue a new database password for `service` and revoke the old one."""\n'
        "    new = vault.issue(service)\n"
        "    vault.revoke_previous(service)\n"
        "    return new\n"
    )
    (root / "README.md").write_text("# Ops\n\nScripts the platform team runs by hand.\n")
    return root.resolve()


def test_index_prints_a_summary_and_reindexes_incrementally(
    cli: typer.Typer, repo: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    home = tmp_path / "home"
    first = runner.invoke(cli, ["index", str(repo), "--home", str(home)])
    assert first.exit_code == 0, first.output
    assert "files indexed" in first.stdout and "chunks in index" in first.stdout
    assert (home / "rag").is_dir()
    (repo / "README.md").write_text("# Ops\n\nRunbooks and scripts.\n")
    second = runner.invoke(cli, ["index", str(repo), "--home", str(home)])
    assert second.exit_code == 0, second.output
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in second.stdout.splitlines() if line.count("│") == 3}
    assert rows["files indexed"] == "1" and rows["files unchanged"] == "1"


def test_index_of_a_missing_directory_exits_2_with_what_to_do(
    cli: typer.Typer, tmp_path: Path
) -> None:
    missing = str(tmp_path / "missing")
    result = CliRunner().invoke(cli, ["index", missing, "--home", str(tmp_path)])
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "does not exist" in message and "What to do:" in message


def test_home_defaults_to_the_configured_pilothouse_home(
    cli: typer.Typer, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PILOTHOUSE_HOME", str(tmp_path / "configured"))
    result = CliRunner().invoke(cli, ["index", str(repo)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "configured" / "rag").is_dir()


async def test_mcp_rag_serves_over_stdio_in_a_child_process(repo: Path, tmp_path: Path) -> None:
    launch = "from pilothouse.tools.rag.cli import mcp_cli; mcp_cli()"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", launch, "--root", str(repo), "--home", str(tmp_path / "home")],
    )
    async with Client(params) as client:
        # The server indexes its root at start-up; this waits for that run to finish.
        await client.call_tool("index_directory", {})
        result = await client.call_tool(
            "retrieve_code_context", {"query": "issue a new database password", "k": 1}
        )
    block = result.content[0]
    assert isinstance(block, TextContent) and not result.is_error
    body = result.structured_content
    assert body is not None and "rotate.py" in block.text
    assert body["hits"][0]["path"] == "rotate.py"
    assert body["hits"][0]["symbol"] == "rotate_credentials"
