"""What the RAG tools send back to the model: compact JSON of bounded size.

A retrieval can never flood the model's context: each snippet gets a share of the budget and
is cut at a line boundary with a note of what was left out, and if JSON escaping still pushes
the answer over the budget the weakest hits are dropped, with their number stated.
"""

from __future__ import annotations

import json
from typing import Any

from pilothouse.tools.rag.index import Hit, IndexReport

#: Upper bound of one retrieve_code_context answer, in characters.
MAX_ANSWER_CHARS = 8000
#: Files named per identifier of the query (the rest are counted).
MAX_OCCURRENCE_FILES = 20
_MIN_SNIPPET = 300
#: Room for a hit's path, lines, symbol and score next to its text.
_HIT_OVERHEAD = 120
_BODY_OVERHEAD = 400


def trim_snippet(text: str, limit: int) -> str:
    """`text` cut at a line boundary to at most `limit` characters, saying what was left out."""
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > limit - 40:
            break
        kept.append(line)
        size += len(line) + 1
    if not kept:  # one enormous line (minified code): cut inside it
        return text[: max(0, limit - 40)] + " …[cut]"
    return "\n".join(kept) + f"\n…[{len(lines) - len(kept)} more lines]"


def render_hits(
    root: str,
    query: str,
    hits: list[Hit],
    budget: int = MAX_ANSWER_CHARS,
    indexing: dict[str, int] | None = None,
    note: str | None = None,
    occurrences: dict[str, list[str]] | None = None,
) -> str:
    """Compact JSON for the model, at most `budget` characters.

    `indexing` (files done and total) says an index run is still going, so the hits cover only
    the files indexed so far; `note` says where the hits come from instead of the default;
    `occurrences` names every file that holds each identifier of the query (20 shown).
    """

    def encode(items: list[dict[str, Any]], dropped: int) -> str:
        body: dict[str, Any] = {"root": root, "query": query, "hits": items}
        if occurrences:
            body["occurrences"] = [{"name": name, "files": files[:MAX_OCCURRENCE_FILES],
                                    "total": len(files)} for name, files in occurrences.items()]
        if dropped:
            body["omitted_hits"] = dropped
        if indexing is not None:
            body["indexing"] = indexing
        if note:
            body["note"] = note
        elif indexing is not None:
            body["note"] = "Indexing is in progress; results cover the files indexed so far."
        elif not items:
            body["note"] = "No indexed code matched. Rephrase, or index_directory the repository."
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    share = (budget - _BODY_OVERHEAD - _HIT_OVERHEAD * len(hits)) // max(1, len(hits))
    items = [
        {
            "path": h.path,
            "lines": f"{h.start_line}-{h.end_line}",
            "symbol": h.symbol,
            "score": h.score,
            "text": trim_snippet(h.text, max(_MIN_SNIPPET, share)),
        }
        for h in hits
    ]
    answer = encode(items, 0)
    while len(answer) > budget and items:
        items.pop()
        answer = encode(items, len(hits) - len(items))
    return answer


def report_payload(report: IndexReport) -> dict[str, Any]:
    """An IndexReport as the JSON the index_directory tool returns."""
    payload: dict[str, Any] = {
        "root": report.root,
        "files_indexed": report.files_indexed,
        "files_skipped_unchanged": report.files_skipped_unchanged,
        "files_removed": report.files_removed,
        "chunks": report.chunks,
        "total_chunks": report.total_chunks,
        "seconds": report.seconds,
    }
    if report.skipped:
        payload["skipped"] = report.skipped  # by reason: why fewer files than expected
    if not report.complete:
        payload["note"] = "Stopped early; the next index_directory call finishes the work."
    return payload
