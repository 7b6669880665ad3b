"""`pilothouse model status|stop`: the shared local model service, seen and stopped.

The first command that needs the local model starts the service (`models.local_service`); it
stays loaded for PILOTHOUSE_LOCAL_IDLE_SECONDS after its last turn. `status` says whether it
runs and what it is doing; `stop` frees its memory now (a turn in flight fails with a clear
error; the next question starts it again). Only Typer, Rich, the settings and the service's
client are imported: neither command loads the model or the agents, and `cli` registers them
lazily (`cli_lazy`), so other commands do not even import this module.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated, Any

import typer
from rich.console import Console

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError
from pilothouse.models.local_service_control import service_status, stop_service
from pilothouse.models.local_service_files import service_paths

NOT_RUNNING = "not running (the next command that needs the local model starts it)"


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except PilothouseError as error:
        typer.echo(f"Error: {error.message}" + (f" What to do: {error.hint}" if error.hint
                                                else ""), err=True)
        raise typer.Exit(2) from None


def duration(seconds: float) -> str:
    """`42s`, `7m 05s`, `2h 03m`."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole // 60 % 60:02d}m"


def summary(info: dict[str, Any]) -> str:
    """One line about a running service (for `doctor`)."""
    left = info.get("idle_left")
    state = "busy" if left is None else f"exits in {duration(left)} without a turn"
    return (f"running, pid {info['pid']}, up {duration(info['uptime'])}, "
            f"{info['turns']} turns served, {state}")


def status_lines(info: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows describing a running service."""
    identity = info["identity"]
    threads = identity["n_threads"] or "all cores"
    left = info.get("idle_left")
    running = 1 if info.get("active") else 0
    return [
        ("service", f"running (pid {info['pid']})"),
        ("model", f"{identity['model']} (context {identity['n_ctx']:,} tokens, "
                  f"threads: {threads})"),
        ("version", f"pilothouse {identity['version']} ({identity['python']})"),
        ("uptime", duration(info["uptime"])),
        ("idle", "busy with a turn" if left is None
         else f"exits in {duration(left)} without a turn "
              f"(PILOTHOUSE_LOCAL_IDLE_SECONDS={info['idle_seconds']:g})"),
        ("served", f"{info['turns']} turns ({info['generations']} generations)"),
        ("queue", f"{running} running, {info['queued']} waiting"),
        ("worker", f"pid {info['worker_pid']}" if info.get("worker_pid")
         else "not started (the model loads at the first turn)"),
    ]


def status_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Show whether the local model service runs: pid, model, uptime, idle time, turns, queue."""
    settings = _settings()
    info = service_status(service_paths(settings.home))
    if as_json:
        sys.stdout.write(json.dumps({"running": info is not None, **(info or {})}) + "\n")
        return
    console = Console()
    if info is None:
        off = " PILOTHOUSE_LOCAL_IDLE_SECONDS=0: each command runs its own model process." \
            if not settings.local_idle_seconds else ""
        console.print(f"service: {NOT_RUNNING}{off}", highlight=False, soft_wrap=True)
        return
    for label, value in status_lines(info):
        console.print(f"[bold]{label}:[/] ", value, sep="", highlight=False, soft_wrap=True)


def stop_command() -> None:
    """Stop the local model service now and free its memory.

    A turn in flight fails with a clear error; the next question starts the service again.
    """
    settings = _settings()
    started = time.monotonic()
    try:
        pid = stop_service(service_paths(settings.home))
    except PilothouseError as error:
        typer.echo(f"Error: {error.message} What to do: {error.hint}", err=True)
        raise typer.Exit(1) from None
    if pid is None:
        typer.echo(f"service: {NOT_RUNNING}")
    else:
        typer.echo(f"stopped the local model service (pid {pid}) in "
                   f"{time.monotonic() - started:.1f} s")
