"""The model services tests start are stopped when the session ends, not left to idle out."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pilothouse.models.local_service_control import STARTED, stop_service


@pytest.fixture(scope="session", autouse=True)
def stop_started_model_services() -> Iterator[None]:
    # A service outlives the command that started it (here: this test process) on purpose;
    # holding the real model, it would keep 2 GB for PILOTHOUSE_LOCAL_IDLE_SECONDS.
    yield
    for paths in STARTED:
        stop_service(paths)
