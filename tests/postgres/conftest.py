"""A database per test on the session's throwaway PostgreSQL (`postgres` in tests/conftest.py).
Missing server binaries fail these tests loudly (scripts/test.sh installs them)."""

from __future__ import annotations

import uuid

import pytest

from pilothouse.testing.postgres_cluster import PostgresCluster


@pytest.fixture
def database_url(postgres: PostgresCluster) -> str:
    """A fresh, empty database of the session's cluster."""
    return postgres.create_database(f"t_{uuid.uuid4().hex[:12]}")
