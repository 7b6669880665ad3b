"""Keyword ranking for code: identifier-aware tokens, BM25, and reciprocal rank fusion.

Embeddings find "where are settings read from the environment" in `Settings.from_env`, but
miss exact names (`MAX_TOOL_OUTPUT_SIZE`, `walk_sources`) that a person types verbatim; BM25
over split identifiers finds those. Fusing the two rankings by rank (not by score, which
live on different scales) gives the hybrid its robustness.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
#: Question words carry no signal about which code is meant.
_QUESTION_WORDS = """a an and are as at be by can do does for from how i in is it of on or our the
this to was what when where which who why with we you your there their these that into via use
used uses using code file files function functions class method"""
STOPWORDS = frozenset(_QUESTION_WORDS.split())
#: The constant `k` of reciprocal rank fusion: 60 is the value from Cormack et al. (2009) that
#: keeps one list's top hit from dominating the other's.
RRF_K = 60


def code_tokens(text: str) -> list[str]:
    """Lowercased tokens, with identifiers also split: `from_env` -> from_env, from, env."""
    tokens: list[str] = []
    for word in _WORD.findall(text):
        lowered = word.lower()
        if len(lowered) > 1:
            tokens.append(lowered)
        parts = [p.lower() for piece in word.split("_") for p in _CAMEL.findall(piece)]
        if len(parts) > 1:
            tokens.extend(p for p in parts if len(p) > 1)
    return tokens


def query_tokens(text: str) -> list[str]:
    """Tokens of a natural-language question, minus question words."""
    return [t for t in code_tokens(text) if t not in STOPWORDS]


def document_tokens(path: str, symbol: str, text: str) -> list[str]:
    """What BM25 sees for a chunk: its path and symbol (twice: they are strong signals) + body."""
    head = f"{path} {symbol}"
    return code_tokens(head) * 2 + code_tokens(text)


class KeywordIndex:
    """Okapi BM25 over a fixed set of chunks, with postings lists so a query costs O(matches).

    IDF is Lucene's `log(1 + (N - n + 0.5) / (n + 0.5))`, positive for every term: the classic
    form goes negative for terms in more than half the chunks, which on a small or homogeneous
    corpus ranks a chunk lower for matching the query.
    """

    K1 = 1.2
    B = 0.75

    def __init__(self, ids: Sequence[str], corpus: Sequence[list[str]]) -> None:
        self.ids = list(ids)
        lengths = np.array([len(doc) for doc in corpus], dtype=np.float64)
        average = float(lengths.mean()) if len(lengths) and lengths.mean() > 0 else 1.0
        self._norm = self.K1 * (1 - self.B + self.B * lengths / average)
        postings: dict[str, dict[int, int]] = {}
        for position, doc in enumerate(corpus):
            for term in doc:
                counts = postings.setdefault(term, {})
                counts[position] = counts.get(position, 0) + 1
        total = len(self.ids)
        self._postings = {
            term: (
                np.fromiter(counts.keys(), dtype=np.int64, count=len(counts)),
                np.fromiter(counts.values(), dtype=np.float64, count=len(counts)),
                math.log(1 + (total - len(counts) + 0.5) / (len(counts) + 0.5)),
            )
            for term, counts in postings.items()
        }

    def scores(self, query: str) -> npt.NDArray[np.float64]:
        """The BM25 score of every chunk for `query` (0 where no query term occurs)."""
        result = np.zeros(len(self.ids), dtype=np.float64)
        for term in set(query_tokens(query)):
            posting = self._postings.get(term)
            if posting is not None:
                docs, tf, idf = posting
                result[docs] += idf * tf * (self.K1 + 1) / (tf + self._norm[docs])
        return result

    def rank(self, query: str, allowed: set[str] | None = None, limit: int = 50) -> list[str]:
        """Ids of the best-matching chunks, best first; only chunks that match at all."""
        scores = self.scores(query)
        ranked: list[str] = []
        for i in np.argsort(-scores, kind="stable"):
            if scores[i] <= 0 or len(ranked) >= limit:
                break
            if allowed is None or self.ids[i] in allowed:
                ranked.append(self.ids[i])
        return ranked


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> dict[str, float]:
    """Fused score per id: the sum over rankings of 1 / (k + rank)."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused
