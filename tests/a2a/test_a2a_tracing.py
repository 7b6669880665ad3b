"""A2A hops traced: one trace from the supervisor's turn through the remote agent's model calls."""

from __future__ import annotations

from collections.abc import Callable

from a2a_harness import ServeAgents, a2a_client, stream
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from pilothouse.a2a.remote import RemoteSubAgent
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.observability.tracing import TracingSetup
from pilothouse.runtime.events import Answer
from pilothouse.runtime.session import Conversation


def finished(setup: TracingSetup) -> list[ReadableSpan]:
    assert setup.memory is not None
    return list(setup.memory.get_finished_spans())


def named(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def trace_of(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.trace_id


async def test_the_agents_spans_join_the_supervisors_trace(
    spans: TracingSetup, serve_agents: ServeAgents,
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    # Scripted without tools: nothing could ground its names (grounding has its own tests).
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS="grounding")
    argocd = AgentFactory(settings, scripted_setup(["payments-api is Degraded."]),
                          InMemorySaver()).build(Toolkit(name="argocd", prompt=""), "Argo CD.")
    ask = AIMessage(content="", tool_calls=[{"name": "ask_argocd", "args": {
        "question": "which apps are degraded?"}, "id": "call-1", "type": "tool_call"}])
    async with serve_agents(argocd) as (url, _):
        remote = RemoteSubAgent("argocd", f"{url}/a2a/argocd")
        try:
            supervisor = AgentFactory(settings, scripted_setup([ask, "payments-api is degraded."]),
                                      InMemorySaver()).supervisor_over([remote])
            events = [e async for e in Conversation(supervisor.graph, "s-1",
                                                    agent="supervisor").ask("degraded apps?")]
        finally:
            await remote.aclose()
    # One agent answered: the supervisor passes its answer through.
    assert [e.text for e in events if isinstance(e, Answer)] == ["payments-api is Degraded."]

    found = finished(spans)
    (root,) = named(found, "invoke_agent supervisor")
    hops = named(found, "a2a SendMessage argocd")
    (client,) = [s for s in hops if s.kind is SpanKind.CLIENT]
    (server,) = [s for s in hops if s.kind is SpanKind.SERVER]
    (agent_turn,) = named(found, "invoke_agent argocd")
    agent_chats = [s for s in found if s.name.startswith("chat ")
                   and (s.attributes or {}).get("gen_ai.agent.name") == "argocd"]
    assert agent_chats, [s.name for s in found]

    # One trace: supervisor turn -> A2A client hop -> A2A server hop -> the agent's turn.
    trace_id = trace_of(root)
    for span in [client, server, agent_turn, *agent_chats]:
        assert trace_of(span) == trace_id, span.name
    assert server.parent is not None and client.context is not None
    assert server.parent.span_id == client.context.span_id and server.parent.is_remote
    assert agent_turn.parent is not None and server.context is not None
    assert agent_turn.parent.span_id == server.context.span_id
    assert (server.attributes or {})["pilothouse.a2a.task_id"] == \
        (client.attributes or {})["pilothouse.a2a.task_id"]


async def test_a_caller_without_trace_context_starts_a_trace_of_its_own(
    spans: TracingSetup, serve_agents: ServeAgents,
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    argocd = AgentFactory(make_settings(), scripted_setup(["fine"], default="fine"),
                          InMemorySaver()).build(Toolkit(name="argocd", prompt=""), "Argo CD.")
    async with serve_agents(argocd) as (url, _), a2a_client(f"{url}/a2a/argocd") as client:
        await stream(client, "apps?")
        await stream(client, "clusters?")

    servers = named(finished(spans), "a2a SendMessage argocd")
    assert [s.kind for s in servers] == [SpanKind.SERVER, SpanKind.SERVER]
    assert all(s.parent is None for s in servers)
    assert trace_of(servers[0]) != trace_of(servers[1])
