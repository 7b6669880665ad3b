"""Where definitions start in languages we do not parse: per-language line patterns.

A full parser per language (tree-sitter) would need compiled grammars we cannot fetch offline;
top-level definitions in real code are regular enough that anchored patterns find them. Each
pattern's first non-empty group (or a formatter) names the symbol. A boundary moves up over the
comments, doc comments, attributes and decorators directly above it, which describe it.
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


def _receiver(m: re.Match[str]) -> str:
    return f"{m.group(1)}.{m.group(2)}" if m.group(1) else m.group(2)


def _stage(m: re.Match[str]) -> str:
    return m.group(2) or m.group(1)


def _labels(m: re.Match[str]) -> str:
    return ".".join(re.findall(r'"([^"]*)"', m.group(2))) or m.group(1)


_NOT_A_NAME = r"(?!(?:if|for|while|switch|catch|return|new|throw|else|function|do|try)\b)"
_JS_COMMON: list[tuple[str, Namer]] = [
    (r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(\w+)", _first),
    (r"^(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(\w+)", _first),
    (r"^(?:export\s+)?(?:const|let|var)\s+(\w+)\s*(?::[^=]+)?=", _first),
    (r"^(?:describe|it|test)\s*\(\s*['\"`]([^'\"`]+)", _first),
    (
        r"^\s{2,4}(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*"
        + _NOT_A_NAME
        + r"(\w+)\s*(?:<[^>]*>)?\([^;]*\)\s*(?::\s*[^={;]+)?\{\s*$",
        _first,
    ),
]
_PATTERNS: dict[str, list[tuple[str, Namer]]] = {
    "javascript": _JS_COMMON,
    "typescript": [
        *_JS_COMMON,
        (r"^(?:export\s+)?(?:declare\s+)?(?:interface|type|enum|namespace|module)\s+(\w+)", _first),
    ],
    "go": [
        (r"^func\s+\(\s*\w*\s*\*?(\w+)[^)]*\)\s*(\w+)", _receiver),
        (r"^func\s+()(\w+)", _receiver),
        (r"^type\s+(\w+)", _first),
        (r"^(?:var|const)\s+(\w+)?", _first),
    ],
    "rust": [
        (
            r"^\s{0,4}(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:const\s+)?(?:unsafe\s+)?"
            r"(?:extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)",
            _first,
        ),
        (
            r"^(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|union|type|mod|static|const)\s+(\w+)",
            _first,
        ),
        (r"^(?:unsafe\s+)?impl(?:<[^{]*?>)?\s+([^{]+?)\s*(?:where\b.*)?\{?\s*$", _first),
        (r"^macro_rules!\s*(\w+)", _first),
    ],
    "java": [
        (
            r"^\s{0,4}(?:(?:public|protected|private|static|final|abstract|sealed|non-sealed)\s+)*"
            r"(?:class|interface|enum|record|@interface)\s+(\w+)",
            _first,
        ),
        (
            r"^\s{4}(?:(?:public|protected|private|static|final|abstract|synchronized|native|default)"
            r"\s+)*(?:<[^>]+>\s+)?" + _NOT_A_NAME + r"[\w<>\[\],.? ]+\s+(\w+)\s*\([^;]*$",
            _first,
        ),
    ],
    "kotlin": [
        (
            r"^\s{0,4}(?:(?:public|private|internal|protected|open|abstract|override|suspend|inline|"
            r"data|sealed|enum|inner|annotation)\s+)*(?:fun|class|object|interface)\s+"
            r"(?:<[^>]*>\s*)?(?:[\w.]+\.)?(\w+)",
            _first,
        ),
    ],
    "c": [
        (r"^(?:typedef\s+)?(?:struct|enum|union)\s+(\w+)[^;]*$", _first),
        (r"^" + _NOT_A_NAME + r"[A-Za-z_][\w\s\*]*?\b(\w+)\s*\([^;]*\)\s*\{?\s*$", _first),
    ],
    "cpp": [
        (r"^(?:template\s*<.*>\s*)?(?:struct|class|enum|union|namespace)\s+(\w+)[^;]*$", _first),
        (
            r"^" + _NOT_A_NAME
            + r"[A-Za-z_][\w\s\*&:<>,]*?\b([\w:~]+)\s*\([^;]*\)\s*(?:const\s*)?\{?\s*$",
            _first,
        ),
    ],
    "shell": [
        (r"^function\s+([A-Za-z_][\w:-]*)", _first),
        (r"^([A-Za-z_][\w:-]*)\s*\(\)\s*\{?", _first),
    ],
    "toml": [(r"^\[\[?\s*([^\]]+?)\s*\]\]?\s*$", _first)],
    "hcl": [
        (r"^(resource|data|module|variable|output|provider)\s+((?:\"[^\"]*\"\s*)+)\{", _labels),
        (r"^(locals|terraform)\s*\{", _first),
    ],
    "dockerfile": [(r"(?i)^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", _stage)],
    "makefile": [(r"^([A-Za-z0-9_.%/-]+)\s*:(?!=)", _first)],
}
_COMPILED = {lang: [(re.compile(p), n) for p, n in pats] for lang, pats in _PATTERNS.items()}
_PREFIXES: dict[str, tuple[str, ...]] = {
    "hash": ("#",),
    "slash": ("//", "/*", "*", "@"),
    "rust": ("//", "/*", "*", "#["),
}
_COMMENT_STYLE = {
    "shell": "hash", "toml": "hash", "hcl": "hash", "dockerfile": "hash", "makefile": "hash",
    "rust": "rust", "yaml": "hash",
}


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
