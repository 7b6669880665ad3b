"""The DevOps agent end to end: real shell and RAG MCP servers, approvals, expansion."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.devops import REASON_FIRST as DEVOPS_REASON_FIRST
from pilothouse.agents.devops import open_devops_toolkit
from pilothouse.agents.factory import AgentFactory
from pilothouse.config import Settings
from pilothouse.models.local_toolcalls import REASON_FIRST
from pilothouse.models.registry import ModelSetup, setup_model
from pilothouse.runtime.events import Answer, ApprovalRequest, ContextNote, Event, ToolResult
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import ScriptedChatModel, tool_call
from pilothouse.tools.mcp_connect import call_for_payload
from pilothouse.tools.shell import check_command

MODULE = '''"""Billing helpers."""


def compute_invoice_total(lines):
    """Sum the invoice lines, with tax."""
    return round(sum(line["amount"] for line in lines) * 1.2, 2)
'''


def billing_workspace(tmp_path: Path) -> Path:
    """A workspace holding one module, `billing.py` (`MODULE`)."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "billing.py").write_text(MODULE)
    return workspace


async def index_workspace(toolkit: Any) -> dict[str, Any]:
    """The report of indexing the toolkit's workspace through its MCP tool."""
    index = next(t for t in toolkit.tools if t.name == "index_directory")
    return dict(await call_for_payload(index, {}))


def settings_for(make_settings: Callable[..., Settings], workspace: Path) -> Settings:
    return dataclasses.replace(make_settings(MAX_CONTEXT_TOKENS="32000"), workspace=workspace)


async def build(settings: Settings, setup: ModelSetup, toolkit: Any) -> Any:
    return AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph


async def last_result(conversation: Conversation) -> dict[str, Any]:
    """The newest tool result of the conversation, whole (events carry a preview)."""
    history = await conversation.history()
    result = next(m for m in reversed(history) if isinstance(m, ToolMessage))
    assert isinstance(result.artifact, dict)
    return dict(result.artifact)


E = TypeVar("E", bound=Event)


