"""`pilothouse mcp shell`: the Typer sub-app the main CLI mounts."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from pilothouse.tools.shell.cli import mcp_cli


def test_shell_command_is_registered_with_its_options() -> None:
    result = CliRunner().invoke(mcp_cli, ["shell", "--help"])
    assert result.exit_code == 0
    for option in ("--workspace", "--transport", "--policy-file", "--timeout"):
        assert option in result.output


def test_missing_workspace_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(mcp_cli, ["shell", "--workspace", str(tmp_path / "absent")])
    assert result.exit_code == 2
