"""The Argo CD agent end to end: scripted model -> real MCP stdio server -> sandbox over HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.argocd import open_argocd_toolkit
from pilothouse.agents.factory import AgentFactory
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import Answer, ApprovalRequest, Event, ToolResult
from pilothouse.runtime.session import Conversation
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_model import tool_call
from pilothouse.tools.mcp_connect import call_for_payload


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=819) as running:
        yield running


LEAD = "Here is the first page of the fleet; ask for the next page to see more."


def a_project(settings: Settings) -> str:
    """A project of the sandbox other than the built-in one (read over HTTP, not assumed)."""
    answer = httpx.get(f"{settings.argocd_url}/api/v1/projects",
                       headers={"Authorization": f"Bearer {settings.argocd_token}"}).json()
    return next(str(p["metadata"]["name"]) for p in answer["items"]
                if p["metadata"]["name"] != "default")


def an_app(settings: Settings) -> str:
    """An application of the sandbox (read over HTTP, not assumed)."""
    answer = httpx.get(f"{settings.argocd_url}/api/v1/applications",
                       params={"fields": "items.metadata.name"},
                       headers={"Authorization": f"Bearer {settings.argocd_token}"}).json()
    return str(answer["items"][0]["metadata"]["name"])


def an_applicationset(settings: Settings) -> str:
    """An ApplicationSet of the sandbox (read over HTTP, not assumed)."""
    answer = httpx.get(f"{settings.argocd_url}/api/v1/applicationsets",
                       headers={"Authorization": f"Bearer {settings.argocd_token}"}).json()
    return str(answer["items"][0]["metadata"]["name"])


async def run(graph: Any, question: str, thread: str = "t") -> list[Event]:
    return [e async for e in Conversation(graph, thread).ask(question)]


async def test_inventory_question_pages_through_the_real_server(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    setup = scripted_setup([tool_call("list_applications", page=1), LEAD],
                           window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        assert "sync_application" not in {t.name for t in toolkit.tools}, "read-only default"
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        events = await run(graph, "List all ArgoCD applications")

    # The model wrote the lead; the page line, counts and table are the tool's view, verbatim.
    [answer] = [e.text for e in events if isinstance(e, Answer)]
    lead, view = answer.split("\n\n", 1)
    assert lead == LEAD
    assert view.startswith("PAGE 1 of 41 (819 applications). Ask for page 2 for more.")
    assert view.count("| Synced |") + view.count("| OutOfSync |") == 20
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.status == "success" and result.chars < 10_000


async def test_filters_and_names_nobody_asked_for_are_dropped_and_the_listing_answers(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    setup = scripted_setup([
        tool_call("list_applications", project="payments", sync_status="Synced",
                  health_status="Healthy"), LEAD,
        tool_call("list_applications", project="payments", sync_status="Synced",
                  health_status="Degraded"), LEAD,
        # A project copied from a few-shot example and a made-up selector.
        tool_call("list_applications", project="billing", selector="app=app1,app=app2",
                  sync_status="OutOfSync"), LEAD,
        # An example's filter in place of the one asked for.
        tool_call("list_applications", page=3, health_status="Progressing"), LEAD],
        window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        everything = await run(graph, "Show me the payments applications", "f-1")
        broken = await run(graph, "Which payments apps are unhealthy?", "f-2")
        drifted = await run(graph, "Which apps are OutOfSync right now?", "f-3")
        paged = await run(graph, "Which applications are OutOfSync? Go straight to page 3.",
                          "f-4")

    calls = [m.tool_calls[0]["args"] for thread in ("f-1", "f-2", "f-3", "f-4")
             for m in (await graph.aget_state({"configurable": {"thread_id": thread}})
                       ).values["messages"] if getattr(m, "tool_calls", None)]
    # Asked for all of them: both filters go. Asked for unhealthy ones: the health filter
    # stays, the sync filter nobody asked for goes.
    assert calls == [{"project": "payments"},
                     {"project": "payments", "health_status": "Degraded"},
                     {"sync_status": "OutOfSync"},
                     {"page": 3, "sync_status": "outofsync"}]
    [answer] = [e.text for e in everything if isinstance(e, Answer)]
    assert "where project=payments)" in answer or "where project=payments." in answer
    assert "health_status=Degraded" in next(e.text for e in broken if isinstance(e, Answer))
    assert "(119 applications where sync_status=OutOfSync)" in next(
        e.text for e in drifted if isinstance(e, Answer))
    assert "PAGE 3 of 6 (119 applications where sync_status=OutOfSync)" in next(
        e.text for e in paged if isinstance(e, Answer))
    # A page of applications answers the question: the model is asked only for its lead.
    choices = [r.tool_choice for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    assert choices == ["required", "none"] * 4


@pytest.mark.parametrize("decision", ["approve", "reject"])
async def test_real_sync_waits_for_approval_and_the_model_cannot_approve_itself(
    decision: str, argocd_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings(ARGOCD_READ_ONLY="false")
    async with open_argocd_toolkit(settings) as toolkit:
        listing = next(t for t in toolkit.tools if t.name == "list_applications")
        # One application per decision: a sync still running would make the dry run fail.
        items = (await call_for_payload(listing, {"page": 1, "page_size": 2}))["items"]
        app = items[["approve", "reject"].index(decision)]["name"]
        # The model claims approval itself; only the person's decision may count.
        sync = tool_call("sync_application", name=app, dry_run=False, approved=True)
        setup = scripted_setup([sync, "Done."], window=32_000, settings=settings)
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        conversation = Conversation(graph, f"sync-{decision}")

        first = [e async for e in conversation.ask(f"sync {app}")]
        stops = [type(e) for e in first if isinstance(e, ApprovalRequest | ToolResult)]
        assert stops == [ApprovalRequest], "nothing ran before the approval"

        answer: dict[str, Any] = {"type": decision}
        if decision == "reject":
            answer["message"] = "not now"
        rest = [e async for e in conversation.decide(answer)]

    result = next(e for e in rest if isinstance(e, ToolResult))
    if decision == "approve":
        assert result.status == "success"
        assert "accepted: yes" in result.preview
    else:
        assert result.status == "error" and "not now" in result.preview


async def test_the_model_is_not_shown_the_arguments_code_sets_and_an_invented_project_is_moot(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # Every tool's schema is read off the requests (the first call is offered the tools about
    # the one app named, the next one every tool).
    settings = argocd_settings(ARGOCD_READ_ONLY="false")
    setup = scripted_setup([tool_call("rollback_application", name="checkout-api-dev"),
                            "That is the plan."], window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        events = await run(graph, "what would a rollback of checkout-api-dev do?", "hidden")

    shown = {tool["function"]["name"]: tool["function"]["parameters"]["properties"]
             for request in setup.chat_model.requests  # type: ignore[attr-defined]
             for tool in request.tools}
    for name in ("rollback_application", "run_resource_action", "sync_application"):
        assert not {"approved", "expected_evidence", "follow_seconds"} & shown[name].keys()
        assert "dry_run" in shown[name] and "name" in shown[name]
    assert "project" not in shown["get_application"] | shown["rollback_application"]
    assert "project" in shown["list_applications"]  # a filter there, not a redundant scope
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.status == "success"  # the dry run, planned without any hidden argument


async def test_on_the_local_model_a_listing_is_answered_by_its_view_without_a_lead(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # Writing a lead above a view that answers took the local model 10-50 s (PILOTHOUSE_LOCAL_LEADS
    # turns it back on); the model still makes the call.
    settings = argocd_settings(PILOTHOUSE_MODEL="local:qwen2.5-coder-1.5b-instruct")
    setup = scripted_setup([tool_call("list_applications", page=1)], window=32_000,
                           settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        events = await run(graph, "List all ArgoCD applications", "no-lead")

    [answer] = [e.text for e in events if isinstance(e, Answer)]
    assert answer.startswith("PAGE 1 of 41 (819 applications). Ask for page 2 for more.")
    assert len(setup.chat_model.requests) == 1  # type: ignore[attr-defined]


async def test_the_apps_of_a_name_are_searched_for_that_name_not_an_examples(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    # The model's query is an example's word, not the name the person gave.
    setup = scripted_setup([tool_call("search_argocd_resources", query="payments",
                                      resource_types="applicationsets"), LEAD],
                           window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        events = await run(graph, "Are the checkout-web apps healthy?", "named-apps")

    [answer] = [e.text for e in events if isinstance(e, Answer)]
    assert "for 'checkout-web'" in answer and "checkout-web-production" in answer


async def test_the_next_page_repeats_the_listing_with_its_filters_without_a_model_call(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    # The first question's call; then only leads: had a follow-up gone to the model, it would
    # have answered with a lead and made no call.
    project = a_project(settings)
    setup = scripted_setup([tool_call("list_applications", health_status="Degraded",
                                      page_size=5), LEAD, LEAD, LEAD,
                            tool_call("list_applications", project=project, page=2), LEAD],
                           window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        first = await run(graph, "Which applications are degraded? Five at a time.", "p-1")
        second = await run(graph, "next page", "p-1")
        back = await run(graph, "and the previous one?", "p-1")
        # A page of something the inventory holds is a new listing: the model writes it.
        await run(graph, f"next page of the {project} ones", "p-1")

    state = await graph.aget_state({"configurable": {"thread_id": "p-1"}})
    calls = [c["args"] for m in state.values["messages"] for c in getattr(m, "tool_calls", [])]
    assert calls == [{"health_status": "Degraded", "page_size": 5},
                     {"health_status": "Degraded", "page_size": 5, "page": 2},
                     {"health_status": "Degraded", "page_size": 5, "page": 1},
                     {"project": project, "page": 2}]
    answers = [next(e.text for e in events if isinstance(e, Answer))
               for events in (first, second, back)]
    assert "PAGE 2 of" in answers[1] and "| Degraded |" in answers[1]
    assert "| Healthy |" not in answers[1]
    assert answers[2].count("PAGE 1 of") == 1


async def test_a_question_naming_one_application_is_about_it(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    setup = scripted_setup([
        # Named in capitals, and the model misspells it: the call is about the app named.
        tool_call("get_application", name="payments-api-prod"), "It is there.",
        tool_call("list_applications", page=1), LEAD],
        window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        named = await run(graph, "how's PAYMENTS-API-PRODUCTION doing?", "n-1")
        unnamed = await run(graph, "how's the fleet doing?", "n-2")

    [call] = [c for c in (await graph.aget_state({"configurable": {"thread_id": "n-1"}})
                          ).values["messages"][1].tool_calls]
    assert call["args"] == {"name": "payments-api-production"}
    assert any(isinstance(e, ToolResult) and e.status == "success" for e in named)
    first, _, other, _ = setup.chat_model.requests  # type: ignore[attr-defined]
    one_app = {t["function"]["name"] for t in first.tools}
    assert "get_application" in one_app and "get_application_events" in one_app
    assert not one_app & {"list_applications", "search_argocd_resources", "list_clusters"}
    assert first.tool_choice == "required"
    # A question naming no application keeps every tool.
    assert {t["function"]["name"] for t in other.tools} > one_app | {"list_applications"}
    assert next(e.text for e in unnamed if isinstance(e, Answer)).startswith(LEAD)


async def test_a_later_question_pointing_back_is_about_the_app_the_agent_acted_on(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    app = an_app(settings)
    setup = scripted_setup([
        tool_call("get_application", name=app), "It is there.",
        # "it" names no app: the model's call of a listing is not what the person means.
        tool_call("get_application_history", name="it"), "Its deploys.",
        tool_call("list_applications", page=1), LEAD,
        tool_call("list_applications", page=1), LEAD],
        window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        await run(graph, f"is {app} ok?", "f-1")
        await run(graph, "when did it last get deployed?", "f-1")
        # A later question that does not point back keeps every tool, and one pointing
        # back after a listing means the listing's items, not the app before it.
        await run(graph, "and the whole fleet, page one?", "f-1")
        await run(graph, "which of them are synced?", "f-1")

    state = await graph.aget_state({"configurable": {"thread_id": "f-1"}})
    calls = [c for m in state.values["messages"] for c in getattr(m, "tool_calls", [])]
    assert calls[1]["name"] == "get_application_history"
    assert calls[1]["args"]["name"] == app
    _, _, later, _, fleet, _, items, _ = setup.chat_model.requests  # type: ignore[attr-defined]
    offered = {t["function"]["name"] for t in later.tools}
    assert "get_application_history" in offered and "list_applications" not in offered
    for every_tool in (fleet, items):
        assert "list_applications" in {t["function"]["name"] for t in every_tool.tools}


async def test_a_question_naming_one_project_lists_that_projects_applications(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    # The model spells the project as the person did: the call filters by the inventory's.
    setup = scripted_setup([tool_call("list_applications", project="PAYMENTS",
                                      health_status="Degraded"), LEAD,
                            tool_call("list_applications", page=1), LEAD],
                           window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        events = await run(graph, "Which apps in project PAYMENTS are degraded?", "p-scope")
        # "inventory" is a project's name here too: whether to filter by it is the model's.
        await run(graph, "show me the whole inventory of apps", "p-word")

    first = setup.chat_model.requests[0]  # type: ignore[attr-defined]
    assert {t["function"]["name"] for t in first.tools} == {
        "list_applications", "list_applicationsets", "search_argocd_resources"}
    assert "'PAYMENTS' is an Argo CD project (payments)" in str(first.messages[-1].content)
    state = await graph.aget_state({"configurable": {"thread_id": "p-scope"}})
    [call] = state.values["messages"][1].tool_calls
    assert call["args"] == {"project": "payments", "health_status": "Degraded"}
    [answer] = [e.text for e in events if isinstance(e, Answer)]
    assert "| payments |" in answer and "| Degraded |" in answer
    state = await graph.aget_state({"configurable": {"thread_id": "p-word"}})
    assert state.values["messages"][1].tool_calls[0]["args"] == {"page": 1}


async def test_a_question_naming_an_applicationset_searches_for_its_applications(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    appset = an_applicationset(settings)
    # The model searches for an example's word: the search is for the set the person named.
    setup = scripted_setup([tool_call("search_argocd_resources", query="payments",
                                      resource_types="applicationsets"), LEAD],
                           window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        events = await run(graph, f"are the {appset.upper()} apps healthy?", "set-1")

    first = setup.chat_model.requests[0]  # type: ignore[attr-defined]
    # The one tool that takes the set's name: no application is called by it.
    assert {t["function"]["name"] for t in first.tools} == {"search_argocd_resources"}
    assert first.tool_choice == "required"
    assert f"is an Argo CD ApplicationSet ({appset})" in str(first.messages[-1].content)
    state = await graph.aget_state({"configurable": {"thread_id": "set-1"}})
    [call] = state.values["messages"][1].tool_calls
    assert call == {**call, "name": "search_argocd_resources",
                    "args": {"query": appset, "resource_types": None}}
    [answer] = [e.text for e in events if isinstance(e, Answer)]
    # The set and the applications it generates.
    assert f"for '{appset}'" in answer and "applicationsets 1" in answer
    assert f"| {appset}-" in answer


async def test_a_call_about_one_app_nobody_named_is_asked_again_without_such_tools(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    app = an_app(settings)
    typed = app[:-2] + app[-1]  # one letter dropped: a typo is still the person's name
    setup = scripted_setup([
        # A word of no message, as a few-shot example's app is: asked again.
        tool_call("get_application_events", name="ledgerline"),
        tool_call("list_applications", health_status="Degraded"), LEAD,
        tool_call("get_application_events", name=app), "Its events."],
        window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        await run(graph, "Which apps are degraded?", "g-1")
        await run(graph, f"why is {typed} broken?", "g-2")

    calls = [(c["name"], c["args"]) for thread in ("g-1", "g-2")
             for m in (await graph.aget_state({"configurable": {"thread_id": thread}})
                       ).values["messages"] for c in getattr(m, "tool_calls", None) or ()]
    # The typo is what the person named: the tool answers it with the near names.
    assert calls == [("list_applications", {"health_status": "Degraded"}),
                     ("get_application_events", {"name": typed})]
    again = setup.chat_model.requests[1]  # type: ignore[attr-defined]
    assert "get_application_events" not in {t["function"]["name"] for t in again.tools} \
        and "list_applications" in {t["function"]["name"] for t in again.tools}
