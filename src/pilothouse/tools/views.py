"""Rendered views: a tool answer as the compact Markdown a person reads, written by code.

Every data tool answers twice: the structured payload (MCP structured content, for code) and a
view (the text content, for the model and, verbatim, for the person). A 1.5B model on two CPU
cores picks tools well and writes a sentence well; copying a 1,000-token table, counting and
restating numbers it does badly and slowly (issue 15: "Showing all 819 items", cut off mid-row
after four minutes). So the page line, the counts and the table are rendered here, in the
seed's format, and the agent's answer quotes them unchanged (`runtime.answer_views`).

A view is built from the payload's shape, with a `ViewSpec` per tool naming its noun and the
columns that matter: `pagination` + `items` is a page (header, counts, table); `error` is a
sentence with what to do; anything else is a short field list. Cells are cut, never wrapped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The longest cell of a table; a row must stay one readable line.
MAX_CELL = 60
#: The longest value of a field line (a repository URL, a revision SHA stay whole).
MAX_FIELD = 200
#: Nested objects deeper than this are summarised, not rendered.
MAX_DEPTH = 2
#: Cells of a table inside one object's view (events, unhealthy resources) may say more.
MAX_DETAIL_CELL = 120
#: Lists of text shown as a block of lines (log tails), not as a cell.
_LINE_LISTS = frozenset({"lines", "tail", "log", "logs"})
#: Keys that only code needs (links, fitting notes are rendered separately).
_HIDDEN = frozenset({"html_url", "url", "pagination", "truncated", "items", "evidence"})

Cell = Any
Title = Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True)
class ViewSpec:
    """How one tool's answer is shown: what its items are called and which columns matter."""

    noun: str = "items"
    columns: tuple[str, ...] = ()
    #: Shown too when the answer says it filtered or matched on them (`filters`, `matched`).
    extra_columns: tuple[str, ...] = ()
    #: A heading line for a single-object answer (e.g. the application's name and status).
    title: Title | None = None
    #: Fields the title already says.
    hidden: frozenset[str] = frozenset()
    #: Fields of untrusted free text (annotations): their keys are shown, never their values,
    #: so text someone wrote into a resource never reaches the model or the answer as prose.
    keys_only: frozenset[str] = frozenset()


