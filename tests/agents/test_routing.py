"""Routing hints: the supervisor's first call of a turn is offered the agents the question names."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from word_routing import agents_by_words

from pilothouse.agents.answers_note import with_answers_before
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.routing import DOMAIN_WORDS
from pilothouse.agents.toolkit import Toolkit
from pilothouse.agents.workspace_names import workspace_packages
from pilothouse.config import Settings
from pilothouse.context.rewrite import TURN_NOTE, before_notes
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import Answer
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.subagent import InProcessSubAgent
from pilothouse.sandbox.argocd.server import running_sandbox
from pilothouse.sandbox.github import running_github_sandbox
from pilothouse.testing.scripted_model import tool_call


@pytest.fixture(scope="module")
def worlds() -> Iterator[dict[str, str]]:
    """Settings of a running Argo CD and GitHub sandbox: the inventories a question's names are
    resolved against (whatever they are called, they are read from the sandboxes)."""
    with running_sandbox(apps=40) as argocd, running_github_sandbox() as github:
        yield {"ARGOCD_URL": argocd.url, "ARGOCD_TOKEN": argocd.token,
               "GITHUB_API_URL": github.url, "GITHUB_TOKEN": github.token}


def held_names(worlds: dict[str, str]) -> tuple[str, str]:
    """An application and a repository (`owner/name`) the sandboxes hold."""
    apps = httpx.get(f"{worlds['ARGOCD_URL']}/api/v1/applications",
                     params={"fields": "items.metadata.name"},
                     headers={"Authorization": f"Bearer {worlds['ARGOCD_TOKEN']}"}).json()
    repos = httpx.get(f"{worlds['GITHUB_API_URL']}/user/repos",
                      headers={"Authorization": f"Bearer {worlds['GITHUB_TOKEN']}"}).json()
    return str(apps["items"][0]["metadata"]["name"]), str(repos[0]["full_name"])


#: The sub-agents here answer from a script without tools, so nothing could ground their
#: names; the grounding check has its own tests (tests/runtime/test_answer_views.py).
UNGROUNDED = "grounding"


def answering_agents(settings: Settings,
                     scripted_setup: Callable[..., ModelSetup]) -> list[InProcessSubAgent]:
    """The three specialists, each answering "<name> answered."."""
    return [InProcessSubAgent(name, f"{name}.", specialist(settings, scripted_setup(
        [f"{name} answered."]), name)) for name in ("argocd", "github", "devops")]


def specialist(settings: Settings, setup: ModelSetup, name: str) -> Any:
    """A specialist without tools, from the factory."""
    factory = AgentFactory(settings, setup, InMemorySaver())
    return factory.build(Toolkit(name=name, prompt="")).graph


def supervisor_over(settings: Settings, setup: ModelSetup,
                    agents: list[InProcessSubAgent]) -> Any:
    """The factory's supervisor over `agents`, its own model scripted by `setup`."""
    return AgentFactory(settings, setup, InMemorySaver()).supervisor_over(agents)


async def calls_made(supervisor: Any, thread: str) -> list[tuple[str, dict[str, Any]]]:
    """The supervisor's tool calls in conversation `thread`: (tool, arguments)."""
    state = await supervisor.graph.aget_state({"configurable": {"thread_id": thread}})
    return [(c["name"], c["args"]) for m in state.values["messages"]
            if isinstance(m, AIMessage) for c in m.tool_calls]


