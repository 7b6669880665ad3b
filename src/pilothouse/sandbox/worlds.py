"""The worlds the sandboxes can generate, by the name `--world` takes.

`acme` is the default (every existing test and evaluation case is written against it);
`tidewater` has other conventions and is where the evaluation's test split runs.
"""

from __future__ import annotations

from pilothouse.errors import UserInputError
from pilothouse.sandbox.company import ACME
from pilothouse.sandbox.tidewater import TIDEWATER
from pilothouse.sandbox.world_description import WorldDescription

DEFAULT_WORLD = ACME
WORLDS: dict[str, WorldDescription] = {world.key: world for world in (ACME, TIDEWATER)}


def world_named(name: str | None) -> WorldDescription:
    """The world called `name` (any case); None is the default world."""
    if name is None:
        return DEFAULT_WORLD
    world = WORLDS.get(name.strip().lower())
    if world is None:
        raise UserInputError(f"There is no sandbox world called {name!r}.",
                             hint="Choose one of: " + ", ".join(WORLDS) + ".")
    return world
