"""The grounding check: every number and resource-like name the model writes has a source.

A claim is a number (819, 1,200, #42, 1.31) or a name-like token: a path or repository
(`src/orders/db.py`, `example-org/orders-deploy`), a hyphenated resource name
(`orders-api-dev`), a commit SHA. It is supported when it occurs, as a whole token, in the
conversation the model was given: the question, the system prompt, earlier turns and, above
all, the tool results. A sentence (or line, or code block) carrying an unsupported claim is
removed, and the removal is reported, so an invented application or count never reaches a
person looking like a fact.

Words are not checked: a 1.5B model's wording is its own; its numbers and names are not.
Hyphenated English compounds ("read-only", "dry-run") are not names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?![\w])|(?<![\w.])\d+(?:\.\d+)*(?![\w])")
#: A token as names are written: letters, digits and the joiners of paths, hosts and names.
_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/:@]*[A-Za-z0-9_]|[A-Za-z0-9_]")
_HEX = re.compile(r"^[0-9a-f]{7,40}$")
_FILE = re.compile(r"\.[A-Za-z]{1,6}$")
#: Everyday compounds that look like resource names but are words.
COMMON_COMPOUNDS = frozenset({
    "read-only", "dry-run", "auto-sync", "out-of-sync", "up-to-date", "built-in", "follow-up",
    "step-by-step", "real-time", "long-running", "non-zero", "well-known", "e-mail", "re-run",
    "re-sync", "self-heal", "multi-step", "opt-in", "opt-out", "top-level", "end-to-end",
    "on-call", "in-progress", "sign-in", "set-up", "roll-back", "how-to", "one-off",
    "cross-cluster", "server-side", "client-side", "side-by-side", "non-production",
    "pre-production", "third-party", "open-source", "key-value", "read-write", "self-hosted",
    "so-called", "first-time", "high-level", "low-level", "short-lived", "long-lived",
    "least-privilege", "health-check", "rate-limit", "rate-limited", "time-out", "x-ray",
})


@dataclass(frozen=True)
class Claim:
    """A number or name in the model's text, as written and as compared."""

    text: str
    key: str


def _number_key(text: str) -> str:
    return text.replace(",", "")


def _is_name(token: str) -> bool:
    lowered = token.lower().strip(".:/")
    if len(lowered) < 3 or lowered in COMMON_COMPOUNDS or lowered.startswith("http"):
        return False
    if _HEX.match(lowered) and any(c.isdigit() for c in lowered) and any(
            c.isalpha() for c in lowered):
        return True
    if "/" in lowered or "-" in lowered.strip("-"):
        return any(c.isalpha() for c in lowered)
    return bool(_FILE.search(lowered)) and not lowered.replace(".", "").isdigit() and \
        lowered.count(".") == 1 and len(lowered.split(".")[0]) > 1


def _inside_name(text: str, start: int) -> bool:
    """Whether the number at `start` of `text` is written into a name or an option: after a
    hyphen that follows a letter (`eu-west-1`, `node-pool-3`) or that opens a word (`git log
    -5`). Such digits state no quantity; a date's or a range's parts (`2026-07-31`, `26-65`)
    do: their hyphen follows a digit."""
    if start == 0 or text[start - 1] != "-":
        return False
    before = text[start - 2] if start >= 2 else " "
    return not (before.isdigit() or before in "_-")


def claims(text: str) -> list[Claim]:
    """The numbers and resource-like names in `text`."""
    found = [Claim(m.group(0), _number_key(m.group(0))) for m in _NUMBER.finditer(text)
             if not _inside_name(text, m.start())]
    for match in _TOKEN.finditer(text):
        token = match.group(0).strip(".:")
        if _is_name(token):
            found.append(Claim(token, token.lower()))
    return found


def _parts(token: str) -> Iterable[str]:
    lowered = token.lower().strip(".:/")
    yield lowered
    for piece in re.split(r"[/:@=,]", lowered):
        piece = piece.strip(".")
        if piece:
            yield piece
            yield piece.removesuffix(".git")


class Sources:
    """What the conversation said: the tokens and numbers a claim may come from."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.tokens: set[str] = set()
        self.numbers: set[str] = set()
        for text in texts:
            self.numbers.update(_number_key(m.group(0)) for m in _NUMBER.finditer(text)
                                if not _inside_name(text, m.start()))
            for match in _TOKEN.finditer(text):
                self.tokens.update(_parts(match.group(0)))
        #: Full commit SHAs: a short SHA is supported by the full one it abbreviates.
        self._shas = tuple(t for t in self.tokens if _HEX.match(t))

    def supports(self, claim: Claim) -> bool:
        if claim.key and claim.key[0].isdigit() and _NUMBER.fullmatch(claim.text):
            return claim.key in self.numbers
        if claim.key in self.tokens:
            return True
        if _HEX.match(claim.key) and any(sha.startswith(claim.key) for sha in self._shas):
            return True
        parts = [p for p in re.split(r"[/:@]", claim.key.strip("/")) if p]
        return bool(parts) and all(p in self.tokens or p.removesuffix(".git") in self.tokens
                                   for p in parts)


@dataclass(frozen=True)
class Grounded:
    """The text with unsupported passages removed, and the claims that caused it."""

    text: str
    removed: tuple[str, ...]


_BLOCK = re.compile(r"```.*?```", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=\S)")


def _passages(text: str) -> list[str]:
    """Code blocks whole; other text by line, lines by sentence."""
    passages: list[str] = []
    position = 0
    for block in _BLOCK.finditer(text):
        passages.extend(_sentences(text[position:block.start()]))
        passages.append(block.group(0))
        position = block.end()
    passages.extend(_sentences(text[position:]))
    return passages


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        pieces = _SENTENCE_END.split(line)
        for index, piece in enumerate(pieces):
            out.append(piece if index == len(pieces) - 1 else piece + " ")
    return out


def ground(text: str, sources: Sources) -> Grounded:
    """`text` without the passages whose numbers or names `sources` do not support."""
    kept: list[str] = []
    removed: list[str] = []
    for passage in _passages(text):
        unsupported = [c.text for c in claims(passage) if not sources.supports(c)]
        if unsupported:
            removed.extend(unsupported)
            if passage.endswith("\n"):
                kept.append("\n")
        else:
            kept.append(passage)
    cleaned = re.sub(r"\n{3,}", "\n\n", "".join(kept)).strip()
    return Grounded(cleaned, tuple(dict.fromkeys(removed)))
