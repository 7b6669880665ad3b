"""Fixtures for the RAG tests: one loaded embedding model, shared by every test."""

from __future__ import annotations

import pytest

from pilothouse.tools.rag.embeddings import MiniLMEmbeddings


@pytest.fixture(scope="session")
def embeddings() -> MiniLMEmbeddings:
    """The real offline model (loading it once saves ~0.3 s per test)."""
    return MiniLMEmbeddings()