def test_a_question_names_the_agents_of_its_domain_words() -> None:
    assert agents_by_words("Show me production applications") == ["argocd"]
    assert agents_by_words("Which PRs in infra-live wait for review?") == ["github"]
    # A resource's name is no domain word in any world: the model routes a question that
    # names only a resource (and must ask some agent, tested below).
    assert agents_by_words("what changed in infra-live last week?") == []
    assert agents_by_words("Explain the auth module of this codebase") == ["devops"]
    assert agents_by_words("Is payments-api Degraded, and is its CI workflow failing?") == [
        "argocd", "github"]
    # Several parts are asked of their agents in the order the question asks them.
    assert agents_by_words("Is the CI workflow of octo/ledger failing, and is ledger-web "
                           "Degraded?") == ["github", "argocd"]
    assert agents_by_words("hello there") == []
    # Whole words only: "approval" is not "app", "print" is not "pr".
    assert agents_by_words("print the approval rules") == []
    # "run" is a command's verb, not what a cluster does with its apps.
    assert agents_by_words("run the linter") == ["devops"]
    assert agents_by_words("How many apps does kind-ledger-1 run?") == ["argocd"]
    # A file named by its path is the DevOps agent's, when no other domain is named.
    assert agents_by_words("Show me charts/api/values.yaml: which port does it use?") == [
        "devops"]
    assert agents_by_words("What did PR 12 of octo/ledger change in setup.cfg?") == [
        "github"]


