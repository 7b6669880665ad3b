"""Split source files into chunks that follow the code's own structure.

Python, Go, JavaScript/TypeScript, Java, Rust, C/C++, shell and HCL are parsed with tree-sitter
(`grammars.py`; what counts as a definition is in `languages.py`): each function, class or type
becomes a chunk, with the comments, attributes and decorators directly above it, and the code
between definitions is grouped. A type longer than the cap is split at its members (its header,
then one chunk per method). Because the chunker reads syntax, a declaration-looking line inside
a string is text, and a signature spread over several lines is still one definition. Other
files (YAML, Markdown, TOML, Dockerfiles, ...) are cut at line patterns (`boundaries.py`). A
chunk still longer than the cap is cut into overlapping windows so no part of it is invisible
to search.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from tree_sitter import Node

from pilothouse.tools.rag import grammars
from pilothouse.tools.rag.boundaries import Boundary, find_boundaries, language_for
from pilothouse.tools.rag.languages import RULES
from pilothouse.tools.rag.syntax import COMMENT_TYPES, LEADING_TYPES, Definition, LanguageRules

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
    if language in grammars.PARSED_LANGUAGES:
        # Parsing the lines rejoined with "\n" keeps tree rows equal to `lines` indices, which
        # str.splitlines() would not for a form feed or a lone carriage return.
        source = "\n".join(lines).encode("utf-8", "replace")
        root = grammars.parse(language, path, source).root_node
        segments = _Walker(RULES[language], lines).segments(root)
    else:
        segments = _segments_from_boundaries(find_boundaries(language, lines), len(lines))
    segments = _merge_small(segments, lines)
    chunks: list[Chunk] = []
    for seg in segments:
        chunks.extend(_windows(path, language, lines, seg))
    return chunks


class _Walker:
    """Turns one syntax tree into segments: definitions, and the code between them."""

    def __init__(self, rules: LanguageRules, lines: list[str]) -> None:
        self.rules = rules
        self.lines = lines
        #: Rows that hold only a comment or attribute, which a definition below may claim.
        self.leading_rows: set[int] = set()

    def segments(self, root: Node) -> list[_Segment]:
        return self._level(list(self._units(root)), 0, len(self.lines), "", [])

    def _units(self, node: Node) -> Iterator[Node]:
        """The nodes at one level, reading through transparent containers and parse errors."""
        for child in node.named_children:
            if child.type in self.rules.transparent or child.type == "ERROR":
                yield from self._units(child)
            elif (inner := self.rules.opens(child)) is not None:
                yield from self._units(inner)
            else:
                yield child

    def _level(
        self, units: list[Node], start: int, end: int, owner: str, header: list[str]
    ) -> list[_Segment]:
        """Segments for `units` within rows start..end; code between definitions is grouped
        under `owner` (the type being split, '' at the top), the first group named `header`."""
        segments: list[_Segment] = []
        cursor, loose = start, list(header)
        for node in units:
            if node.type in LEADING_TYPES:
                self._mark_leading(node)
                continue
            found = self._definition(node, top=not owner)
            if found is None:
                if not owner:  # a type's fields and attributes are its own, not the file's
                    loose.extend(n for n in self.rules.loose_names(node) if n)
                continue
            d_start, d_end = max(self._claim_leading(node, cursor), cursor), self._end(node) + 1
            if d_end <= cursor:
                continue
            if d_start > cursor and self._has_text(cursor, d_start):
                segments.append(_Segment(cursor, d_start, owner, loose))
                loose = []
            elif not owner:
                loose = []
            segments.extend(self._definition_segments(found, d_start, d_end, owner))
            cursor = d_end
        if cursor < end and self._has_text(cursor, end):
            segments.append(_Segment(cursor, end, owner, loose))
        return segments

    def _definition(self, node: Node, *, top: bool) -> Definition | None:
        member = self.rules.member
        return self.rules.definition(node) if top or member is None else member(node)

    def _definition_segments(
        self, found: Definition, start: int, end: int, owner: str
    ) -> list[_Segment]:
        symbol = f"{owner}.{found.symbol}" if owner else found.symbol
        scope = f"{owner}.{found.scope or found.symbol}" if owner else found.scope or found.symbol
        members = self._members(found)
        if end - start > MAX_LINES and members:
            # Too long for one chunk: split at member boundaries (header, then each member).
            return self._level(members, start, end, scope, [symbol])
        names = [symbol, *found.names]
        if owner:
            names.append(found.symbol)
        for member in members:
            inner = self._definition(member, top=False)
            if inner is not None:
                names.append(f"{scope}.{inner.symbol}")
                if self.rules.bare_member_names:
                    names.append(inner.symbol)
        return [_Segment(start, end, symbol, names)]

    def _members(self, found: Definition) -> list[Node]:
        if found.body is None:
            return []
        units = list(self._units(found.body))
        if not any(self._definition(u, top=False) for u in units):
            return []
        return [u for u in units if u.type in LEADING_TYPES or self._definition(u, top=False)]

    def _claim_leading(self, node: Node, floor: int) -> int:
        """Move a definition's first row up over the comment block directly above it."""
        start = node.start_point.row
        while start > floor and start - 1 in self.leading_rows:
            start -= 1
        return start

    def _mark_leading(self, node: Node) -> None:
        """Remember a comment's rows if it stands on lines of its own."""
        row, column = node.start_point
        line = self.lines[row] if row < len(self.lines) else ""
        # Columns count bytes; indentation is ASCII, so its length in characters is the same.
        if column == len(line) - len(line.lstrip()):
            self.leading_rows.update(range(row, _last_row(node) + 1))

    def _end(self, node: Node) -> int:
        """A definition's last row, leaving out comments that trail its body (which an
        indented language parses as part of it) and marking them for what follows."""
        while node.children:
            children = list(node.children)
            while len(children) > 1 and children[-1].type in COMMENT_TYPES:
                self._mark_leading(children.pop())
            node = children[-1]
        return _last_row(node)

    def _has_text(self, start: int, end: int) -> bool:
        return any(line.strip() for line in self.lines[start:end])


def _last_row(node: Node) -> int:
    """The last row a node covers; a node that ends with its newline ends on the row before."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point.row else row


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
