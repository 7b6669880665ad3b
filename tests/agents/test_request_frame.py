"""The request frame: names resolved against the live inventories decide who is asked.

The inventories are the real ones: an Argo CD sandbox and a GitHub sandbox over HTTP on
127.0.0.1, and a workspace on disk. Names are read from the sandboxes, so no test depends on
what a world calls its things.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from word_routing import DESCRIPTIONS, ROUTER, agents_by_words

from pilothouse.agents.code_words import CODE_WORDS, CodeWords, name_parts
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.inventory import (
    APPLICATION,
    CLUSTER,
    FOLDER,
    GROUP_KINDS,
    PROJECT,
    ArgoCDNames,
    GitHubRepositories,
    Inventory,
    Mention,
    candidates,
    inventory_of,
)
from pilothouse.agents.question_parts import split_by_agent
from pilothouse.agents.request_frame import RequestFrame
from pilothouse.agents.routing import DOMAIN_WORDS, DomainRouter
from pilothouse.agents.toolkit import Toolkit
from pilothouse.agents.workspace_names import WorkspaceNames
from pilothouse.config import Settings
from pilothouse.context.rewrite import before_notes
from pilothouse.errors import PilothouseError
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import Answer
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.subagent import InProcessSubAgent
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.sandbox.github import RunningGitHubSandbox, running_github_sandbox
from pilothouse.testing.scripted_model import tool_call
from pilothouse.tools.github.connection import GitHubConnection


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=40) as running:
        yield running


@pytest.fixture(scope="module")
def github_sandbox() -> Iterator[RunningGitHubSandbox]:
    with running_github_sandbox() as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "deploy" / "k8s").mkdir(parents=True)
    (tmp_path / "deploy" / "k8s" / "service.yaml").write_text("kind: Service\n")
    (tmp_path / "shopcart").mkdir()
    (tmp_path / "shopcart" / "limits.py").write_text("MAX_BASKET_ITEMS = 40\n\n"
                                                     "class BasketGuard:\n    pass\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "vendored.py").write_text("VENDORED_ONLY = 1\n")
    return tmp_path


def first_app(sandbox: RunningSandbox) -> str:
    answer = httpx.get(f"{sandbox.url}/api/v1/applications",
                       params={"fields": "items.metadata.name"},
                       headers={"Authorization": f"Bearer {sandbox.token}"}).json()
    return str(answer["items"][0]["metadata"]["name"])


def a_repository(github_sandbox: RunningGitHubSandbox) -> str:
    answer = httpx.get(f"{github_sandbox.url}/user/repos",
                       headers={"Authorization": f"Bearer {github_sandbox.token}"}).json()
    return str(answer[0]["full_name"])


@pytest.fixture
def inventory(sandbox: RunningSandbox, github_sandbox: RunningGitHubSandbox, workspace: Path,
              make_settings: Callable[..., Settings]) -> Inventory:
    settings = make_settings(ARGOCD_URL=sandbox.url, ARGOCD_TOKEN=sandbox.token,
                             GITHUB_API_URL=github_sandbox.url,
                             GITHUB_TOKEN=github_sandbox.token,
                             PILOTHOUSE_WORKSPACE=str(workspace))
    return inventory_of(settings, ["argocd", "github", "devops"])


async def test_each_inventory_resolves_the_names_it_holds_and_nothing_else(
    inventory: Inventory, sandbox: RunningSandbox, github_sandbox: RunningGitHubSandbox,
) -> None:
    app, repo = first_app(sandbox), a_repository(github_sandbox)
    owner, bare = repo.split("/")
    question = (f"is {app.upper()} ok, what changed in {bare}, and where do "
                "deploy/k8s/service.yaml and MAX_BASKET_ITEMS matter? also the weather")
    mentions = await inventory.mentions(question)
    found = {(m.text, m.agent, m.name) for m in mentions}
    # Case does not matter; a repository named without its owner gets the one owner.
    assert found >= {(app.upper(), "argocd", app), (bare, "github", repo),
                     ("deploy/k8s/service.yaml", "devops", "deploy/k8s/service.yaml"),
                     ("MAX_BASKET_ITEMS", "devops", "MAX_BASKET_ITEMS")}
    # Only names: a repository may share its name with an ApplicationSet; no word is one.
    assert {m.text for m in mentions} == {app.upper(), bare, "deploy/k8s/service.yaml",
                                          "MAX_BASKET_ITEMS"}
    assert [m.start for m in mentions] == sorted(m.start for m in mentions)
    # Owner and name as written resolve too; a close spelling is no mention (no guess).
    assert [m.name for m in await inventory.mentions(f"PRs of {owner}/{bare}")] == [repo]
    assert await inventory.mentions(f"is {app[:-1]}x ok?") == []
    # Words a name of the workspace's code joins are the DevOps agent's weakest evidence.
    assert [(m.agent, m.kind) for m in await inventory.mentions(
        "how many basket items can one hold?")] == [("devops", CODE_WORDS)]


async def test_what_is_not_the_workspaces_own_code_is_not_its_name(workspace: Path) -> None:
    names = WorkspaceNames(workspace)
    words = candidates("VENDORED_ONLY MAX_BASKET_ITEMS BasketGuard limits.py retry")
    # A dependency's code is not the workspace's; CamelCase is prose's too ("GitOps").
    assert {m.text for m in await names.resolve(words)} == {"MAX_BASKET_ITEMS", "limits.py"}
    # Bounded: a walk that may read no file finds nothing, and costs nothing.
    assert await WorkspaceNames(workspace, max_files=0).resolve(words) == []


async def test_a_dead_or_slow_inventory_leaves_routing_to_the_words(
    make_settings: Callable[..., Settings], workspace: Path,
) -> None:
    settings = make_settings(ARGOCD_URL="http://127.0.0.1:9", ARGOCD_TOKEN="t",
                             PILOTHOUSE_WORKSPACE=str(workspace))
    inventory = inventory_of(settings, ["argocd", "devops"])
    inventory.timeout_seconds = 2.0
    started = time.monotonic()
    mentions = await inventory.mentions("is shop-api-blue healthy? see MAX_BASKET_ITEMS")
    assert [m.agent for m in mentions] == ["devops"]  # the workspace still answers
    assert time.monotonic() - started < 10


def mention(text: str, agent: str, question: str) -> Mention:
    return Mention(text, question.index(text), agent, f"a thing of {agent}", text)


async def test_a_folder_of_the_workspace_is_a_name_that_decides_only_what_nothing_else_does(
    workspace: Path,
) -> None:
    (workspace / "tests").mkdir()
    names = WorkspaceNames(workspace)
    question = "what do the K8S manifests and the shopcart and tests folders set?"
    # An ordinary word names a folder (any case); a name every codebase has does not.
    assert [(m.text, m.kind, m.name) for m in await names.resolve(candidates(question))] == [
        ("K8S", FOLDER, "deploy/k8s"), ("shopcart", FOLDER, "shopcart")]
    assert agents_naming_folder("max replicas in our k8s values?", "k8s") == ["devops"]
    assert agents_naming_folder("which apps run in k8s?", "k8s") == ["argocd"]


def agents_naming_folder(question: str, word: str) -> list[str]:
    """The agents `question` is for, its last `word` resolved as a folder of the workspace."""
    folder = Mention(word, question.rindex(word), "devops", FOLDER, f"deploy/{word}")
    return RequestFrame(question, (folder,), ROUTER.words_at).agents


def test_a_part_that_continues_another_is_asked_of_that_parts_agent() -> None:
    # A folder's ordinary word decides a question nothing else decides, pronoun or not...
    assert agents_naming_folder("what was in that deploy?", "deploy") == ["devops"]
    # ...but a part pointing back at what another part named is about that: the word is
    # no evidence there.
    question = "when did it last get deployed and what was in that deploy"
    assert agents_naming_folder(question, "deploy") == ["argocd"]
    # A later turn's question continues the turns before as a later part does the parts
    # before it: pointing back, it names no agent by a folder's word.
    question = "and when did it last get a deploy?"
    folder = Mention("deploy", question.rindex("deploy"), "devops", FOLDER, "deploy")
    assert RequestFrame(question, (folder,), ROUTER.words_at).agents == ["devops"]
    assert RequestFrame(question, (folder,), ROUTER.words_at, follows_up=True).agents == []
    # A later turn that points at nothing keeps its evidence.
    question = "whats under deploy?"
    folder = Mention("deploy", question.rindex("deploy"), "devops", FOLDER, "deploy")
    assert RequestFrame(question, (folder,), ROUTER.words_at, follows_up=True).agents == [
        "devops"]
    # Nor is a word another agent's description uses too ("files changed" of a pull request).
    question = "octo/shopfront pr 88 - which files does it touch?"
    repository = mention("octo/shopfront", "github", question)
    assert RequestFrame(question, (repository,), ROUTER.words_at).agents == ["github"]
    question = "pull that commit up on github, what files did it touch"
    assert RequestFrame(question, (), ROUTER.words_at).agents == ["github"]
    # A part that does not point back names its domain by the same word, as before.
    assert agents_by_words("which files mention the timeout?") == ["devops"]
    question = "is it Degraded, and is its CI workflow failing?"
    assert RequestFrame(question, (), ROUTER.words_at).agents == ["argocd", "github"]
    # Which words are shared is read from the descriptions, not listed: described without
    # the files of a pull request, GitHub shares no "files" with the workspace.
    narrow = DomainRouter(DOMAIN_WORDS, {**DESCRIPTIONS, "github": "GitHub: issues."})
    question = "octo/shopfront pr 88 - which files does it touch?"
    assert RequestFrame(question, (repository,), narrow.words_at).agents == [
        "github", "devops"]


def test_a_part_about_the_persons_own_things_is_asked_of_the_workspace() -> None:
    def frame(question: str, own_agent: str | None = "devops") -> RequestFrame:
        apps = (mention("shopfront", "argocd", question),) if "shopfront" in question else ()
        return RequestFrame(question, apps, ROUTER.words_at, own_agent=own_agent)

    # A later part naming no agent's words or resource, but what is the person's own ("our",
    # "we"), is about the workspace: it gets that part alone.
    question = "is shopfront healthy? and how many times do we retry a charge on our end"
    assert frame(question).agents == ["argocd", "devops"]
    assert split_by_agent(question, frame(question).agents, frame(question).agents_for,
                          frame(question).names_in) == {
        "argocd": "is shopfront healthy?",
        "devops": "how many times do we retry a charge on our end"}
    # With no agent of the person's own things, the part goes with the part before, as before.
    assert frame(question, own_agent=None).agents == ["argocd"]
    # A part that points back at what another part named is about that, first person or not.
    assert frame("is shopfront healthy? and when did we last sync it").agents == ["argocd"]
    # A part speaking of nobody's own continues the part before it ("the oldest": of those).
    assert frame("which shopfront apps are degraded, and which is the oldest").agents == [
        "argocd"]
    # A question no part of which names an agent is the supervisor's model's to route, "we"
    # or not, in one part or several.
    assert frame("how many times do we retry a charge?").agents == []
    assert frame("if the caller leaves the currency off, what do we bill in?").agents == []


def project(text: str, question: str) -> Mention:
    return Mention(text, question.index(text), "argocd", PROJECT, text)


def test_a_projects_name_decides_only_what_nothing_else_decides() -> None:
    alone = "anything broken in ledgerline?"
    assert RequestFrame(alone, (project("ledgerline", alone),), ROUTER.words_at).agents == [
        "argocd"]
    # A project called "search" is not what "search the code" is about.
    worded = "search the code for retries"
    assert RequestFrame(worded, (project("search", worded),), ROUTER.words_at).agents == [
        "devops"]


async def test_the_built_in_project_is_never_a_name(sandbox: RunningSandbox,
                                                     make_settings: Callable[..., Settings],
                                                     ) -> None:
    settings = make_settings(ARGOCD_URL=sandbox.url, ARGOCD_TOKEN=sandbox.token)
    names = ArgoCDNames(settings, (PROJECT,))
    found = await names.resolve(candidates("the default timeout of payments"))
    assert [(m.text, m.kind) for m in found] == [("payments", PROJECT)]


async def test_a_clusters_name_is_a_name_the_built_in_cluster_is_not(
        sandbox: RunningSandbox, make_settings: Callable[..., Settings]) -> None:
    settings = make_settings(ARGOCD_URL=sandbox.url, ARGOCD_TOKEN=sandbox.token)
    async with httpx.AsyncClient() as client:
        listed = (await client.get(f"{sandbox.url}/api/v1/clusters", headers={
            "Authorization": f"Bearer {sandbox.token}"})).json()["items"]
    cluster = next(c["name"] for c in listed if c["name"] != "in-cluster")
    names = ArgoCDNames(settings, (CLUSTER,))
    found = await names.resolve(candidates(f"is {cluster.upper()} connected, or in-cluster?"))
    assert [(m.text, m.kind, m.name) for m in found] == [(cluster.upper(), CLUSTER, cluster)]
    # A group's name: it decides the agent only where nothing else does, and is acted on.
    assert CLUSTER in GROUP_KINDS


def test_a_name_alone_routes_to_its_agent() -> None:
    question = "is shopfront ok?"
    frame = RequestFrame(question, (mention("shopfront", "argocd", question),), ROUTER.words_at)
    assert agents_by_words(question) == []
    assert frame.agents == ["argocd"]


def test_names_and_words_that_agree_decide_alone() -> None:
    # "files" is a DevOps word, but the clause names a repository in GitHub's words.
    question = "Which files does PR 7 of octo/shopfront change?"
    frame = RequestFrame(question, (mention("octo/shopfront", "github", question),),
                         ROUTER.words_at)
    assert agents_by_words(question) == ["devops", "github"]
    assert frame.agents == ["github"]
    # A repository named after an application does not pull GitHub into the app's clause.
    question = "Restart the shop-api Deployment of the app shop-api-blue"
    frame = RequestFrame(question, (mention("shop-api", "github", question),
                                    mention("shop-api-blue", "argocd", question)),
                         ROUTER.words_at)
    assert frame.agents == ["argocd"]


def test_names_and_words_that_disagree_ask_both_in_the_order_asked() -> None:
    question = "Who opened PR 3 in octo/shop-api, and are the shop-api apps healthy?"
    frame = RequestFrame(question, (mention("octo/shop-api", "github", question),
                                    mention("shop-api", "github", question)),
                         ROUTER.words_at)
    assert frame.agents == ["github", "argocd"]
    assert frame.agents_for("are the shop-api apps healthy?") == ["github", "argocd"]


async def test_the_supervisor_asks_the_agent_whose_inventory_holds_the_name(
    sandbox: RunningSandbox, workspace: Path, make_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = make_settings(ARGOCD_URL=sandbox.url, ARGOCD_TOKEN=sandbox.token,
                             PILOTHOUSE_WORKSPACE=str(workspace),
                             PILOTHOUSE_DISABLE_LAYERS="grounding")
    agents = [InProcessSubAgent(name, f"{name}.", AgentFactory(
        settings, scripted_setup([f"{name} answered."]), InMemorySaver()).build(
            Toolkit(name=name, prompt="")).graph) for name in ("argocd", "devops")]
    # The supervisor's own model would answer itself: it is never asked.
    setup = scripted_setup(["I think it is fine."])
    supervisor = AgentFactory(settings, setup, InMemorySaver()).supervisor_over(agents)
    app = first_app(sandbox)

    events = [e async for e in Conversation(supervisor.graph, "f-1").ask(f"{app} ok?")]

    assert [e.text for e in events if isinstance(e, Answer)] == ["argocd answered."]
    assert setup.chat_model.requests == []  # type: ignore[attr-defined]
    state = await supervisor.graph.aget_state({"configurable": {"thread_id": "f-1"}})
    [call] = [c for m in state.values["messages"] if isinstance(m, AIMessage)
              for c in m.tool_calls]
    assert call["name"] == "ask_argocd"
    assert call["args"]["question"] == f"{app} ok?"  # the agent resolves its names itself


async def test_two_words_one_name_of_the_workspaces_code_joins_are_about_the_code(
    workspace: Path,
) -> None:
    # Prose says "this" far more often than a name does; `this_basket` is a name all the same.
    (workspace / "NOTES.md").write_text("This is the guard. This one, this and this: done.\n"
                                        "See this_basket.\n")
    words = CodeWords(workspace)
    question = "how many basket items can one hold?"
    [found] = await words.resolve(candidates(question))
    assert (found.agent, found.kind, found.text) == ("devops", CODE_WORDS, "basket")
    # The two words side by side, as a name's words are said; one shared word is every
    # domain's; a dependency's names are not the workspace's; a part of three letters or
    # fewer is grammar ("max").
    assert await words.resolve(candidates("how many items can one basket hold?")) == []
    assert await words.resolve(candidates("is the basket ok?")) == []
    assert await words.resolve(candidates("is vendored only on?")) == []
    assert await words.resolve(candidates("max basket?")) == []
    # A word the code uses mostly in its prose is grammar, even where a name joins it.
    assert await words.resolve(candidates("is this basket full?")) == []
    # CamelCase and kebab names join words too (`BasketGuard`, a manifest's `basket-guard`).
    assert await words.resolve(candidates("who is the basket guard"))
    assert name_parts("basket-guard-v2") == name_parts("BasketGuard") == {"basket", "guard"}


def test_words_the_code_joins_decide_only_what_nothing_else_decides() -> None:
    def joined(text: str, question: str) -> Mention:
        return Mention(text, question.index(text), "devops", CODE_WORDS, text)

    alone = "if ledgerline's basket guard trips, what then?"
    frame = RequestFrame(alone, (project("ledgerline", alone), joined("basket", alone)),
                         ROUTER.words_at)
    # Two words the code joins say more than one word a project is named.
    assert frame.agents == ["devops"]
    worded = "which apps are degraded in ledgerline, basket guard aside?"
    frame = RequestFrame(worded, (project("ledgerline", worded), joined("basket", worded)),
                         ROUTER.words_at)
    assert frame.agents == ["argocd"]


def test_a_github_number_is_githubs_notation_for_an_issue_or_pull_request() -> None:
    assert agents_by_words("who put up shopfront #37?") == ["github"]
    assert agents_by_words("octo/shopfront#12 approved yet?") == ["github"]
    assert agents_by_words("is the colour #fff or &#39;?") == []


async def test_an_earlier_sentence_naming_what_an_inventory_holds_is_recalled_by_its_name(
    github_sandbox: RunningGitHubSandbox, make_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = make_settings(GITHUB_API_URL=github_sandbox.url,
                             GITHUB_TOKEN=github_sandbox.token,
                             PILOTHOUSE_DISABLE_LAYERS="grounding")
    github_setup = scripted_setup(["Noted.", "It is frozen."])
    agents = [InProcessSubAgent("github", "GitHub.", AgentFactory(
        settings, github_setup, InMemorySaver()).build(Toolkit(name="github", prompt="")).graph)]
    asked = "Which branch I mentioned is frozen?"
    setup = scripted_setup([tool_call("ask_github", question=asked), "It is frozen."])
    supervisor = AgentFactory(settings, setup, InMemorySaver()).supervisor_over(agents)
    bare = a_repository(github_sandbox).split("/")[1]
    # Neither sentence has a number; only the inventory says which one names something.
    named = f"The release branch of {bare} is frozen."
    assert not any(c.isdigit() for c in named)
    conversation = Conversation(supervisor.graph, "recall-by-name")
    [_ async for _ in conversation.ask(f"The staging branch is frozen as well. {named} "
                                       "Which pull requests are open there?")]
    [_ async for _ in conversation.ask(asked)]

    question = str(github_setup.chat_model.requests[-1].messages[-1].content)  # type: ignore[attr-defined]
    assert before_notes(question) == (
        f"{asked}\n\n(What the person said earlier, which the question refers to: "
        f'"{named}")')


async def test_one_repository_listing_answers_the_lookups_of_a_turn(
    github_sandbox: RunningGitHubSandbox, monkeypatch: pytest.MonkeyPatch,
) -> None:
    repositories = GitHubRepositories(GitHubConnection(github_sandbox.url, github_sandbox.token))
    words = candidates(a_repository(github_sandbox).split("/")[1])

    def used() -> int:
        return github_sandbox.limits.snapshot(True)["core"]["used"]

    before = used()
    first = await repositories.resolve(words)
    listing = used() - before
    # The question's lookup and each call's owner check read the same listing.
    assert await repositories.resolve(words) == first and listing >= 1
    assert used() - before == listing
    # An old listing is read again: repositories come and go.
    monkeypatch.setattr(GitHubRepositories, "REUSE_SECONDS", 0.0)
    assert await repositories.resolve(words) == first
    assert used() - before == 2 * listing


async def test_argocd_names_answer_a_turns_lookups_of_a_word_from_one_scan(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch,
) -> None:
    with running_sandbox(apps=10) as argocd:
        settings = make_settings(ARGOCD_URL=argocd.url, ARGOCD_TOKEN=argocd.token)
        names = ArgoCDNames(settings, (APPLICATION, PROJECT))
        async with httpx.AsyncClient() as http:
            listed = await http.get(f"{argocd.url}/api/v1/applications",
                                    headers={"Authorization": f"Bearer {argocd.token}"})
        app = listed.json()["items"][0]["metadata"]["name"]
        question = candidates(f"is {app} ok?")
        first = await names.resolve(question)
        assert first == [Mention(app, 3, "argocd", APPLICATION, app)]
    # The server is gone: the turn's other lookups of its question (the next-page check, each
    # scope) are answered by the first scan.
    assert await names.resolve(question) == first
    # A new word is looked up (and the dead server says so), and an old answer is read again:
    # apps come and go.
    with pytest.raises(PilothouseError):
        await names.resolve(candidates("is ledgerline ok?"))
    monkeypatch.setattr(ArgoCDNames, "REUSE_SECONDS", 0.0)
    with pytest.raises(PilothouseError):
        await names.resolve(question)


def test_a_web_address_names_the_owner_and_name_in_its_path() -> None:
    text = ("source https://github.com/acme/shop-config.git, rev 1a2b3c4; "
            "see http://git.example.test/team/api.")
    words = [c.text for c in candidates(text)]
    assert "acme/shop-config" in words and "team/api" in words
    # Where the address stands, so a mention is placed in the question.
    [where] = [c.start for c in candidates(text) if c.text == "acme/shop-config"]
    assert text[where:].startswith("acme/shop-config")