async def test_the_first_call_sees_only_the_named_agents_and_later_calls_see_all(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    agents = answering_agents(settings, scripted_setup)
    both = AIMessage(content="", tool_calls=[
        {"name": f"ask_{name}", "args": {"question": "hello"}, "id": f"c-{name}",
         "type": "tool_call"} for name in ("argocd", "devops")])
    setup = scripted_setup(["Hello! Ask me about apps, PRs or code.",
                            tool_call("ask_github", question="PRs waiting for review?"), both,
                            "Both say hello."])
    supervisor = supervisor_over(settings, setup, agents)
    conversation = Conversation(supervisor.graph, "r-1")

    greeting = [e async for e in conversation.ask("hello there")]
    first = [e async for e in conversation.ask("Which PRs wait for review?")]
    second = [e async for e in conversation.ask("hello again")]

    offered = [[t["function"]["name"] for t in r.tools]
               for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    everyone = ["ask_argocd", "ask_github", "ask_devops"]
    # The direct answer is on the menu of a turn's first call only. A first question that
    # names nothing of the other agents is the workspace's or the supervisor's own.
    direct = ["answer_directly", *everyone]
    assert offered == [["answer_directly", "ask_devops"], ["ask_github"], direct, everyone]
    # A named agent must be asked; a question that names none is the model's to route, to
    # an agent or to its own answer: a choice it must make (tests/agents/test_direct_answer.py).
    choices = [r.tool_choice for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    assert choices == ["required", "required", "required", None]
    assert [e.text for e in greeting if isinstance(e, Answer)] == [
        "Hello! Ask me about apps, PRs or code."]
    # One agent's answer is the answer, passed on without a model call; two are combined.
    assert [e.text for e in first if isinstance(e, Answer)] == ["github answered."]
    # Combined: the supervisor's lead, then each agent's answer as it gave it.
    assert [e.text for e in second if isinstance(e, Answer)] == [
        "Both say hello.\n\nargocd answered.\n\ndevops answered."]


@pytest.mark.parametrize(("question", "offered"), [
    # Nothing another agent's facts are reached by: the workspace, or the direct answer.
    ("if the caller leaves the currency off, what do we bill in?",
     ["answer_directly", "ask_devops"]),
    # A status those agents filter by, or a name the person typed that no inventory holds:
    # every agent stays on the menu, the model reads whose it is.
    ("ok whats broken rn across everything?", ["answer_directly", "ask_argocd", "ask_github",
                                               "ask_devops"]),
    ("how many open tickets does jdoe-oncall have?", ["answer_directly", "ask_argocd",
                                                      "ask_github", "ask_devops"]),
])
async def test_a_first_question_naming_nothing_else_is_the_workspaces_or_the_supervisors(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
    question: str, offered: list[str],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    agents = answering_agents(settings, scripted_setup)
    setup = scripted_setup([tool_call("ask_devops", question=question), "later", "again"])
    supervisor = supervisor_over(settings, setup, agents)
    conversation = Conversation(supervisor.graph, "r-nothing")

    assert await collect_answers(conversation, question) == ["devops answered."]
    await collect_answers(conversation, question)  # a later turn: every agent, as before

    menus = [[t["function"]["name"] for t in r.tools]
             for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    assert menus[0] == offered
    assert menus[1] == ["answer_directly", "ask_argocd", "ask_github", "ask_devops"]


async def test_a_first_question_naming_one_agent_is_passed_on_without_a_model_call(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    agents = answering_agents(settings, scripted_setup)
    setup = scripted_setup([])  # any supervisor model call would fail the turn
    supervisor = supervisor_over(settings, setup, agents)

    events = [e async for e in Conversation(supervisor.graph, "r-5").ask(
        "Which PRs wait for review?")]

    assert [e.text for e in events if isinstance(e, Answer)] == ["github answered."]
    assert setup.chat_model.requests == []  # type: ignore[attr-defined]
    assert await calls_made(supervisor, "r-5") == [
        ("ask_github", {"question": "Which PRs wait for review?"})]


async def test_a_failed_only_agent_goes_to_the_model_which_says_what_is_missing(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    broken = scripted_setup([RuntimeError("Connection refused by the model server")])
    agents = [InProcessSubAgent("argocd", "Argo CD.", specialist(settings, broken, "argocd"))]
    setup = scripted_setup([tool_call("ask_argocd", question="apps?"),
                            "The Argo CD part is missing: its agent could not reach its model."])
    supervisor = supervisor_over(settings, setup, agents)

    events = [e async for e in Conversation(supervisor.graph, "r-2").ask("which apps?")]

    assert [e.text for e in events if isinstance(e, Answer)] == [
        "The Argo CD part is missing: its agent could not reach its model."]
    sent = setup.chat_model.requests[-1].messages  # type: ignore[attr-defined]
    assert "The argocd agent is unavailable" in str(sent[-1].content)


async def test_a_question_naming_two_domains_asks_both_agents_one_after_the_other(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
    worlds: dict[str, str],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED, **worlds)
    agents = answering_agents(settings, scripted_setup)
    app, _ = held_names(worlds)
    setup = scripted_setup([f"{app} is Degraded and its CI fails."])
    supervisor = supervisor_over(settings, setup, agents)

    events = [e async for e in Conversation(supervisor.graph, "r-3").ask(
        f"Is {app} Degraded, and is its CI workflow failing?")]

    # Code asked each agent in turn; the model only writes, without being offered them again.
    [request] = setup.chat_model.requests  # type: ignore[attr-defined]
    assert request.tool_choice == "none"
    asked = [(name, args["question"]) for name, args in await calls_made(supervisor, "r-3")]
    # "its" names nothing without the first clause: the GitHub agent gets the whole question,
    # and what the Argo CD agent found about the app it names.
    assert asked == [("ask_argocd", f"Is {app} Degraded"),
                     ("ask_github", f"Is {app} Degraded, and is its CI workflow failing?"
                      f"{TURN_NOTE}What the other agents answered, which the question refers "
                      "to:\nargocd answered.")]
    assert [e.text for e in events if isinstance(e, Answer)] == [
        f"{app} is Degraded and its CI fails.\n\nargocd answered.\n\ngithub answered."]


async def test_a_first_question_for_one_agent_reaches_it_as_asked_and_later_ones_as_reworded(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    argocd_setup = scripted_setup(["argocd answered.", "argocd answered again.", "once more."])
    agents = [InProcessSubAgent("argocd", "Argo CD.", specialist(settings, argocd_setup,
                                                                  "argocd"))]
    # The first turn's call is made without the model; the later two are the model's. The
    # model copies a note it saw into one: notes are code's, so it never reaches the agent.
    copied = TURN_NOTE + "Resolved against the live inventory: 'checkout-api-dev' is an app."
    setup = scripted_setup([
        tool_call("ask_argocd", question="Show the events of payments-api-production" + copied),
        tool_call("ask_argocd", question="Sync status of payments-api-production")])
    supervisor = supervisor_over(settings, setup, agents)
    conversation = Conversation(supervisor.graph, "r-4")

    await collect_answers(conversation, "Diff payments-api-production against git")
    await collect_answers(conversation, "and its events?")  # no domain word: the model's words
    await collect_answers(conversation, "What about its sync?")  # named, but a later turn

    asked = [before_notes(str(r.messages[-1].content))
             for r in argocd_setup.chat_model.requests]  # type: ignore[attr-defined]
    assert asked[0] == "Diff payments-api-production against git"
    assert asked[1:] == ["Show the events of payments-api-production",
                         "Sync status of payments-api-production"]
    state = await supervisor.graph.aget_state({"configurable": {"thread_id": "r-4"}})
    questions = [c["args"]["question"] for m in state.values["messages"]
                 if isinstance(m, AIMessage) for c in m.tool_calls]
    assert not any("checkout-api-dev" in q for q in questions)


async def test_a_request_for_another_page_goes_to_the_agent_that_showed_the_page(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    # The agents here type their pages (no tools), which the views layer would drop.
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=f"{UNGROUNDED},views")
    pages = ["PAGE 1 of 41 (819 applications). Ask for page 2 for more.",
             "PAGE 2 of 41 (819 applications). Ask for page 3 for more.",
             "PAGE 3 of 41 (819 applications). Ask for page 4 for more."]
    argocd_setup = scripted_setup(pages)
    github_setup = scripted_setup(["3 pull requests wait for review."])
    agents = [InProcessSubAgent("argocd", "Argo CD.", specialist(settings, argocd_setup,
                                                                  "argocd")),
              InProcessSubAgent("github", "GitHub.", specialist(settings, github_setup,
                                                                 "github"))]
    setup = scripted_setup(["Which listing do you mean? Ask it again with its name."])
    supervisor = supervisor_over(settings, setup, agents)
    paged, listed = Conversation(supervisor.graph, "r-6"), Conversation(supervisor.graph, "r-7")

    assert await collect_answers(paged, "List all ArgoCD applications") == [pages[0]]
    assert await collect_answers(paged, "show page 2") == [pages[1]]
    assert await collect_answers(paged, "And the next twenty?") == [pages[2]]
    # No model call decided any turn; the agent got the person's words.
    assert setup.chat_model.requests == []  # type: ignore[attr-defined]
    asked = [str(r.messages[-1].content).split("\n\n")[0]
             for r in argocd_setup.chat_model.requests]  # type: ignore[attr-defined]
    assert asked == ["List all ArgoCD applications", "show page 2", "And the next twenty?"]

    # An answer that was not a page leaves a page request to the model.
    await collect_answers(listed, "Which PRs wait for review?")
    assert await collect_answers(listed, "next page") == [
        "Which listing do you mean? Ask it again with its name."]


async def test_a_word_shaped_like_a_name_that_no_inventory_holds_is_the_models_to_route(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
    worlds: dict[str, str],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED, **worlds)
    agents = answering_agents(settings, scripted_setup)
    setup = scripted_setup([tool_call("ask_argocd", question="last 50 log lines of x-api-dev")])
    supervisor = supervisor_over(settings, setup, agents)

    answers = await collect_answers(Conversation(supervisor.graph, "r-8"),
                                    "Show me the last 50 log lines of x-api-dev")

    # No inventory holds it and no domain word is said: the model chooses, from every agent
    # and the direct answer (a hyphen is no evidence in a world of one-word names).
    [request] = setup.chat_model.requests  # type: ignore[attr-defined]
    assert len(request.tools) == 4
    assert answers == ["argocd answered."]


async def test_a_first_question_the_model_routes_to_one_agent_reaches_it_as_asked(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    argocd_setup = scripted_setup(["argocd answered.", "argocd answered again."])
    github_setup = scripted_setup(["github answered."])
    agents = [InProcessSubAgent(name, f"{name}.", specialist(settings, model, name))
              for name, model in (("argocd", argocd_setup), ("github", github_setup))]
    # No domain word and no resource: the model chooses the agent, and rewords the question.
    setup = scripted_setup([
        tool_call("ask_argocd", question="What is the status of the clusters?"),
        tool_call("ask_argocd", question="Which of the broken ones are in production?"),
        AIMessage(content="", tool_calls=[
            {"name": "ask_argocd", "args": {"question": "Broken things?"}, "id": "c1",
             "type": "tool_call"},
            {"name": "ask_github", "args": {"question": "Broken builds?"}, "id": "c2",
             "type": "tool_call"}]),
        "Both answered."])
    supervisor = supervisor_over(settings, setup, agents)
    first, other = Conversation(supervisor.graph, "r-9"), Conversation(supervisor.graph, "r-10")

    await collect_answers(first, "ok whats broken rn across everything?")
    await collect_answers(first, "only the prod ones")  # a later turn: the model's words
    await collect_answers(other, "whats broken rn?")  # two agents: each its own question

    asked = [before_notes(str(r.messages[-1].content))
             for r in argocd_setup.chat_model.requests]  # type: ignore[attr-defined]
    assert asked == ["ok whats broken rn across everything?",
                     "Which of the broken ones are in production?", "Broken things?"]
    assert [before_notes(str(r.messages[-1].content)) for r in
            github_setup.chat_model.requests] == ["Broken builds?"]  # type: ignore[attr-defined]


async def collect_answers(conversation: Conversation, question: str) -> list[str]:
    return [e.text async for e in conversation.ask(question) if isinstance(e, Answer)]


def test_the_workspace_top_level_packages_are_devops_words(tmp_path: Path) -> None:
    for package in ("src/shopcart", "src/shopcart/pricing", "tests", "app"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    # Subpackages, generic names and words of another domain ("app") stay out.
    taken = [w for words in DOMAIN_WORDS.values() for w in words]
    assert workspace_packages(tmp_path, taken) == ("shopcart",)
    assert workspace_packages(tmp_path / "missing") == ()


async def test_a_question_naming_a_workspace_package_goes_to_devops(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    (tmp_path / "shopcart").mkdir()
    (tmp_path / "shopcart" / "__init__.py").write_text("")
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED,
                             PILOTHOUSE_WORKSPACE=str(tmp_path))
    setup = scripted_setup([])  # a supervisor model call would fail the turn
    supervisor = supervisor_over(
        settings, setup, answering_agents(settings, scripted_setup))

    answers = await collect_answers(Conversation(supervisor.graph, "r-6"),
                                    "How does shopcart compute taxes?")

    assert answers == ["devops answered."]


async def test_a_follow_up_about_the_items_an_agent_listed_goes_to_that_agent(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    github_setup = scripted_setup(["Runs 7 and 9 failed.", "Run 9's log ends in a lint error."])
    agents = [InProcessSubAgent("github", "GitHub.", specialist(settings, github_setup,
                                                                 "github"))]
    setup = scripted_setup(["I cannot tell which one you mean."])
    supervisor = supervisor_over(settings, setup, agents)
    conversation = Conversation(supervisor.graph, "items")

    await collect_answers(conversation, "List the failed workflow runs of octo/ledger")
    # No domain word; "the newest of those" is one of the runs the GitHub agent listed.
    assert await collect_answers(conversation, "Show me the log tail of the newest of those") \
        == ["Run 9's log ends in a lint error."]
    assert setup.chat_model.requests == []  # type: ignore[attr-defined]
    # A question about nothing listed stays with the supervisor's model.
    assert await collect_answers(conversation, "what did I ask first?") == [
        "I cannot tell which one you mean."]


async def questions_asked(scripted_setup: Callable[..., ModelSetup],
                          make_settings: Callable[..., Settings], question: str,
                          **env: str) -> list[str]:
    """The questions the supervisor's code put to the answering agents for `question`."""
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED, **env)
    supervisor = supervisor_over(settings, scripted_setup(["Both answered."]),
                                 answering_agents(settings, scripted_setup))
    await collect_answers(Conversation(supervisor.graph, "parts"), question)
    return [args["question"] for _, args in await calls_made(supervisor, "parts")]


async def test_a_clause_that_says_its_carries_what_the_agents_before_it_answered(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
    worlds: dict[str, str],
) -> None:
    app, repo = held_names(worlds)
    asked = await questions_asked(scripted_setup, make_settings, f"Is {app} Degraded, "
                                  f"and which PRs of {repo} touched its chart?", **worlds)
    assert asked == [f"Is {app} Degraded",
                     f"which PRs of {repo} touched its chart?{TURN_NOTE}What the other "
                     "agents answered, which the question refers to:\nargocd answered."]


async def test_a_whole_question_that_names_nothing_says_it_of_itself(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    asked = await questions_asked(
        scripted_setup, make_settings,
        "Which pull requests are open, and what does the shell say? Plan it first.")
    # "it" is the task itself: no resource is named for it to stand for, so the second agent
    # asked gets the question without the first one's answer.
    assert len(asked) == 2 and all(TURN_NOTE not in q for q in asked)


async def test_a_later_question_naming_nothing_gets_the_earlier_sentence_that_names_it(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
    worlds: dict[str, str],
) -> None:
    app, _ = held_names(worlds)
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED, **worlds)
    vague = "What do the warning events of the app that paged say?"
    named = f"What are the warning events of {app}?"
    setup = scripted_setup([tool_call("ask_argocd", question=vague), "Answered.",
                            tool_call("ask_argocd", question=named), "Answered."])
    supervisor = supervisor_over(settings, setup, answering_agents(settings, scripted_setup))
    conversation = Conversation(supervisor.graph, "recall-by-lack")
    await collect_answers(conversation, f"I got paged for {app} at dawn. Is it synced?")
    # Neither later question says "I said" or "earlier": what the first one lacks (a name an
    # inventory holds, or a number) is what brings the person's sentence in.
    await collect_answers(conversation, "back to the one that paged: warning events?")
    await collect_answers(conversation, "and now?")

    asked = [args["question"] for _, args in await calls_made(supervisor, "recall-by-lack")]
    assert asked[1:] == [vague + "\n\n(What the person said earlier, which the question "
                         f'refers to: "I got paged for {app} at dawn.")', named]


async def test_a_later_question_naming_nothing_asks_the_agent_of_what_it_points_back_at(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
    worlds: dict[str, str],
) -> None:
    app, _ = held_names(worlds)
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED, **worlds)
    setup = scripted_setup([tool_call("ask_argocd", question="its state?"), "Answered.",
                            "You said finance blames it.", "Nothing else."])
    supervisor = supervisor_over(settings, setup, answering_agents(settings, scripted_setup))
    conversation = Conversation(supervisor.graph, "referent")
    await collect_answers(conversation, f"Finance blames {app} for the late invoices, hold on.")
    # No agent's word, no resource, no number: the earlier sentence it shares words with
    # names the application, so Argo CD is the agent to ask, and the only one offered.
    await collect_answers(conversation, "ok so the thing finance blames - whats its state?")
    # A question about what was said stays the conversation's ("did I say" as "I said"), and
    # one whose words point at no earlier name leaves the choice to the model.
    await collect_answers(conversation, "what did I say finance blames?")
    await collect_answers(conversation, "thanks, anything else?")

    menus = {str(r.messages[-1].content).split("\n")[0]:
             ([t["function"]["name"] for t in r.tools], r.tool_choice)
             for r in setup.chat_model.requests}  # type: ignore[attr-defined]
    assert menus["ok so the thing finance blames - whats its state?"] == (
        ["ask_argocd"], "required"), menus
    assert menus["what did I say finance blames?"] == (["answer_directly"], "required"), menus
    assert len(menus["thanks, anything else?"][0]) == 4, menus


async def test_a_later_question_pointing_back_carries_the_answer_another_agent_gave(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
    worlds: dict[str, str],
) -> None:
    app, _ = held_names(worlds)
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED, **worlds)
    github_setup = scripted_setup(["github answered.", "github answered again."])
    agents = [InProcessSubAgent("argocd", "Argo CD.", specialist(
                  settings, scripted_setup(["Deployed by kim at 1a2b3c4."]), "argocd")),
              InProcessSubAgent("github", "GitHub.", specialist(settings, github_setup,
                                                                 "github"))]
    # The model's rewording drops the commit "that" points at; the agent still gets it.
    setup = scripted_setup([tool_call("ask_github", question="Who wrote the commit?"),
                            "Answered."])
    supervisor = supervisor_over(settings, setup, agents)
    conversation = Conversation(supervisor.graph, "across")
    await collect_answers(conversation, f"Who deployed {app} last?")
    await collect_answers(conversation, "and who wrote that commit?")

    asked = [args["question"] for _, args in await calls_made(supervisor, "across")]
    assert asked[1].startswith("Who wrote the commit?")
    assert asked[1].endswith(TURN_NOTE + "What the other agents answered, which the question "
                             "refers to:\nDeployed by kim at 1a2b3c4.")


def test_an_agent_is_not_told_its_own_answer_again() -> None:
    # It keeps its own conversation; only what the other agents answered is news to it.
    earlier = [HumanMessage("Who deployed the app?"),
               ToolMessage("Deployed at 1a2b3c4.", tool_call_id="1", name="ask_argocd"),
               ToolMessage("It failed.", tool_call_id="2", name="ask_github", status="error"),
               HumanMessage("who wrote that commit?")]
    assert with_answers_before("Who wrote it?", earlier, "argocd") == "Who wrote it?"
    assert with_answers_before("Who wrote it?", earlier, "github").endswith(
        "\nDeployed at 1a2b3c4.")
    assert with_answers_before("Who wrote it?", earlier[:1], "github") == "Who wrote it?"


RELEASE_NOTE = ("Heads-up: the ledger release is blocked until Thursday. The only fix allowed "
                "in is PR 77 in octo/ledger, the rounding fix. Thanks!")


async def recalled_question(scripted_setup: Callable[..., ModelSetup], settings: Settings,
                            model_question: str) -> str:
    """What the GitHub agent is asked in a later turn about the release note's pull request,
    when the supervisor's model words that turn's question as `model_question`."""
    github_setup = scripted_setup(["Noted.", "kim wrote it."])
    agents = [InProcessSubAgent("github", "GitHub.", specialist(settings, github_setup,
                                                                 "github"))]
    # The first turn goes to the agent without the model; the second is the model's words.
    setup = scripted_setup([tool_call("ask_github", question=model_question), "kim wrote it."])
    supervisor = supervisor_over(settings, setup, agents)
    conversation = Conversation(supervisor.graph, "recall")
    await collect_answers(conversation, RELEASE_NOTE + " Which pull requests are open there?")
    await collect_answers(conversation, "Who wrote the pull request I said is allowed in?")
    return str(github_setup.chat_model.requests[-1].messages[-1].content)  # type: ignore[attr-defined]


RECALLED_PR = ("Who wrote the pull request I said is allowed in?\n\n(What the person said "
               'earlier, which the question refers to: "The only fix allowed in is PR 77 in '
               'octo/ledger, the rounding fix.")')


async def test_an_agent_asked_about_earlier_words_gets_them_with_its_question(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    asked = await recalled_question(scripted_setup, settings,
                                    "Who wrote the pull request I said is allowed in?")
    assert before_notes(asked) == RECALLED_PR


async def test_a_later_question_with_a_number_nobody_gave_reaches_the_agent_as_asked(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    # The model makes up a number; the person never gave it, nor did any answer.
    asked = await recalled_question(scripted_setup, settings, "Who wrote PR #12345?")
    assert "12345" not in asked
    assert before_notes(asked) == RECALLED_PR
