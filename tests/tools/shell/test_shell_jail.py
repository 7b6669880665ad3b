"""Allow-listed reads stay in the workspace jail: run_command through the real MCP client.

The server runs in bubblewrap with a canary folder beside the workspace. Each read-only tool,
pointed at the canary by an absolute path, `..`, `~`-free relative paths through a symlink, or
by a recursion that follows links, must wait for approval with the resolved path in its reason,
and print nothing of the canary.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from shell_sandbox import Sandbox

from pilothouse.tools.shell import check_command

pytestmark = pytest.mark.timeout(120)

CANARY_TEXT = "the canary is alive"


@pytest.fixture(scope="module", autouse=True)
def folder_link(sandbox: Sandbox) -> Iterator[None]:
    """`nest/up`: a link to the canary folder, one level down in the workspace."""
    nest = sandbox.workspace / "nest"
    nest.mkdir()
    (nest / "up").symlink_to(sandbox.canary_dir, target_is_directory=True)
    yield
    (nest / "up").unlink()
    nest.rmdir()


#: Hostile reads: (command, the path its reason must name), with {canary} the canary file,
#: {folder} its folder, {dotdot} the canary relative to the workspace, {up} that folder so.
CASES = {
    "cat absolute": ("cat {canary}", "{canary}"),
    "cat ..": ("cat {dotdot}", "{canary}"),
    "head through a file link": ("head -n 1 link_to_canary", "{canary}"),
    "tail through a folder link": ("tail nest/up/canary.txt", "{canary}"),
    "grep -r outside": ("grep -r alive {folder}", "{folder}"),
    "grep -rn ..": ("grep -rn alive {up}", "{folder}"),
    "ls outside": ("ls -la {folder}", "{folder}"),
    "ls a folder link": ("ls nest/up", "{folder}"),
    "find outside": ("find {folder} -name '*.txt'", "{folder}"),
    "wc through a glob": ("wc -l {up}/*", "{canary}"),
    "grep -R follows links": ("grep -R alive .", "{canary}"),
    "find -L follows links": ("find -L nest -name '*.txt'", "{folder}"),
}


def spelled(sandbox: Sandbox, template: str) -> str:
    dotdot = os.path.relpath(sandbox.canary, sandbox.workspace)
    return template.format(canary=sandbox.canary, folder=sandbox.canary_dir, dotdot=dotdot,
                           up=os.path.dirname(dotdot))


@pytest.mark.parametrize("name", list(CASES))
def test_reads_outside_the_workspace_wait_for_approval_naming_the_path(
    sandbox: Sandbox, name: str
) -> None:
    command, shown = (spelled(sandbox, t) for t in CASES[name])
    assert check_command(command, workspace=sandbox.workspace).action == "ask"
    result = sandbox.call(command)
    assert result["status"] == "needs_approval", result
    assert shown in result["reason"] and "outside the workspace" in result["reason"]
    assert result["exit_code"] is None and CANARY_TEXT not in str(result)


def test_recursive_reads_inside_the_workspace_run_and_do_not_follow_links_out(
    sandbox: Sandbox,
) -> None:
    # GNU grep -r and find do not follow links met while recursing: allowed, and blind to them.
    grep = sandbox.call("grep -rn --exclude=locked.txt readme .")
    find = sandbox.call("find . -name '*.txt' -not -path './.git/*'")
    assert grep["status"] == find["status"] == "ok", (grep, find)
    assert "README.md" in grep["stdout"] and "list.txt" in find["stdout"]
    assert CANARY_TEXT not in grep["stdout"] + find["stdout"]


def test_reading_file_names_from_a_file_asks(sandbox: Sandbox) -> None:
    result = sandbox.call("sort --files0-from=list.txt")
    assert result["status"] == "needs_approval"
    assert "--files0-from" in result["reason"]
