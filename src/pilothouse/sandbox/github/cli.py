"""`pilothouse sandbox github`: serve a generated GitHub organisation on this machine."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from pilothouse.sandbox.github.api import DEFAULT_TOKEN
from pilothouse.sandbox.github.server import serve_github_sandbox
from pilothouse.sandbox.github.world import WorldSpec
from pilothouse.sandbox.serving import HOST
from pilothouse.sandbox.worlds import WORLDS, world_named

sandbox_cli = typer.Typer(
    name="github",
    help="Serve a GitHub REST API compatible sandbox over a generated organisation "
         "(not the real GitHub).",
    no_args_is_help=False,
    pretty_exceptions_enable=False,
)


@sandbox_cli.callback(invoke_without_command=True)
def serve(
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = 8090,
    token: Annotated[str, typer.Option(help="Token to accept (Bearer or token scheme).")]
    = DEFAULT_TOKEN,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = HOST,
    seed: Annotated[int | None, typer.Option(
        help="Seed of the generated organisation (default: the world's own).")] = None,
    world: Annotated[str, typer.Option(
        help="Which made-up company to generate: " + ", ".join(WORLDS) + ".")]
    = WorldSpec().world.key,
) -> None:
    """Serve the sandbox until Ctrl-C, printing the settings that point Pilothouse at it."""
    if len(token) < 8 or any(c.isspace() for c in token):
        raise typer.BadParameter("8+ characters, no spaces",
                                 param_hint="--token")
    if world.strip().lower() not in WORLDS:
        raise typer.BadParameter("choose one of " + ", ".join(WORLDS), param_hint="--world")
    spec = WorldSpec.of(world_named(world), seed=seed)
    err = Console(stderr=True, soft_wrap=True)  # export lines must stay copy-pasteable
    url = f"http://{host}:{port}"
    repos = ", ".join(r.name for r in spec.repos[:4])
    err.print(f"[bold]GitHub sandbox[/] (world {spec.world.key}, organisation {spec.owner}: "
              f"{repos}, ...; seed {spec.seed}) at {url}")
    err.print("Point Pilothouse at it with:")
    err.print(f"  export GITHUB_API_URL={url}", markup=False, highlight=False)
    err.print(f"  export GITHUB_TOKEN={token}", markup=False, highlight=False)
    serve_github_sandbox(port=port, token=token, host=host, spec=spec)