def number(value: Any) -> str:
    """`value` as a person reads it: 1,200 rather than 1200; other values as text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def cell(value: Cell, limit: int = MAX_CELL) -> str:
    """One table cell: lists joined, pipes escaped, cut to `limit` characters."""
    if value is None or value == "":
        text = "-"
    elif isinstance(value, list):
        text = ", ".join(str(v) for v in value) or "-"
    elif isinstance(value, Mapping):
        text = ", ".join(f"{k} {number(v)}" for k, v in value.items()) or "-"
    else:
        # Plain digits in cells and fields: they are ids and run numbers as often as counts.
        text = number(value) if isinstance(value, bool) else str(value)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str],
          limit: int = MAX_CELL) -> str:
    """A Markdown table of `rows` with `columns` (a column no row has is left out)."""
    shown = [c for c in columns if any(c in row for row in rows)]
    if not rows or not shown:
        return ""
    lines = ["| " + " | ".join(shown) + " |", "|" + "---|" * len(shown)]
    lines += ["| " + " | ".join(cell(row.get(c), limit) for c in shown) + " |" for row in rows]
    return "\n".join(lines)


def counts(label: str, values: Mapping[str, Any]) -> str:
    """`Health: Healthy 703, Degraded 57` from a mapping of counts."""
    parts = [f"{key} {number(value)}" for key, value in values.items()
             if not isinstance(value, Mapping)]
    return f"{label}: {', '.join(parts)}" if parts else ""


def page_header(pagination: Mapping[str, Any], noun: str, subject: str = "",
                shown: int = 0) -> str:
    """The seed's page line: "PAGE 1 of 41 (819 applications). Ask for page 2 for more.".

    Argo CD answers say how many items match (`total_items`, `total_pages`); GitHub lists
    often know only the last page (`last_page`), so the line says what it knows.
    """
    total = pagination.get("total_items")
    page = int(pagination.get("page") or 1)
    pages = pagination.get("total_pages") or pagination.get("last_page")
    has_next = bool(pagination.get("has_next"))
    if total == 0 or (total is None and shown == 0 and not has_next):
        return f"No {noun}{subject}."
    if page == 1 and not has_next and (pages or 1) <= 1:
        return f"Showing all {number(total if total is not None else shown)} {noun}{subject}."
    what = f"{number(total)} {noun}{subject}" if total is not None else f"{noun}{subject}"
    line = f"PAGE {page}{f' of {pages}' if pages else ''} ({what})."
    if has_next:
        line += f" Ask for page {page + 1} for more."
    return line


def _filters_note(payload: Mapping[str, Any]) -> str:
    filters = payload.get("filters")
    if not isinstance(filters, Mapping) or not filters:
        return ""
    return " where " + ", ".join(f"{k}={v}" for k, v in filters.items())


def _summary_lines(summary: Any) -> list[str]:
    if not isinstance(summary, Mapping):
        return []
    lines = []
    for key, value in summary.items():
        if isinstance(value, Mapping):
            flat = {k: v for k, v in value.items() if not isinstance(v, Mapping)}
            if flat:
                lines.append(counts(key.replace("_", " ").capitalize(), flat))
            for inner, nested in value.items():
                if isinstance(nested, Mapping):
                    lines.append(counts(f"{key.capitalize()} {inner}", nested))
    return [line for line in lines if line]


def _page_columns(spec: ViewSpec, payload: Mapping[str, Any],
                  items: Sequence[Mapping[str, Any]]) -> list[str]:
    columns = list(spec.columns) or list(items[0].keys())[:5]
    wanted: set[str] = set()
    filters = payload.get("filters")
    if isinstance(filters, Mapping):
        wanted.update(str(k) for k in filters)
    wanted.update(str(item["matched"]) for item in items if item.get("matched"))
    if len({item.get("type") for item in items}) > 1 and "type" not in columns:
        columns.insert(0, "type")
    columns += [c for c in spec.extra_columns if c in wanted and c not in columns]
    return columns


def page_view(payload: Mapping[str, Any], spec: ViewSpec, subject: str = "") -> str:
    """A page of a list: the page line, the summary counts, a table, notes and warnings."""
    items = [i for i in payload.get("items") or [] if isinstance(i, Mapping)]
    pagination = payload.get("pagination") or {"total_items": len(items), "page": 1,
                                                "total_pages": 1}
    parts = [page_header(pagination, spec.noun, subject + _filters_note(payload), len(items)),
             "\n".join(_summary_lines(payload.get("summary")))]
    for key in ("warning", "note", "notes"):
        if payload.get(key):
            parts.append(f"Note: {cell_text(payload[key])}")
    if items:
        parts.append(table(items, _page_columns(spec, payload, items)))
    if payload.get("suggestion"):  # e.g. an empty page: which filter or tool would find it
        parts.append(f"**What to do:** {cell_text(payload['suggestion'])}")
    parts.append(_truncation(payload))
    return "\n\n".join(p for p in parts if p)


def cell_text(value: Any) -> str:
    """A note or warning as one line of text."""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def _truncation(payload: Mapping[str, Any]) -> str:
    truncated = payload.get("truncated")
    if isinstance(truncated, Mapping) and truncated.get("note"):
        return f"Note: {truncated['note']}"
    return ""


def error_view(payload: Mapping[str, Any]) -> str:
    """A failed call as sentences: what happened, the facts to act on, and what to do."""
    lines = [f"**Error:** {payload.get('error', 'the tool failed')}"]
    details = {k: v for k, v in payload.items()
               if k not in ("error", "kind", "suggestion") and v not in (None, "", [], {})}
    for key, value in details.items():
        label = key.replace("_", " ")
        if isinstance(value, Mapping):
            lines.append(counts(label.capitalize(), value) or f"{label}: {cell(value)}")
        else:
            lines.append(f"{label.capitalize()}: {cell(value, MAX_FIELD)}")
    if payload.get("suggestion"):
        lines.append(f"**What to do:** {payload['suggestion']}")
    return "\n".join(lines)


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        seen.update((k, None) for k in row if k not in _HIDDEN)
    return list(seen)[:8]


def _has_lines(row: Mapping[str, Any]) -> bool:
    return any(k in _LINE_LISTS and isinstance(v, list) for k, v in row.items())


def _field_lines(payload: Mapping[str, Any], depth: int = 0,
                 hidden: frozenset[str] = frozenset(),
                 keys_only: frozenset[str] = frozenset()) -> Iterable[str]:
    indent = "  " * depth
    for key, value in payload.items():
        if key in _HIDDEN or key in hidden or value in (None, "", [], {}):
            continue
        label = key.replace("_", " ")
        if key in keys_only and isinstance(value, Mapping):
            yield (f"{indent}- {label} ({number(len(value))}, values not shown): "
                   f"{cell(list(value), MAX_FIELD)}")
        elif isinstance(value, list) and value and all(
                isinstance(v, Mapping) for v in value) and any(_has_lines(v) for v in value):
            # Items carrying their own log lines (a run's failing steps): one block each.
            yield f"{indent}- {label} ({number(len(value))}):"
            for item in value:
                yield from _field_lines(item, depth + 1)
        elif isinstance(value, Mapping):
            if depth >= MAX_DEPTH or all(not isinstance(v, (Mapping, list)) for v in
                                         value.values()):
                yield f"{indent}- {label}: {cell(value, MAX_FIELD)}"
            else:
                yield f"{indent}- {label}:"
                yield from _field_lines(value, depth + 1)
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            yield f"{indent}- {label} ({number(len(value))}):"
            yield ""
            yield table(value, _columns(value), MAX_DETAIL_CELL)
            yield ""
        elif isinstance(value, list) and key in _LINE_LISTS:
            yield f"{indent}- {label} ({number(len(value))}):"
            yield "```"
            yield from (str(line) for line in value)
            yield "```"
        else:
            yield f"{indent}- {label}: {cell(value, MAX_FIELD)}"


def object_view(payload: Mapping[str, Any], spec: ViewSpec) -> str:
    """A single object (one application, one pull request): a title and its fields."""
    title = spec.title(payload) if spec.title else ""
    lines = list(_field_lines(payload, hidden=spec.hidden, keys_only=spec.keys_only))
    body = "\n".join(lines).strip()
    notes = _truncation(payload)
    return "\n\n".join(p for p in (title, body, notes) if p)


def render(payload: Mapping[str, Any], spec: ViewSpec | None = None,
           subject: str = "") -> str:
    """The view of any tool answer: an error, a page of items, or one object."""
    spec = spec or ViewSpec()
    if "error" in payload and "kind" in payload:
        return error_view(payload)
    if isinstance(payload.get("items"), list):
        return page_view(payload, spec, subject)
    return object_view(payload, spec)
