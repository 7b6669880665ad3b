"""How code retrieval is shown: each hit as `path:lines` (symbol) and its snippet, verbatim."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from pilothouse.tools.views import render

_LANGUAGES = {".py": "python", ".go": "go", ".ts": "typescript", ".js": "javascript",
              ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".sh": "bash", ".rs": "rust",
              ".java": "java", ".tf": "hcl", ".md": "markdown", ".toml": "toml"}


def _snippet(hit: Mapping[str, Any]) -> str:
    path = str(hit.get("path", "?"))
    symbol = f" ({hit['symbol']})" if hit.get("symbol") else ""
    language = _LANGUAGES.get(PurePosixPath(path).suffix, "")
    text = str(hit.get("text", "")).rstrip("\n")
    fence = "````" if "```" in text else "```"
    return f"**{path}:{hit.get('lines', '?')}**{symbol}\n{fence}{language}\n{text}\n{fence}"


def hits_view(payload: Mapping[str, Any]) -> str:
    """`retrieve_code_context`'s answer: a line saying what was found, every file that holds
    each identifier of the query, then each snippet."""
    hits = [h for h in payload.get("hits") or [] if isinstance(h, Mapping)]
    query = payload.get("query", "")
    head = (f"{len(hits)} code passage{'s' * (len(hits) != 1)} for '{query}'" if hits
            else f"No indexed code matched '{query}'")
    if payload.get("omitted_hits"):
        head += f" ({payload['omitted_hits']} more left out to fit)"
    parts = [head + "."]
    for named in payload.get("occurrences") or []:
        files = [f"`{f}`" for f in named.get("files") or []]
        total = int(named.get("total") or len(files))
        more = f" and {total - len(files)} more" if total > len(files) else ""
        parts.append(f"`{named.get('name')}` occurs in {total} file{'s' * (total != 1)}: "
                     f"{', '.join(files)}{more}.")
    if payload.get("note"):
        parts.append(f"Note: {payload['note']}")
    parts += [_snippet(h) for h in hits]
    return "\n\n".join(parts)


def report_view(payload: Mapping[str, Any]) -> str:
    """`index_directory`'s report as a short field list."""
    return render(payload)


def named_view(payload: Mapping[str, Any]) -> str:
    """`find_named_code`'s answer: the snippets a question names."""
    items = [i for i in payload.get("items") or [] if isinstance(i, Mapping)]
    if not items:
        note = f": {payload['note']}" if payload.get("note") else ""
        return f"No code named by the question{note}."
    return "\n\n".join(_snippet({**i, "lines": f"{i.get('start_line')}-{i.get('end_line')}"})
                       for i in items)
