"""Split source files into chunks that follow the code's own structure.

Python is parsed with `ast`: each function, class (or, for a long class, its header and each
method) becomes a chunk, decorators and leading comments included, and module-level code
between definitions is grouped. Other languages use per-language boundary patterns
(`boundaries.py`). A chunk longer than the cap is cut into overlapping windows so no part of a
long function is invisible to search.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import PurePosixPath

from pilothouse.tools.rag.boundaries import Boundary, find_boundaries, language_for

#: Lines per chunk. The embedding model reads ~256 tokens (~60 short lines of code).
MAX_LINES = 60
MAX_CHARS = 2400
OVERLAP_LINES = 6
#: Segments with fewer non-blank lines are merged into a neighbour rather than stored alone.
MIN_LINES = 4


@dataclass(frozen=True)
class Chunk:
    """A contiguous, 1-based inclusive line range of one file, with what it defines."""

    path: str
    language: str
    symbol: str
    start_line: int
    end_line: int
    text: str
    #: Every name this chunk defines (the symbol, plus e.g. module-level constants).
    names: tuple[str, ...] = ()


@dataclass
class _Segment:
    start: int  # 0-based, inclusive
    end: int  # 0-based, exclusive
    symbol: str
    names: list[str]


def chunk_text(path: str, text: str) -> list[Chunk]:
    """Chunks of one file's `text`; `path` is the root-relative POSIX path it came from."""
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        return []
    language = language_for(PurePosixPath(path).name)
    segments = _python_segments(text, lines) if language == "python" else None
    if segments is None:
        segments = _segments_from_boundaries(find_boundaries(language, lines), len(lines))
    segments = _merge_small(segments, lines)
    chunks: list[Chunk] = []
    for seg in segments:
        chunks.extend(_windows(path, language, lines, seg))
    return chunks


def _python_segments(text: str, lines: list[str]) -> list[_Segment] | None:
    """Definitions and grouped module-level code, or None when the file does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    segments: list[_Segment] = []
    cursor = 0
    loose: list[str] = []  # names assigned by module-level code since the last definition
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            loose.extend(_assigned_names(node))
            continue
        start = _leading_comments(lines, _first_line(node))
        end = node.end_lineno or node.lineno
        if start > cursor and any(line.strip() for line in lines[cursor:start]):
            segments.append(_Segment(cursor, start, "", loose))
        loose = []
        if isinstance(node, ast.ClassDef) and end - start > MAX_LINES:
            segments.extend(_class_segments(node, lines, start, end))
        else:
            names = [node.name]
            if isinstance(node, ast.ClassDef):
                names += [f"{node.name}.{m.name}" for m in _methods(node)]
            segments.append(_Segment(start, end, node.name, names))
        cursor = end
    if cursor < len(lines) and any(line.strip() for line in lines[cursor:]):
        segments.append(_Segment(cursor, len(lines), "", loose))
    return segments


def _class_segments(node: ast.ClassDef, lines: list[str], start: int, end: int) -> list[_Segment]:
    """A long class: its header (signature, docstring, attributes), then one chunk per method."""
    methods = _methods(node)
    segments: list[_Segment] = []
    cursor = start
    header_names = [node.name]
    for method in methods:
        m_start = _leading_comments(lines, _first_line(method))
        if any(line.strip() for line in lines[cursor:m_start]):
            segments.append(_Segment(cursor, m_start, node.name, header_names))
            header_names = []
        m_end = method.end_lineno or method.lineno
        qualified = f"{node.name}.{method.name}"
        segments.append(_Segment(m_start, m_end, qualified, [qualified, method.name]))
        cursor = m_end
    if any(line.strip() for line in lines[cursor:end]):
        segments.append(_Segment(cursor, end, node.name, header_names))
    return segments


def _methods(node: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """0-based first line, counting decorators, which belong to the definition."""
    decorators = [d.lineno for d in node.decorator_list]
    return min([node.lineno, *decorators]) - 1


def _leading_comments(lines: list[str], start: int) -> int:
    """Move `start` up over the comment block directly above a definition."""
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return start


def _assigned_names(node: ast.stmt) -> list[str]:
    """Top-level names a module statement binds (constants, aliases, imports are skipped)."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _segments_from_boundaries(boundaries: list[Boundary], total: int) -> list[_Segment]:
    """Cut a file at each boundary; text before the first one forms its own segment."""
    segments: list[_Segment] = []
    starts = [b.line for b in boundaries]
    if not starts or starts[0] > 0:
        segments.append(_Segment(0, starts[0] if starts else total, "", []))
    for i, boundary in enumerate(boundaries):
        end = starts[i + 1] if i + 1 < len(starts) else total
        names = [boundary.symbol] if boundary.symbol else []
        segments.append(_Segment(boundary.line, end, boundary.symbol, names))
    return segments


def _merge_small(segments: list[_Segment], lines: list[str]) -> list[_Segment]:
    """Fold tiny segments (a lone import, a one-line constant, a class header) into a neighbour.

    A tiny segment joins the one after it, which it usually introduces (a class header its
    first method, a comment block its definition); the last one joins its predecessor.
    """

    def size(seg: _Segment) -> int:
        return sum(1 for line in lines[seg.start : seg.end] if line.strip())

    merged: list[_Segment] = []
    carry: _Segment | None = None
    for seg in segments:
        if size(seg) == 0:
            continue
        seg = _Segment(seg.start, seg.end, seg.symbol, list(seg.names))
        if carry is not None:
            if seg.end - carry.start <= MAX_LINES:
                seg = _join(carry, seg)
            else:
                merged.append(carry)
            carry = None
        if size(seg) < MIN_LINES:
            carry = seg
        else:
            merged.append(seg)
    if carry is not None:
        if merged and carry.end - merged[-1].start <= MAX_LINES:
            merged[-1] = _join(merged[-1], carry)
        else:
            merged.append(carry)
    return merged


def _join(first: _Segment, second: _Segment) -> _Segment:
    names = first.names + [n for n in second.names if n not in first.names]
    return _Segment(first.start, second.end, first.symbol or second.symbol, names)


def _windows(path: str, language: str, lines: list[str], seg: _Segment) -> list[Chunk]:
    """One chunk for a short segment; overlapping windows for a long one."""
    start, end = seg.start, seg.end
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    chunks: list[Chunk] = []
    names = tuple(dict.fromkeys(seg.names))
    while start < end:
        stop, size = start, 0
        while stop < end and stop - start < MAX_LINES and (size < MAX_CHARS or stop == start):
            size += len(lines[stop]) + 1
            stop += 1
        body = "\n".join(lines[start:stop])
        chunks.append(Chunk(path, language, seg.symbol, start + 1, stop, body, names))
        if stop >= end:
            break
        start = max(stop - OVERLAP_LINES, start + 1)
    return chunks
