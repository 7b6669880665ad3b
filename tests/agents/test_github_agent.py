"""The GitHub agent's toolkit: the real tool server for the configured API, tool first."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.github import COMMIT_SHA, open_github_toolkit
from pilothouse.agents.inventory import GitHubRepositories
from pilothouse.agents.issue_labels import IssueLabelMiddleware, said_labels
from pilothouse.config import Settings
from pilothouse.context.rewrite import ANSWERS_NOTE, TURN_NOTE
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import Answer, ContextNote
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.tool_choice import ToolChoiceMiddleware
from pilothouse.sandbox.github.server import running_github_sandbox
from pilothouse.testing.scripted_model import tool_call
from pilothouse.tools.github.connection import GitHubConnection


async def one_call(make_settings: Callable[..., Settings],
                   scripted_setup: Callable[..., ModelSetup], written: AIMessage,
                   question: str) -> tuple[dict[str, Any], list[Any]]:
    """The arguments of the one call the agent makes for `question` when its model writes
    `written` (over the real sandbox and tool server), and the turn's events."""
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(), github_api_url=sandbox.url,
                                       github_token=sandbox.token)
        setup = scripted_setup([written, "Here they are."], settings=settings)
        async with open_github_toolkit(settings) as toolkit:
            graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
            events = [e async for e in Conversation(graph, "one").ask(question)]
            [call] = [m.tool_calls[0]["args"] for m in (await graph.aget_state(
                {"configurable": {"thread_id": "one"}})).values["messages"]
                if getattr(m, "tool_calls", None)]
    return call, events


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


async def test_run_filters_nobody_asked_for_are_dropped(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # A few-shot example's filters on a question that asks for every recent run.
    copied = tool_call("list_workflow_runs", owner="acme-corp", repo="payments-api",
                       status="failure", branch="main")
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(), github_api_url=sandbox.url,
                                       github_token=sandbox.token)
        setup = scripted_setup([copied, "Here are the runs.", copied, "Here are the failures."],
                               settings=settings)
        async with open_github_toolkit(settings) as toolkit:
            graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
            for thread, question in (("all", "Latest Actions runs in acme-corp/payments-api?"),
                                     ("failed", "Which runs failed in acme-corp/payments-api?")):
                [e async for e in Conversation(graph, thread).ask(question)]
            calls = [m.tool_calls[0]["args"] for thread in ("all", "failed")
                     for m in (await graph.aget_state({"configurable": {"thread_id": thread}})
                               ).values["messages"] if getattr(m, "tool_calls", None)]

    assert calls == [{"owner": "acme-corp", "repo": "payments-api"},
                     {"owner": "acme-corp", "repo": "payments-api", "status": "failure"}]


async def test_a_search_query_and_page_size_nobody_asked_for_are_held_to_the_persons_words(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # `is:bug` is no GitHub qualifier (0 results); the page size of 10 nobody asked for.
    written = tool_call("search_issues", query="repo:acme-corp/payments-api is:bug", per_page=10)
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(), github_api_url=sandbox.url,
                                       github_token=sandbox.token)
        setup = scripted_setup([written, "These are the bugs."], settings=settings)
        async with open_github_toolkit(settings) as toolkit:
            graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
            events = [e async for e in Conversation(graph, "bugs").ask(
                "Which open issues of acme-corp/payments-api carry the bug label?")]
            [call] = [m.tool_calls[0]["args"] for m in (await graph.aget_state(
                {"configurable": {"thread_id": "bugs"}})).values["messages"]
                if getattr(m, "tool_calls", None)]

    assert call == {"query": "repo:acme-corp/payments-api label:bug is:issue is:open"}
    [answer] = [e.text for e in events if isinstance(e, Answer)]
    assert "18 results for 'repo:acme-corp/payments-api label:bug is:issue is:open'" in answer
    actions = [e.action.detail for e in events if isinstance(e, ContextNote)]
    assert any("is:bug" in detail and "label:bug" in detail for detail in actions)


