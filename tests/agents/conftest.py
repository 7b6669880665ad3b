"""Fixtures shared by the agent tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pilothouse.config import Settings
from pilothouse.sandbox.argocd.server import RunningSandbox


@pytest.fixture
def argocd_settings(sandbox: RunningSandbox,
                    make_settings: Callable[..., Settings]) -> Callable[..., Settings]:
    """Settings for the test module's Argo CD sandbox and a 32,000-token window, `env` on top
    (the module defines `sandbox`)."""

    def make(**env: str) -> Settings:
        return make_settings(MAX_CONTEXT_TOKENS="32000", ARGOCD_URL=sandbox.url,
                             ARGOCD_TOKEN=sandbox.token, **env)

    return make
