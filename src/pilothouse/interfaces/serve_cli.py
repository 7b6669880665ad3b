"""`pilothouse serve`'s command: its options, which Typer reads when the CLI starts.

The server (`serve.py`: the agents, A2A, the API, uvicorn) is imported when the command runs,
so registering `serve` costs `pilothouse --help` and every other command nothing.
`python -m pilothouse.interfaces.serve` runs this same command.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError


def serve_command(
    port: Annotated[int | None, typer.Option(
        min=1, max=65535, help="Port to listen on [default: PILOTHOUSE_API_PORT or 8080].",
        show_default=False)] = None,
    host: Annotated[str | None, typer.Option(
        help="Interface to bind, 0.0.0.0 in a container [default: PILOTHOUSE_API_HOST or "
             "127.0.0.1].", show_default=False)] = None,
    agent: Annotated[list[str] | None, typer.Option(
        "--agent", help="Run only this agent (repeatable): argocd, github, devops, supervisor.",
    )] = None,
    public_url: Annotated[str | None, typer.Option(
        help="Base URL others reach this server at (agent cards advertise it).")] = None,
    api: Annotated[bool | None, typer.Option(
        "--api/--no-api", help="The REST API and web UI at / (default: when the supervisor "
                               "runs here).")] = None,
    api_keys: Annotated[str, typer.Option(
        envvar="PILOTHOUSE_API_KEYS", show_envvar=True,
        help="Comma-separated API keys, each name=key or a bare key; every route that does "
             "work requires one (needed off 127.0.0.1).")] = "",
) -> None:
    """Serve the supervisor and agents over A2A (each at /a2a/<name>/) until Ctrl-C."""
    import asyncio

    from pilothouse.agents.registry import SUPERVISOR
    from pilothouse.interfaces.serve import default_public_url, run_server
    from pilothouse.observability.logging import configure_logging
    from pilothouse.private_files import secure_home
    from pilothouse.redaction import Redactor

    err = Console(stderr=True, soft_wrap=True)  # an error stays one line, whatever the width
    try:
        settings = Settings.from_env()
        configure_logging(settings.log_level, settings.log_json,
                          redactor=Redactor(settings.secret_values()))
        secure_home(settings.home)  # logged: what an older or copied home left readable
        host = host or settings.api_host
        port = port or settings.api_port
        url = (public_url or default_public_url(host, port)).rstrip("/")
        keys = [k.strip() for k in api_keys.split(",") if k.strip()]
        with_api_ui = api if api is not None else (not agent or SUPERVISOR in agent)
        asyncio.run(run_server(settings, host=host, port=port, public_url=url, agents=agent,
                               api=with_api_ui, api_keys=keys, err=err))
    except PilothouseError as error:
        hint = f" [yellow]What to do:[/] {error.hint}" if error.hint else ""
        err.print(f"[bold red]Error:[/] {error.message}{hint}", highlight=False)
        raise typer.Exit(2) from None
