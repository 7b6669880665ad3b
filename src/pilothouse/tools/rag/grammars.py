"""Tree-sitter grammars for the languages the chunker parses, from per-language wheels.

Each grammar is a compiled wheel from the package registry (`tree-sitter-go`, ...), so nothing
is downloaded or built at run time. A grammar is loaded on first use and kept; parsers are made
per call because a `Parser` is not safe to share between the indexing threads.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import PurePosixPath

from tree_sitter import Language, Parser, Tree

#: Chunker language -> (grammar module, function returning its language pointer).
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "go": ("tree_sitter_go", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "java": ("tree_sitter_java", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "shell": ("tree_sitter_bash", "language"),
    "hcl": ("tree_sitter_hcl", "language"),
}

#: Languages whose files are chunked from a syntax tree (the rest use line patterns).
PARSED_LANGUAGES = frozenset(_GRAMMARS) - {"tsx"}


@cache
def grammar(name: str) -> Language:
    """The compiled grammar `name` (a key of `_GRAMMARS`), loaded once."""
    module, function = _GRAMMARS[name]
    return Language(getattr(importlib.import_module(module), function)())


def grammar_name(language: str, path: str) -> str:
    """Which grammar parses a file: TypeScript's JSX files need the TSX variant."""
    if language == "typescript" and PurePosixPath(path).suffix.lower() == ".tsx":
        return "tsx"
    return language


def parse(language: str, path: str, source: bytes) -> Tree:
    """The syntax tree of `source`; tree-sitter recovers from errors, so this always answers."""
    return Parser(grammar(grammar_name(language, path))).parse(source)
