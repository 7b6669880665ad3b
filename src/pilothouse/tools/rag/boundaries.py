"""File languages, and where sections start in files that are not parsed: line patterns.

Source code in the languages with a tree-sitter grammar wheel is chunked from its syntax tree
(`chunking.py`, `languages.py`). What is left is line-oriented enough for anchored patterns:
YAML documents and keys, Markdown headings, TOML tables, Dockerfile stages, Makefile targets,
and Kotlin declarations (no grammar wheel is kept for it). Each pattern's first non-empty group
(or a formatter) names the section. A boundary moves up over the comments and annotations
directly above it, which describe it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_SUFFIXES: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cxx": "cpp",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell",
    ".yaml": "yaml", ".yml": "yaml", ".md": "markdown", ".markdown": "markdown",
    ".toml": "toml", ".ini": "toml", ".cfg": "toml",
    ".tf": "hcl", ".hcl": "hcl", ".json": "json", ".sql": "sql",
}
_NAMES = {"dockerfile": "dockerfile", "makefile": "makefile", "gnumakefile": "makefile"}
#: Languages whose files are programs: the rest are configuration, data, scripts or prose.
PROGRAM_LANGUAGES = frozenset({"python", "javascript", "typescript", "go", "rust", "java",
                               "kotlin", "c", "cpp"})


def language_for(filename: str) -> str:
    """The language of a file from its name (`text` when unknown)."""
    lowered = filename.lower()
    if lowered in _NAMES or lowered.startswith("dockerfile."):
        return _NAMES.get(lowered, "dockerfile")
    dot = lowered.rfind(".")
    return _SUFFIXES.get(lowered[dot:], "text") if dot > 0 else "text"


@dataclass(frozen=True)
class Boundary:
    """A definition starts at 0-based `line`; `symbol` is its name ('' when it has none)."""

    line: int
    symbol: str


Namer = Callable[[re.Match[str]], str]


def _first(m: re.Match[str]) -> str:
    return next((g for g in m.groups() if g), "")


def _stage(m: re.Match[str]) -> str:
    return m.group(2) or m.group(1)


_PATTERNS: dict[str, list[tuple[str, Namer]]] = {
    "kotlin": [
        (
            r"^\s{0,4}(?:(?:public|private|internal|protected|open|abstract|override|suspend|inline|"
            r"data|sealed|enum|inner|annotation)\s+)*(?:fun|class|object|interface)\s+"
            r"(?:<[^>]*>\s*)?(?:[\w.]+\.)?(\w+)",
            _first,
        ),
    ],
    "toml": [(r"^\[\[?\s*([^\]]+?)\s*\]\]?\s*$", _first)],
    "dockerfile": [(r"(?i)^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", _stage)],
    "makefile": [(r"^([A-Za-z0-9_.%/-]+)\s*:(?!=)", _first)],
}
_COMPILED = {lang: [(re.compile(p), n) for p, n in pats] for lang, pats in _PATTERNS.items()}
_PREFIXES: dict[str, tuple[str, ...]] = {
    "hash": ("#",),
    "slash": ("//", "/*", "*", "@"),
}
_COMMENT_STYLE = {"toml": "hash", "dockerfile": "hash", "makefile": "hash", "yaml": "hash"}


def find_boundaries(language: str, lines: list[str]) -> list[Boundary]:
    """Definition starts in `lines`, in order, each at most once."""
    if language == "markdown":
        found = _markdown(lines)
    elif language == "yaml":
        found = _yaml(lines)
    else:
        found = []
        patterns = _COMPILED.get(language, [])
        for i, line in enumerate(lines):
            for pattern, namer in patterns:
                m = pattern.match(line)
                if m:
                    found.append(Boundary(i, namer(m).strip()))
                    break
    prefixes = _PREFIXES[_COMMENT_STYLE.get(language, "slash")]
    result: list[Boundary] = []
    for b in found:
        start = b.line
        floor = result[-1].line + 1 if result else 0
        while start > floor and lines[start - 1].lstrip().startswith(prefixes):
            start -= 1
        result.append(Boundary(start, b.symbol))
    return result


def _markdown(lines: list[str]) -> list[Boundary]:
    """Headings outside fenced code blocks."""
    found: list[Boundary] = []
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (m := re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)):
            found.append(Boundary(i, m.group(1)))
    return found


def _yaml(lines: list[str]) -> list[Boundary]:
    """Kubernetes-style documents (`---` + `kind:`) as units, else top-level keys."""
    docs = [i for i, line in enumerate(lines) if line.startswith("---")]
    kinds = [i for i, line in enumerate(lines) if line.startswith("kind:")]
    if kinds:
        found = []
        for start in sorted({0, *docs}):
            end = next((d for d in docs if d > start), len(lines))
            body = lines[start:end]
            kind = next((ln.split(":", 1)[1].strip() for ln in body if ln.startswith("kind:")), "")
            name = next((m.group(1) for ln in body if (m := re.match(r"^  name:\s*(\S+)", ln))), "")
            found.append(Boundary(start, f"{kind}/{name}" if kind and name else kind))
        return found
    key = re.compile(r"^([A-Za-z_\"'][^:#\s]*)\s*:(?:\s|$)")
    return [
        Boundary(i, m.group(1).strip("\"'")) for i, ln in enumerate(lines) if (m := key.match(ln))
    ]