async def test_a_repository_named_without_its_owner_gets_the_one_owner_the_token_sees(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # The model fills in an owner nobody gave (an example's, or the repository's name), and a
    # reviewer's login for "me" (a name nobody gave is dropped).
    guessed = tool_call("list_pull_requests_awaiting_review", owner="payments-api",
                        repo="payments-api", reviewer="octocat")
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(), github_api_url=sandbox.url,
                                       github_token=sandbox.token)
        setup = scripted_setup([guessed, "Here is the queue.", guessed, "Not found."],
                               settings=settings)
        async with open_github_toolkit(settings) as toolkit:
            graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
            conversation = Conversation(graph, "bare")
            for question in ("what waits for review in payments-api?", "anything new there?"):
                [e async for e in conversation.ask(question)]
            calls = [m.tool_calls[0]["args"] for m in (await graph.aget_state(
                {"configurable": {"thread_id": "bare"}})).values["messages"]
                if getattr(m, "tool_calls", None)]

    # Named in this turn or an earlier one, a repository the token sees under one owner is
    # called by that owner (`agents.repository_owner`); only the turn that named it is told
    # what the question's name is.
    assert calls == [{"owner": "acme-corp", "repo": "payments-api"},
                     {"owner": "acme-corp", "repo": "payments-api"}]
    # The first call of the turn that named it is told what the name is; no later call is.
    requests = setup.chat_model.requests  # type: ignore[attr-defined]
    told = [str(r.messages[-1].content) for r in requests
            if isinstance(r.messages[-1], HumanMessage)]
    assert (f"{TURN_NOTE}Resolved against the live inventory: 'payments-api' is a GitHub "
            "repository (acme-corp/payments-api).") in told[0]
    assert "Resolved against" not in told[1]


