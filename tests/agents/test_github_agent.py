"""The GitHub agent's toolkit: the real tool server for the configured API, tool first."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pilothouse.agents.github import open_github_toolkit
from pilothouse.config import Settings
from pilothouse.runtime.tool_choice import ToolChoiceMiddleware
from pilothouse.sandbox.github.server import running_github_sandbox


async def test_the_toolkit_reads_its_connection_from_settings_and_calls_a_tool_first(
    make_settings: Callable[..., Settings],
) -> None:
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(), github_api_url=sandbox.url,
                                       github_token=sandbox.token)
        async with open_github_toolkit(settings) as toolkit:
            names = {t.name for t in toolkit.tools}
            answer = await next(t for t in toolkit.tools
                                if t.name == "list_pull_requests_awaiting_review").ainvoke(
                {"owner": "acme-corp", "repo": "payments-api"})

    assert "list_pull_requests_awaiting_review" in names
    # A real answer from the sandbox, rendered, not an auth error.
    assert str(answer).startswith("Showing all") and "pull requests in acme-corp/payments-api" \
        in str(answer)
    assert any(isinstance(m, ToolChoiceMiddleware) for m in toolkit.extra_middleware)
