"""The agent's view of an MCP result keeps its structured content, and code reads that.

Through the real MCP client and the Argo CD server over the scenario fleet: the bridge's
`ToolMessage` carries the server's `structuredContent` as its artifact, errors included, the
search refusal is recognised from that artifact (never from the text), and the artifact
survives the checkpointer's serialisation, where the evaluation reads it back.
"""

from __future__ import annotations

from typing import Any

from argocd_harness import Connect
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from pilothouse.observability.middleware import is_search_rejection
from pilothouse.tools.mcp_connect import as_langchain_tool


async def _search(connect: Connect, query: str) -> ToolMessage:
    async with connect() as argocd:
        listed = {t.name: t for t in (await argocd.client.list_tools()).tools}
        tool = listed["search_argocd_resources"]
        bridge = as_langchain_tool(argocd.client, tool.name, tool.description or "",
                                   tool.input_schema)
        message = await bridge.ainvoke({"type": "tool_call", "id": "call-1", "name": tool.name,
                                        "args": {"query": query}})
    assert isinstance(message, ToolMessage)
    return message


async def test_a_search_refused_as_too_broad_is_an_error_with_its_payload_as_artifact(
        connect: Connect) -> None:
    message = await _search(connect, "condor")

    assert message.status == "error"
    artifact: Any = message.artifact
    assert artifact["kind"] == "SearchTooBroad"
    assert artifact["total_matches"] == 1200 and artifact["limit"] == 1000
    # The model reads the same facts, rendered: the count and what to do.
    assert "1,200" in str(message.content) and artifact["suggestion"] in str(message.content)
    assert is_search_rejection(message)


async def test_an_answer_keeps_its_structured_content_and_is_no_rejection(
        connect: Connect) -> None:
    message = await _search(connect, "kestrel")

    assert message.status == "success"
    assert str(message.content).startswith("Showing all 18 matches for 'kestrel'.")
    assert message.artifact["pagination"]["total_items"] == 18
    assert not is_search_rejection(message)


async def test_the_rejection_is_read_from_the_artifact_not_from_the_text(
        connect: Connect) -> None:
    refused = await _search(connect, "condor")
    same_text_only = ToolMessage(refused.content, tool_call_id="call-2", status="error")
    other_error = ToolMessage("{}", tool_call_id="call-3", status="error",
                              artifact={**refused.artifact, "kind": "UserInputError"})

    assert not is_search_rejection(same_text_only)
    assert not is_search_rejection(other_error)


async def test_the_artifact_survives_the_checkpointer(connect: Connect) -> None:
    refused = await _search(connect, "condor")
    serde = JsonPlusSerializer()

    stored = serde.loads_typed(serde.dumps_typed(refused))

    assert isinstance(stored, ToolMessage) and stored.artifact == refused.artifact
    assert is_search_rejection(stored)
