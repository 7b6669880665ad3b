"""The vocabulary the chunker reads syntax trees with: definitions and per-language rules.

The chunker walks a file's top-level syntax nodes; a language's rules (`languages.py`) say for
each whether it is a definition (function, method, class or type) with a name, a container
whose contents sit at the same level (a C++ namespace, an `#ifdef` guard, an `extern "C"`
block), or loose code whose assigned names are still worth finding (constants, Go `var`
blocks, shell variables). Tree-sitter node types differ per grammar; this module only holds
what they have in common.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from tree_sitter import Node

#: Nodes that describe the definition below them and belong to its chunk.
COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
LEADING_TYPES = COMMENT_TYPES | {"attribute_item"}


@dataclass(frozen=True)
class Definition:
    """A named definition: `node` spans all of it, wrappers (export, decorators) included."""

    node: Node
    symbol: str
    kind: Literal["function", "type"]
    #: What members are qualified with (`Command` for `impl Display for Command`).
    scope: str = ""
    #: The node holding member definitions (a class body); None when it has none.
    body: Node | None = None
    #: Further names it defines (every type of a Go `type (...)` group).
    names: tuple[str, ...] = ()


def text(node: Node | None) -> str:
    """A node's source, whitespace collapsed ('' for no node)."""
    if node is None or node.text is None:
        return ""
    return " ".join(node.text.decode("utf-8", "replace").split())


def field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def unwrap(node: Node, *fields: str) -> Node | None:
    """The declaration a wrapper (export, decorator, template) carries."""
    for name in fields:
        if (inner := field(node, name)) is not None:
            return inner
    return next((c for c in node.named_children if c.type not in LEADING_TYPES), None)


def named(node: Node, kind: Literal["function", "type"], body: str = "") -> Definition | None:
    name = text(field(node, "name"))
    members = field(node, body) if body else None
    return Definition(node, name, kind, name, members) if name else None


def rewrap(outer: Node, found: Definition | None) -> Definition | None:
    """`found`, spanning its wrapper `outer` so decorators and `export` stay with it."""
    if found is None:
        return None
    return Definition(outer, found.symbol, found.kind, found.scope, found.body, found.names)


@dataclass(frozen=True)
class LanguageRules:
    """How one language's syntax tree maps to chunks."""

    definition: Callable[[Node], Definition | None]
    #: Definitions inside a type's body (methods); defaults to `definition`.
    member: Callable[[Node], Definition | None] | None = None
    loose_names: Callable[[Node], list[str]] = lambda node: []
    #: Nodes whose children are read as if they stood at the enclosing level.
    transparent: frozenset[str] = frozenset()
    #: For other such wrappers: the node whose children to read instead (None: not one).
    opens: Callable[[Node], Node | None] = lambda node: None
    #: Whether a type's chunk lists its members' bare names besides `Type.member`.
    bare_member_names: bool = True
