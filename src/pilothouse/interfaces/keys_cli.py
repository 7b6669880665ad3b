"""`pilothouse keys new`: print a fresh API key for PILOTHOUSE_API_KEYS.

`pilothouse serve` refuses keys shorter than 32 characters, so an operator needs a way to make
one that is not `openssl` folklore. The key goes alone to stdout (`KEY=$(pilothouse keys new)`)
and where to put it goes to stderr. Only the standard library and Typer are imported: making a
key must not load the agents.
"""

from __future__ import annotations

from typing import Annotated

import typer

from pilothouse.keys import KEY_NAME, new_key

WHERE = (
    "Put it on the server in PILOTHOUSE_API_KEYS (comma-separated name=key entries; "
    "PILOTHOUSE_ADMIN_KEYS for identities that may read every conversation), e.g. in the "
    "Compose file's environment or the Helm value auth.apiKeys, and restart `pilothouse serve`. "
    "Clients send it as 'Authorization: Bearer <key>'; the web UI asks for it once. "
    "A supervisor calling a remote agent sends it as PILOTHOUSE_AGENTS_<NAME>_KEY."
)

keys_cli = typer.Typer(
    help="Make API keys for `pilothouse serve` (REST API, web UI, A2A).",
    no_args_is_help=True,
)


@keys_cli.command("new", epilog=WHERE)
def new_command(
    name: Annotated[str | None, typer.Option(
        "--name", help="Print 'NAME=<key>', an entry ready for PILOTHOUSE_API_KEYS: the "
                       "identity that owns its conversations (letters, digits, '.', '_', "
                       "'-').")] = None,
) -> None:
    """Print a new random API key (43 characters; `serve` requires at least 32).

    Only the key (or NAME=key) goes to stdout, so `KEY=$(pilothouse keys new)` captures it.
    """
    if name is not None and not KEY_NAME.match(name):
        typer.echo(f"Error: {name[:60]!r} cannot name a key. What to do: use at most 40 "
                   "letters, digits, '.', '_' or '-', e.g. --name alice.", err=True)
        raise typer.Exit(2)
    key = new_key()
    typer.echo(key if name is None else f"{name}={key}")
    typer.echo(WHERE, err=True)
