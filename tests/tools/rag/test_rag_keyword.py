"""Keyword ranking pieces: identifier tokens, BM25 over chunks, rank fusion, name mentions."""

from __future__ import annotations

from pilothouse.tools.rag.catalog import mentions
from pilothouse.tools.rag.keyword import (
    KeywordIndex,
    code_tokens,
    query_tokens,
    reciprocal_rank_fusion,
)


def test_identifiers_are_kept_whole_and_split() -> None:
    assert code_tokens("Settings.from_env") == ["settings", "from_env", "from", "env"]
    assert code_tokens("HTTPServerError") == ["httpservererror", "http", "server", "error"]
    assert code_tokens("maxToolOutputSize = 10") == [
        "maxtooloutputsize", "max", "tool", "output", "size", "10",
    ]


def test_question_words_are_dropped_from_queries() -> None:
    assert query_tokens("where is the retry budget used?") == ["retry", "budget"]


def test_bm25_ranks_the_chunk_with_the_rare_term_first_and_honours_allowed() -> None:
    corpus = {
        "a": code_tokens("def load_config(path): return read(path)"),
        "b": code_tokens("def retry_budget(seconds): return seconds * 2"),
        "c": code_tokens("def load_data(path): return read(path)"),
    }
    index = KeywordIndex(list(corpus), list(corpus.values()))
    assert index.rank("retry budget")[0] == "b"
    assert index.rank("load path", allowed={"c"}) == ["c"]
    assert index.rank("completely unrelated words") == []
    assert KeywordIndex([], []).rank("anything") == []


def test_a_term_in_every_chunk_still_counts_and_shorter_chunks_win() -> None:
    # Classic BM25 gives such a term a negative weight; Lucene's IDF keeps it positive.
    corpus = [code_tokens("deploy app"), code_tokens("deploy app to the cluster with helm")]
    index = KeywordIndex(["short", "long"], corpus)
    assert index.rank("deploy") == ["short", "long"]
    assert all(index.scores("deploy") > 0)


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion([["x", "y", "z"], ["y", "x"], ["y"]])
    assert max(fused, key=lambda k: fused[k]) == "y"
    assert fused["z"] < fused["x"] < fused["y"]


def test_mentions_finds_paths_and_code_names_but_not_plain_words() -> None:
    paths, names = mentions(
        "Why does build_agent in runtime/builder.py call Settings.from_env, and what is "
        "CodeIndex? Also check src/pilothouse/tools/ and `walk_sources`."
    )
    assert paths == ["runtime/builder.py", "src/pilothouse/tools"]
    assert {"build_agent", "Settings.from_env", "CodeIndex", "walk_sources"} <= set(names)
    assert not {"Why", "Also", "check", "call"} & set(names)
