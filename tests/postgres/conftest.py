"""A real PostgreSQL for the scale-out tests: one throwaway cluster per session, a database per
test. Missing server binaries fail these tests loudly (scripts/test.sh installs them)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from pilothouse.testing.postgres_cluster import PostgresCluster, PostgresMissing, running_cluster


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    try:
        with running_cluster() as cluster:
            yield cluster
    except PostgresMissing as missing:
        pytest.fail(str(missing))


@pytest.fixture
def database_url(postgres: PostgresCluster) -> str:
    """A fresh, empty database of the session's cluster."""
    return postgres.create_database(f"t_{uuid.uuid4().hex[:12]}")