def kinds(events: list[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


async def test_allowed_command_runs_and_asking_command_waits_for_approval(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    command = "mkdir build"
    assert check_command(command, workspace=workspace).action == "ask"
    settings = settings_for(make_settings, workspace)
    steps = [tool_call("run_command", command="echo hi | tr a-z A-Z"), "It printed HI.",
             tool_call("run_command", command=command, approval_token="forged"), "Created."]
    setup = scripted_setup(steps, window=32_000, settings=settings)
    async with open_devops_toolkit(settings) as toolkit:
        conversation = Conversation(await build(settings, setup, toolkit), "devops")

        first = [e async for e in conversation.ask("shout hi")]
        assert kinds(first, ToolResult)
        assert (await last_result(conversation))["stdout"].strip() == "HI"

        second = [e async for e in conversation.ask("make a build folder")]
        assert kinds(second, ApprovalRequest) and not kinds(second, ToolResult)
        assert not (workspace / "build").exists()
        prompt = kinds(second, ApprovalRequest)[0].value["description"]
        assert f"command: {command}\n" in prompt
        assert f"working directory: {workspace}\n" in prompt

        third = [e async for e in conversation.decide({"type": "approve"})]
        assert kinds(third, ToolResult)
        result = await last_result(conversation)

    assert result["status"] == "ok", result
    assert (workspace / "build").is_dir()


async def test_question_naming_a_symbol_gets_its_code_in_context(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    workspace = billing_workspace(tmp_path)
    settings = settings_for(make_settings, workspace)
    setup = scripted_setup(["It sums the lines and adds 20% tax."], window=32_000,
                           settings=settings)
    async with open_devops_toolkit(settings) as toolkit:
        report = await index_workspace(toolkit)
        assert report["files_indexed"] + report["files_skipped_unchanged"] == 1
        graph = await build(settings, setup, toolkit)
        events = [e async for e in Conversation(graph, "rag").ask(
            "What does compute_invoice_total do?")]

    assert any(e.action.action == "expanded" for e in kinds(events, ContextNote))
    # After the question (the system prompt stays the same, so the model's cache of it holds).
    asked = str(setup.chat_model.requests[0].messages[-1].content)  # type: ignore[attr-defined]
    assert "billing.py:1-6" in asked and "round(sum(line" in asked, asked


async def test_indexing_is_offered_only_to_a_question_naming_a_folder(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    # The workspace is indexed by the first retrieval; re-indexing it answers nothing.
    workspace = billing_workspace(tmp_path)
    (workspace / "docs").mkdir()
    settings = settings_for(make_settings, workspace)
    setup = scripted_setup(["Nothing to say.", "Nothing to say.", "Nothing to say."],
                           window=32_000, settings=settings)
    async with open_devops_toolkit(settings) as toolkit:
        graph = await build(settings, setup, toolkit)
        for question in ("anything uncommitted lying around?", "index the docs folder",
                         "index /srv/elsewhere too"):
            [e async for e in Conversation(graph, question).ask(question)]

    requests = setup.chat_model.requests  # type: ignore[attr-defined]
    offered = [{t["function"]["name"] for t in r.tools} for r in requests]
    assert "index_directory" not in offered[0] and "run_command" in offered[0]
    # A folder of the workspace; a path outside it, which the tool refuses with what to do.
    assert "index_directory" in offered[1] and "index_directory" in offered[2]


async def test_a_folder_named_by_an_ordinary_word_is_told_with_its_path(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    # A word no list holds ("charts") names a folder because the workspace has one.
    workspace = billing_workspace(tmp_path)
    charts = workspace / "ops" / "charts"
    (charts / "templates").mkdir(parents=True)
    for name in ("values.yaml", "values-live.yaml", ".secrets"):
        (charts / name).write_text("maxReplicas: 12\n")
    (workspace / "invoicing").mkdir()
    (workspace / "invoicing" / "totals.py").write_text(MODULE)
    settings = settings_for(make_settings, workspace)
    # The note resolves the person's word: the path it gives is theirs, respelled.
    setup = scripted_setup([tool_call("retrieve_code_context", query="max replicas",
                                      path_filter="ops/charts/"), "Twelve.",
                            "Nothing to say.", "Nothing to say."], window=32_000,
                           settings=settings)
    questions = ("max replicas in our charts?", "how does invoicing add tax?",
                 "how many lines in billing?")
    async with open_devops_toolkit(settings) as toolkit:
        await index_workspace(toolkit)
        graph = await build(settings, setup, toolkit)
        for question in questions:
            [e async for e in Conversation(graph, question).ask(question)]
        state = await graph.aget_state({"configurable": {"thread_id": questions[0]}})

    asked = [str(r.messages[-1].content)
             for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    # A folder of configuration is told with the paths of what it holds (not hidden files).
    assert ("Resolved against the workspace: 'charts' is the folder ops/charts/ of the "
            "workspace, which holds ops/charts/templates/, ops/charts/values-live.yaml, "
            "ops/charts/values.yaml.") in asked[0], asked[0]
    [call] = [c for m in state.values["messages"] for c in getattr(m, "tool_calls", None) or ()]
    assert call["args"]["path_filter"] == "ops/charts/", call
    # A folder of a program's source is the code's own name, read by meaning: no note; nor
    # for a question naming no folder (`billing` is a file's stem, not a folder).
    assert "Resolved against the workspace" not in asked[2], asked[2]
    assert "Resolved against the workspace" not in asked[3]


async def test_a_path_the_model_got_wrong_is_corrected_once_not_reported(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    workspace = billing_workspace(tmp_path)
    (workspace / "ops" / "charts").mkdir(parents=True)
    (workspace / "ops" / "charts" / "values.yaml").write_text("maxReplicas: 12\n")
    settings = settings_for(make_settings, workspace)
    setup = scripted_setup([
        tool_call("run_command", command="cat charts/values.yaml"),  # the model's own path
        tool_call("run_command", command="cat ops/charts/values.yaml"), "Twelve.",
        # The person's path: the candidates are theirs to read, the model may answer.
        tool_call("run_command", command="cat chart/values.yaml"), "It is not there.",
    ], window=32_000, settings=settings)
    async with open_devops_toolkit(settings) as toolkit:
        graph = await build(settings, setup, toolkit)
        for question in ("max replicas in the values?", "cat chart/values.yaml"):
            [e async for e in Conversation(graph, question).ask(question)]

    choices = [r.tool_choice for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    # First calls must call; after the miss on its own path the model must call again; after
    # the corrected read and after the person's own missing path, the choice is the model's.
    assert choices[1] == "required" and choices[2] in (None, "auto"), choices
    assert choices[4] in (None, "auto"), choices


async def test_on_the_local_model_code_passages_get_the_models_explanation(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    # A listing answers by its view alone on the local model; code passages never do.
    settings = dataclasses.replace(make_settings(
        MAX_CONTEXT_TOKENS="32000", PILOTHOUSE_MODEL="local:qwen2.5-coder-1.5b-instruct"),
        workspace=billing_workspace(tmp_path))
    setup = scripted_setup([tool_call("retrieve_code_context", query="invoice total tax"),
                            "It sums the invoice lines and adds the tax."], window=32_000,
                           settings=settings)
    async with open_devops_toolkit(settings) as toolkit:
        await index_workspace(toolkit)
        graph = await build(settings, setup, toolkit)
        events = [e async for e in Conversation(graph, "explained").ask(
            "How is an invoice total computed?")]

    [answer] = [e.text for e in kinds(events, Answer)]
    assert answer.startswith("It sums the invoice lines and adds the tax.")
    assert "billing.py" in answer


async def test_a_retrieval_query_of_words_nobody_said_searches_for_the_question(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    settings = dataclasses.replace(make_settings(MAX_CONTEXT_TOKENS="32000"),
                                   workspace=billing_workspace(tmp_path))
    # A few-shot example's query, not the person's.
    setup = scripted_setup([tool_call("retrieve_code_context", query="session timeout expiry"),
                            "It sums the invoice lines."], window=32_000, settings=settings)
    question = "How is an invoice total computed?"
    async with open_devops_toolkit(settings) as toolkit:
        await index_workspace(toolkit)
        graph = await build(settings, setup, toolkit)
        events = [e async for e in Conversation(graph, "query").ask(question)]
        state = await graph.aget_state({"configurable": {"thread_id": "query"}})

    [call] = [c for m in state.values["messages"] for c in getattr(m, "tool_calls", None) or ()]
    assert call["args"]["query"] == question
    assert any("search query held to the person's words" in e.action.detail
               for e in kinds(events, ContextNote))
    [answer] = [e.text for e in kinds(events, Answer)]
    assert "billing.py" in answer


class _ReasoningModel(ScriptedChatModel):
    """A scripted model that, like the local one, takes the reason-first setting."""

    reasons_before_calls: ClassVar[bool] = True


async def test_the_first_call_asks_a_model_that_can_to_say_how_the_answer_is_found(
    tmp_path: Path, make_settings: Callable[..., Settings],
) -> None:
    settings = settings_for(make_settings, billing_workspace(tmp_path))
    model = _ReasoningModel.from_steps(["Nothing to say."])
    async with open_devops_toolkit(settings) as toolkit:
        graph = await build(settings, setup_model(settings, chat_model=model), toolkit)
        [e async for e in Conversation(graph, "reason").ask("who made the last commit?")]
    assert model.requests[0].settings.get(REASON_FIRST) == DEVOPS_REASON_FIRST


async def test_a_grep_for_the_persons_own_phrase_that_found_nothing_searches_by_meaning(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    settings = settings_for(make_settings, billing_workspace(tmp_path))
    question = "how do we compute an invoice total with tax?"
    # Several of the question's words in a row: the person's sentence, which no file holds,
    # as written or spelled as code spells it (the shell's own second try).
    setup = scripted_setup([tool_call("run_command", command="grep -rn 'invoice total with tax' ."),
                            "It sums the invoice lines, with tax."],
                           window=32_000, settings=settings)
    async with open_devops_toolkit(settings) as toolkit:
        await index_workspace(toolkit)
        graph = await build(settings, setup, toolkit)
        events = [e async for e in Conversation(graph, "phrase").ask(question)]
        state = await graph.aget_state({"configurable": {"thread_id": "phrase"}})

    calls = [c for m in state.values["messages"] for c in getattr(m, "tool_calls", None) or ()]
    assert [(c["name"], c["args"].get("query")) for c in calls] == [
        ("run_command", None), ("retrieve_code_context", question)]
    # The grep ran, and said it found nothing; the retrieval came after, by code.
    [grep] = [e for e in kinds(events, ToolResult) if e.name == "run_command"]
    assert "no lines matched" in grep.preview
    [answer] = [e.text for e in kinds(events, Answer)]
    assert "billing.py" in answer
