"""Command groups whose sub-commands are imported when they are used, not when they are listed.

`pilothouse mcp argocd` should load the Argo CD server and nothing else, and `pilothouse --help`
should load no server at all. A Typer group normally holds every sub-command built up front,
which means importing each module that defines one (the shell's package alone pulls in the MCP
SDK). Here a group knows its sub-commands by name and import path (`"module:attribute"`, a
Typer app or a command function) and builds one the first time the group looks it up: running
`mcp argocd` imports only `tools.argocd.cli`, while `mcp --help`, which describes every
sub-command, imports them all. This is Click's "lazily loading subcommands" pattern, applied to
Typer's group class.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    # The base class of Typer's commands and groups (Typer vendors Click since 0.26).
    from typer._click import Command


def load_command(name: str, target: str) -> Command:
    """The command `target` ("module:attribute") makes when mounted as `name`.

    It is mounted on a scratch Typer app exactly as `add_typer(app, name=name)` or
    `command(name)(function)` would mount it on the real one, so options, help and defaults
    are the same as an eagerly registered command's.
    """
    module, _, attribute = target.partition(":")
    value = getattr(importlib.import_module(module), attribute)
    holder = typer.Typer()
    if isinstance(value, typer.Typer):
        holder.add_typer(value, name=name)
    else:
        holder.command(name)(value)
    return typer.main.get_group(holder).commands[name]


class LazyCommands(MutableMapping[str, "Command"]):
    """A group's commands: the built ones, then the lazy ones, built at first lookup."""

    def __init__(self, built: Mapping[str, Command], lazy: Mapping[str, str]) -> None:
        self._built = dict(built)
        self._lazy = dict(lazy)

    def __getitem__(self, name: str) -> Command:
        if name not in self._built and name in self._lazy:
            self._built[name] = load_command(name, self._lazy[name])
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._lazy.pop(name, None)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._lazy, *self._built]))

    def __len__(self) -> int:
        return len(self._lazy.keys() | self._built.keys())

    def __contains__(self, name: object) -> bool:
        return name in self._lazy or name in self._built


def lazy_group(commands: Mapping[str, str]) -> type[TyperGroup]:
    """A Typer group class (for `typer.Typer(cls=...)`) with `commands` (name -> "module:
    attribute"), listed in that order and imported at first use."""

    class LazyGroup(TyperGroup):
        def __init__(self, **attrs: Any) -> None:
            super().__init__(**attrs)
            self.commands = LazyCommands(self.commands, commands)

    return LazyGroup
