"""Commands start without the agent stack: which modules a command loads, per `-X importtime`.

`pilothouse --help` used to import LangChain, LangGraph, the LangSmith tracers, ChromaDB, the
A2A SDK and every agent before it read its arguments, and so did each tool server's process.
Each command below runs in a process of its own under `python -X importtime`, whose report
names every module the process imported; a module of those libraries (or an agent) in it fails
the test. What it asserts is which modules load, not how long they take: the timings are
`bench/cli_latency.py`'s.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import CLEARED

from pilothouse.agents.registry import SPECIALISTS
from pilothouse.interfaces.cli_common import SPECIALIST_NAMES

#: Top-level packages a command that does not talk to a model must not load (prefixes).
AGENT_STACK = ("langchain", "langgraph", "langsmith", "chromadb", "a2a")
#: `importtime` reports one line per module it imported: self and cumulative microseconds, name.
_IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)\s*$", re.MULTILINE)
_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test_import_cost", "version": "0"}}}


def imported(report: str) -> set[str]:
    """Every module an `-X importtime` report names."""
    return set(_IMPORT_LINE.findall(report))


def agent_stack(modules: set[str], allowed: tuple[str, ...] = ()) -> list[str]:
    """The modules of the agent stack (and the agents) in `modules`, but those of `allowed`."""
    return sorted(m for m in modules
                  if (m.startswith(AGENT_STACK) and not m.startswith(allowed))
                  or m.split(".")[:2] == ["pilothouse", "agents"])


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED)}
    return {**env, "PILOTHOUSE_HOME": str(home), "PILOTHOUSE_WORKSPACE": str(home),
            # A hosted model without its key: `doctor` reports it and calls no network.
            "PILOTHOUSE_MODEL": "openai:gpt-4o-mini", **extra}


def run_pilothouse(home: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`python -X importtime -m pilothouse ARGS`: the process and the modules it imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "pilothouse", *args],
                          env=environment(home), cwd=home, capture_output=True, text=True,
                          timeout=120, check=False)
    modules = imported(done.stderr)
    assert "pilothouse.interfaces.cli" in modules, done.stderr[-2000:]  # the report was read
    return done, modules


def test_the_importtime_report_is_read_and_the_agent_stack_recognised() -> None:
    report = ("import time: self [us] | cumulative | imported package\n"
              "import time:       139 |        139 |   _io\n"
              "import time:      2398 |     489089 | pilothouse.interfaces.cli\n"
              "import time:     36145 |    2228372 |   pilothouse.agents.supervisor\n"
              "import time:      7986 |     452332 |     langchain_core.tracers.event_stream\n"
              "import time:        18 |     997173 |           chromadb.api.types\n"
              "import time:       314 |     882197 |       a2a.server.routes\n")

    modules = imported(report)

    assert {"_io", "pilothouse.interfaces.cli", "chromadb.api.types"} <= modules
    assert agent_stack(modules) == ["a2a.server.routes", "chromadb.api.types",
                                    "langchain_core.tracers.event_stream",
                                    "pilothouse.agents.supervisor"]
    assert agent_stack(modules, allowed=("chromadb",)) == [
        "a2a.server.routes", "langchain_core.tracers.event_stream",
        "pilothouse.agents.supervisor"]


@pytest.mark.parametrize("args", [
    ["--help"], ["version"], ["models"], ["keys", "new"], ["sandbox", "--help"],
    ["model", "status"],
], ids=" ".join)
def test_a_command_that_needs_no_model_loads_no_agent_stack(
    tmp_path: Path, args: list[str],
) -> None:
    done, modules = run_pilothouse(tmp_path, *args)

    assert done.returncode == 0, done.stderr[-2000:]
    assert agent_stack(modules) == []


def test_doctor_runs_its_checks_without_the_agent_stack(tmp_path: Path) -> None:
    done, modules = run_pilothouse(tmp_path, "doctor", "--json")

    checks = {check["name"]: check for check in json.loads(done.stdout)["checks"]}
    assert done.returncode == 1 and checks["model"]["status"] == "problem"  # no OPENAI_API_KEY
    assert {"context window", "database", "token counting", "memory budget"} <= set(checks)
    assert agent_stack(modules) == []


def test_the_mcp_group_lists_every_server_and_loads_only_the_one_asked_for(
    tmp_path: Path,
) -> None:
    listed, every = run_pilothouse(tmp_path, "mcp", "--help")
    one, modules = run_pilothouse(tmp_path, "mcp", "argocd", "--help")

    assert all(f" {server} " in listed.stdout for server in ("argocd", "github", "rag", "shell"))
    assert "--read-only" in one.stdout
    assert agent_stack(every) == [] and agent_stack(modules) == []
    others = ("pilothouse.tools.github", "pilothouse.tools.shell", "pilothouse.sandbox")
    assert sorted(m for m in modules if m.startswith(others)) == []


@pytest.mark.parametrize(("server", "allowed"), [
    (["argocd"], ()), (["github"], ()), (["shell", "--workspace", "."], ()),
    # The RAG server is ChromaDB's one user.
    (["rag", "--root", "."], ("chromadb",)),
], ids=lambda value: value[0] if isinstance(value, list) else ",".join(value) or "-")
def test_a_tool_server_answers_initialize_without_langchain(
    tmp_path: Path, server: list[str], allowed: tuple[str, ...],
) -> None:
    report = tmp_path / "importtime.txt"
    with report.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "pilothouse", "mcp", *server],
            env=environment(tmp_path), cwd=tmp_path, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=stderr)
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(_INITIALIZE).encode() + b"\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        process.stdin.close()  # end of the session: the server exits
        process.wait(timeout=60)
        process.stdout.close()

    assert answer["id"] == 1 and "serverInfo" in answer["result"], answer
    modules = imported(report.read_text())
    assert "pilothouse.interfaces.cli" in modules
    assert agent_stack(modules, allowed=allowed) == []


def test_the_agent_option_offers_the_registered_specialists() -> None:
    # `--agent`'s help names them without importing the registry (and every agent with it).
    assert tuple(SPECIALISTS) == SPECIALIST_NAMES
