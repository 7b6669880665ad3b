"""`pilothouse sandbox argocd`: serve a generated Argo CD fleet on this machine."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from pilothouse.sandbox.argocd.fleet import FleetSpec
from pilothouse.sandbox.argocd.server import serve_sandbox
from pilothouse.sandbox.argocd.state import DEFAULT_PASSWORD, DEFAULT_TOKEN, DEFAULT_USERNAME
from pilothouse.sandbox.serving import HOST
from pilothouse.sandbox.worlds import WORLDS, world_named

sandbox_cli = typer.Typer(
    name="argocd",
    help="Serve an Argo CD compatible sandbox API over a generated fleet (not a real Argo CD).",
    no_args_is_help=False,
    pretty_exceptions_enable=False,
)


@sandbox_cli.callback(invoke_without_command=True)
def serve(
    apps: Annotated[int | None, typer.Option(
        min=0, help="Number of generated applications (default: the world's own, 819 in the "
        "default world).")] = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1 (8081: "
                                      "`pilothouse serve` takes 8080).")] = 8081,
    token: Annotated[str, typer.Option(help="Bearer token to accept (a 3-part JWT-like string).")]
    = DEFAULT_TOKEN,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = HOST,
    seed: Annotated[int | None, typer.Option(
        help="Seed of the generated fleet (default: the world's own).")] = None,
    world: Annotated[str, typer.Option(
        help="Which made-up company to generate: " + ", ".join(WORLDS) + ".")]
    = FleetSpec().world.key,
) -> None:
    """Serve the sandbox until Ctrl-C, printing the settings that point Pilothouse at it."""
    if token.count(".") != 2:
        raise typer.BadParameter("the token needs three dot-separated parts, like a JWT",
                                 param_hint="--token")
    if world.strip().lower() not in WORLDS:
        raise typer.BadParameter("choose one of " + ", ".join(WORLDS), param_hint="--world")
    spec = FleetSpec.of(world_named(world), apps=apps, seed=seed)
    err = Console(stderr=True, soft_wrap=True)  # export lines must stay copy-pasteable
    url = f"http://{host}:{port}"
    err.print(f"[bold]Argo CD sandbox[/] (world {spec.world.key}: generated fleet of "
              f"{spec.apps:,} apps, seed {spec.seed}) at {url}")
    err.print("Point Pilothouse at it with:")
    err.print(f"  export ARGOCD_URL={url}", markup=False, highlight=False)
    err.print(f"  export ARGOCD_TOKEN={token}", markup=False, highlight=False)
    err.print(f"  (or ARGOCD_USERNAME={DEFAULT_USERNAME} ARGOCD_PASSWORD={DEFAULT_PASSWORD})",
              markup=False, highlight=False)
    serve_sandbox(port=port, token=token, host=host, spec=spec)