async def test_a_search_of_a_repository_named_without_its_owner_gets_the_owner_that_holds_it(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # GitHub's search takes `repo:owner/name`; `repo:name` alone is a validation error.
    bare = tool_call("search_issues", query="repo:payments-api label:bug is:issue is:open")
    call, events = await one_call(make_settings, scripted_setup, bare,
                                  "how many open issues labelled bug are on payments-api")

    assert call == {"query": "repo:acme-corp/payments-api label:bug is:issue is:open"}
    [answer] = [e.text for e in events if isinstance(e, Answer)]
    assert "18 results for 'repo:acme-corp/payments-api label:bug is:issue is:open'" in answer


@pytest.mark.parametrize(("written", "expected"), [
    (tool_call("search_issues", query="repo:payments-api is:issue is:open"),
     {"query": "repo:acme-corp/payments-api is:issue is:open label:bug"}),
    (tool_call("list_issues", owner="acme-corp", repo="payments-api", state="open"),
     {"owner": "acme-corp", "repo": "payments-api", "state": "open", "labels": "bug"}),
])
async def test_a_label_the_repository_has_and_the_question_names_filters_its_issues(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
    written: AIMessage, expected: dict[str, str],
) -> None:
    # "bugs" is the repository's label `bug` (its own label list says so, not a word table);
    # the call asked for every open issue, and counted 22 where 18 are bugs.
    call, events = await one_call(make_settings, scripted_setup, written,
                                  "how many open bugs on payments-api")

    assert call == expected
    [answer] = [e.text for e in events if isinstance(e, Answer)]
    rows = [line for line in answer.splitlines() if line.startswith("| ") and "issue" in line]
    assert rows and all("bug" in row for row in rows)
    actions = [e.action.detail for e in events if isinstance(e, ContextNote)]
    assert any("labels the question names" in detail for detail in actions)


def test_a_label_is_said_as_whole_words_or_in_the_plural() -> None:
    labels = ["bug", "enhancement", "good first issue", "env:production", "do-not-merge"]
    assert said_labels(labels, "any open Bugs?") == ["bug"]
    assert said_labels(labels, "good first issues for a new hire") == ["good first issue"]
    # Not inside another word or name, and not a part of a label.
    assert said_labels(labels, "debug the bug-tracker, in production, merge it") == []


async def test_the_repository_a_call_is_about_is_not_also_its_reviewer(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # The one name the person wrote, put in two slots: the queue of a reviewer called like the
    # repository is empty, whatever waits for review there.
    doubled = tool_call("list_pull_requests_awaiting_review", owner="acme-corp",
                        repo="payments-api", reviewer="payments-api")
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(), github_api_url=sandbox.url,
                                       github_token=sandbox.token)
        setup = scripted_setup([doubled, "Here is the queue."], settings=settings)
        async with open_github_toolkit(settings) as toolkit:
            graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
            events = [e async for e in Conversation(graph, "queue").ask(
                "what is still waiting on a reviewer in payments-api")]
            [call] = [m.tool_calls[0]["args"] for m in (await graph.aget_state(
                {"configurable": {"thread_id": "queue"}})).values["messages"]
                if getattr(m, "tool_calls", None)]

    assert call == {"owner": "acme-corp", "repo": "payments-api"}
    actions = [e.action.detail for e in events if isinstance(e, ContextNote)]
    assert any("reviewer=payments-api" in detail for detail in actions)


async def test_an_owner_that_holds_no_such_repository_becomes_the_one_that_does(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # A repository no owner holds, left for the tool to answer; then a schema's placeholder
    # owner on a later call, for a repository the person named.
    placeholder = tool_call("list_issues", owner="example-org", repo="payments-api")
    unknown = tool_call("list_issues", owner="example-org", repo="no-such-repository")
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(), github_api_url=sandbox.url,
                                       github_token=sandbox.token)
        setup = scripted_setup([unknown, "Not found.", placeholder, "Here are the issues."],
                               settings=settings)
        async with open_github_toolkit(settings) as toolkit:
            graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
            conversation = Conversation(graph, "issues")
            [e async for e in conversation.ask("any open issues on no-such-repository?")]
            events = [e async for e in conversation.ask("and on payments-api?")]
            calls = [m.tool_calls[0]["args"] for m in (await graph.aget_state(
                {"configurable": {"thread_id": "issues"}})).values["messages"]
                if getattr(m, "tool_calls", None)]

    assert calls == [{"owner": "example-org", "repo": "no-such-repository"},
                     {"owner": "acme-corp", "repo": "payments-api"}]
    [answer] = [e.text for e in events if isinstance(e, Answer)]
    assert "acme-corp/payments-api" in answer


async def test_a_call_about_a_repository_nobody_named_is_asked_again_without_such_tools(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # An example's repository for a question that names none: a guess, asked again.
    guessed = tool_call("list_pull_requests", owner="example-org", repo="web-frontend")
    search = tool_call("search_issues", query="is:issue is:open assignee:octocat")
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(), github_api_url=sandbox.url,
                                       github_token=sandbox.token)
        setup = scripted_setup([guessed, search, "Here are the tickets."], settings=settings)
        async with open_github_toolkit(settings) as toolkit:
            graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
            [e async for e in Conversation(graph, "tickets").ask(
                "how many open tickets does octocat have across all our repos")]
            calls = [m.tool_calls[0] for m in (await graph.aget_state(
                {"configurable": {"thread_id": "tickets"}})).values["messages"]
                if getattr(m, "tool_calls", None)]

    assert [(c["name"], c["args"]) for c in calls] == [
        ("search_issues", {"query": "is:issue is:open assignee:octocat"})]
    again = {t["function"]["name"] for t in setup.chat_model.requests[1].tools}  # type: ignore[attr-defined]
    assert "search_issues" in again and "list_pull_requests" not in again


async def test_a_question_saying_its_repository_is_about_the_one_the_answers_before_name(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # The supervisor passes on what Argo CD answered: the app's source, as a web address.
    question = ("what PRs r open on its repo?" + TURN_NOTE + ANSWERS_NOTE
                + "| name | repo |\n| shop-production | https://github.com/acme-corp/"
                  "payments-api.git |")
    guessed = tool_call("list_pull_requests", owner="example-org", repo="web-frontend")
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(), github_api_url=sandbox.url,
                                       github_token=sandbox.token)
        setup = scripted_setup([guessed, "Here they are."], settings=settings)
        async with open_github_toolkit(settings) as toolkit:
            graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
            events = [e async for e in Conversation(graph, "its").ask(question)]
            [call] = [m.tool_calls[0] for m in (await graph.aget_state(
                {"configurable": {"thread_id": "its"}})).values["messages"]
                if getattr(m, "tool_calls", None)]

    # Respelled as the repository the answer names, not asked again as a guess.
    assert call["args"] == {"owner": "acme-corp", "repo": "payments-api"}
    assert len(setup.chat_model.requests) == 2  # type: ignore[attr-defined]
    assert any(isinstance(e, Answer) and "pull requests in acme-corp/payments-api" in e.text
               for e in events)


async def test_an_item_cited_by_its_number_or_sha_is_offered_the_tools_that_take_it(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    pr = tool_call("get_pull_request", owner="acme-corp", repo="payments-api", number=1)
    commit = tool_call("get_commit", owner="acme-corp", repo="payments-api", sha="ab12cd3")
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(), github_api_url=sandbox.url,
                                       github_token=sandbox.token)
        setup = scripted_setup([pr, "It is open.", pr, "It is open.", commit, "A commit.",
                                tool_call("list_pull_requests", owner="acme-corp",
                                          repo="payments-api"), "Two are open."],
                               settings=settings)
        async with open_github_toolkit(settings) as toolkit:
            graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
            for thread, question in (("hash", "who put up payments-api #1?"),
                                     ("kind", "whos blocking PR 1 on payments-api?"),
                                     ("sha", "which pr did ab12cd3 in payments-api come from"),
                                     ("listed", "whats open on payments-api?")):
                [e async for e in Conversation(graph, thread).ask(question)]

    requests = setup.chat_model.requests  # type: ignore[attr-defined]
    hashed, _, kind, _, sha, _, listed, _ = requests
    for cited in (hashed, kind):
        assert [t["function"]["name"] for t in cited.tools] == ["get_pull_request"]
        assert cited.tool_choice == "required"
    assert [t["function"]["name"] for t in sha.tools] == ["get_commit"]
    assert len(listed.tools) > 1  # nothing cited: every tool


def test_a_sha_is_hex_with_a_digit_and_a_letter() -> None:
    assert COMMIT_SHA.findall("deploy of 2196ff6 and 9f3c2a1e0b") == ["2196ff6", "9f3c2a1e0b"]
    # A run id (digits only), a word (no digit), a name's part, a short hex: not a commit.
    assert not COMMIT_SHA.findall("run 9105000037 defaced cafe-1234567 ab12cd")


async def test_a_result_cut_to_fit_the_window_still_reaches_the_person_whole(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    runs = tool_call("list_workflow_runs", owner="acme-corp", repo="identity-auth",
                     status="failure")
    log_args = {"owner": "acme-corp", "repo": "identity-auth", "run_id": 9105000037,
                "tail_lines": 100}
    logs = tool_call("get_workflow_run_logs", **log_args)
    with running_github_sandbox() as sandbox:
        settings = dataclasses.replace(make_settings(MAX_CONTEXT_TOKENS="6000"),
                                       github_api_url=sandbox.url, github_token=sandbox.token)
        # The model also writes the summary of the first turn, before the second's lead.
        setup = scripted_setup([runs, "The failed runs.", logs, "Failed runs were listed.",
                                "The log's tail."], settings=settings)
        async with open_github_toolkit(settings) as toolkit:
            whole = str(await next(t for t in toolkit.tools
                                   if t.name == "get_workflow_run_logs").ainvoke(log_args))
            graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
            conversation = Conversation(graph, "logs")
            [e async for e in conversation.ask("Failed runs of acme-corp/identity-auth?")]
            events = [e async for e in conversation.ask("The log tail of the newest one?")]
            state = await graph.aget_state({"configurable": {"thread_id": "logs"}})

    # The follow-up's log does not fit the agent's window beside the earlier listing: the
    # model read a cut copy, and the person gets the whole log, not a request to ask again.
    [result] = [m for m in state.values["messages"][-2:] if m.type == "tool"]
    assert len(str(result.content)) < len(whole)
    answer = "".join(e.text for e in events if isinstance(e, Answer))
    assert whole.strip().splitlines()[-1] in answer and "Output too large" not in answer


@pytest.mark.parametrize("server", ["refuses", "never answers"])
async def test_a_label_list_that_cannot_be_read_leaves_the_call_as_written(server: str) -> None:
    # GitHub down, or a label list that does not come within the lookup's bound: the call
    # the model wrote goes on unchanged (its answer is still the person's), and in time.
    done, handlers = asyncio.Event(), list[asyncio.Task[Any]]()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if (task := asyncio.current_task()) is not None:
            handlers.append(task)
        await reader.read(65536)
        await done.wait()  # never answers; closes its end when the test is over
        writer.close()
        await writer.wait_closed()

    listening = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    if server == "refuses":
        listening.close()
        await listening.wait_closed()
    written = tool_call("list_issues", owner="acme-corp", repo="payments-api", state="open")
    repositories = GitHubRepositories(GitHubConnection(f"http://127.0.0.1:{port}", "t0ken",
                                                       timeout_seconds=20))
    request = ModelRequest(model=None,  # type: ignore[arg-type]
                           messages=[HumanMessage("how many open bugs on payments-api")])

    async def model(_: ModelRequest) -> ModelResponse:
        return ModelResponse(result=[written])

    started = time.monotonic()
    response = await IssueLabelMiddleware(repositories, timeout_seconds=0.5).awrap_model_call(
        request, model)
    elapsed = time.monotonic() - started

    done.set()
    listening.close()
    await listening.wait_closed()
    await asyncio.gather(*handlers)  # each closes the connection it holds
    assert response.result == [written]
    assert elapsed < 5
