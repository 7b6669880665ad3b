"""The real offline model end to end: weights, template, grammar, agent loop, streaming.

The assembled GGUF is cached in `~/.cache/pilothouse-test/models` (or
$PILOTHOUSE_TEST_MODELS_DIR) so reruns skip re-assembling 1.1 GB; the model loads once per
session. Each model call takes ~2-10 s on 2 CPU cores.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from pilothouse.config import Settings
from pilothouse.models.local_chat import ChatLocalLlama, build_local_chat_model
from pilothouse.models.local_engine import (
    ContextOverflowError,
    GenerationStats,
    local_token_counter,
    vocab_model,
)
from pilothouse.models.local_prompt import PLAIN_ANSWER_HINT, compact_tool, render_prompt
from pilothouse.models.local_toolcalls import REASON_FIRST, build_grammar, parse_output
from pilothouse.models.local_weights import (
    EXPECTED_SHA256,
    EXPECTED_SIZE,
    ensure_local_model,
    sha256_file,
)
from pilothouse.models.local_worker import shared_engine

pytestmark = pytest.mark.local_model

MODELS_DIR = Path(
    os.environ.get("PILOTHOUSE_TEST_MODELS_DIR", "~/.cache/pilothouse-test/models")
).expanduser()
SYSTEM = "You are Pilothouse, an assistant for platform engineers. Use the tools to look things up."
STATUS = {"name": "payments-api", "health": "Degraded", "sync": "Synced"}


@pytest.fixture(scope="session")
def model_path() -> Path:
    # models_dir is home/"models": a stable home keeps the assembled file across runs.
    return ensure_local_model(Settings(home=MODELS_DIR.parent))


@pytest.fixture(scope="session")
def model(model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> ChatLocalLlama:
    home = tmp_path_factory.mktemp("home")
    return build_local_chat_model(Settings(home=home, local_model_path=model_path))


def status_tool(calls: list[str]) -> Any:
    @tool
    def get_application_status(name: str) -> str:
        """Get the sync and health status of one Argo CD application."""
        calls.append(name)
        return json.dumps({**STATUS, "name": name})

    return get_application_status


@tool
def list_applications(project: str = "") -> str:
    """List Argo CD applications, optionally filtered by project."""
    return "[]"


def test_weights_are_assembled_and_verified(model_path: Path) -> None:
    assert model_path.parent == MODELS_DIR
    assert model_path.stat().st_size == EXPECTED_SIZE
    with model_path.open("rb") as f:
        assert f.read(4) == b"GGUF"
    assert sha256_file(model_path) == EXPECTED_SHA256


def test_prompt_matches_the_chat_template_in_the_gguf(model_path: Path) -> None:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = vocab_model(model_path).metadata["tokenizer.chat_template"]
    formatter: Any = Jinja2ChatFormatter(template, eos_token="<|im_end|>", bos_token="")
    args = {"name": "payments-api"}
    call = {"name": "get_application_status", "args": args, "id": "c1", "type": "tool_call"}
    messages = [
        SystemMessage(SYSTEM),
        HumanMessage("Health of payments-api?"),
        AIMessage("", tool_calls=[call]),
        ToolMessage(json.dumps(STATUS), tool_call_id="c1"),
        AIMessage("It is Degraded."),
        HumanMessage("Thanks"),
    ]
    tools = [convert_to_openai_tool(status_tool([])), convert_to_openai_tool(list_applications)]
    as_dicts: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Health of payments-api?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "get_application_status", "arguments": args}}],
        },
        {"role": "tool", "content": json.dumps(STATUS)},
        {"role": "assistant", "content": "It is Degraded."},
        {"role": "user", "content": "Thanks"},
    ]
    expected = formatter(messages=as_dicts, tools=[compact_tool(t) for t in tools]).prompt
    assert render_prompt(messages, tools).replace(PLAIN_ANSWER_HINT, "") == expected


def test_grammars_are_accepted_by_llama_cpp(model: ChatLocalLlama) -> None:
    @tool
    def deploy(
        app: str,
        replicas: int,
        strategy: str = "rolling",
        labels: list[str] | None = None,
        dry_run: bool = True,
        limits: dict[str, float] | None = None,
    ) -> str:
        """Deploy an application."""
        return app

    tools = [convert_to_openai_tool(t) for t in (status_tool([]), list_applications, deploy)]
    engine = shared_engine(model.model_path, model.n_ctx)

    def one_token(grammar: str) -> None:  # through the worker, which checks it first
        with engine.lock:
            list(engine.generate("Hi", stats=GenerationStats(), max_tokens=1, grammar=grammar))

    for choice in ("auto", "required", "deploy"):
        for max_calls in (1, 4):
            grammar = build_grammar(tools, choice, max_calls, reason_first="Found by ")
            assert grammar is not None
            one_token(grammar)  # raises if llama.cpp cannot parse it
    with pytest.raises(ValueError, match="rejected"):
        one_token("root ::= undefined-rule")


def test_a_string_argument_ends_at_its_bound_as_a_call(model: ChatLocalLlama) -> None:
    # A runaway argument is cut by the grammar, not by the token limit: the reply is a call.
    @tool
    def run_command(command: str) -> str:
        """Run a shell command."""
        return command

    tools = [convert_to_openai_tool(run_command)]
    grammar = build_grammar(tools, "required", 1, string_chars=24)
    spelled = "echo " + " ".join(["lorem"] * 60)  # longer than `max_tokens` below
    prompt = render_prompt([SystemMessage("You run shell commands."),
                            HumanMessage(f"Run exactly this: {spelled}")], tools)
    engine = shared_engine(model.model_path, model.n_ctx)
    with engine.lock:
        text = "".join(engine.generate(prompt, stats=GenerationStats(), max_tokens=120,
                                       grammar=grammar))
    calls = parse_output(text, {"run_command"}).tool_calls
    assert len(calls) == 1 and 0 < len(calls[0]["args"]["command"]) <= 24, text


def test_agent_calls_the_tool_and_answers_from_its_result(model: ChatLocalLlama) -> None:
    calls: list[str] = []
    agent = create_agent(model, tools=[status_tool(calls), list_applications], system_prompt=SYSTEM)
    result = agent.invoke({"messages": [HumanMessage("What is the health of payments-api?")]})
    assert calls == ["payments-api"]
    final = result["messages"][-1]
    assert isinstance(final, AIMessage) and not final.tool_calls
    assert "degraded" in str(final.content).lower()
    first_call = result["messages"][1]
    assert first_call.tool_calls[0]["id"].startswith("call_")
    assert first_call.response_metadata["finish_reason"] == "tool_calls"
    assert final.usage_metadata is not None and final.usage_metadata["output_tokens"] > 0


def test_a_reasoned_forced_call_comes_back_as_the_call_alone(model: ChatLocalLlama) -> None:
    # The line of reasoning is generated under the grammar and dropped: the reply is the call.
    calls: list[str] = []
    tools = [status_tool(calls), list_applications]
    bound = model.bind_tools(tools, tool_choice="required",
                             **{REASON_FIRST: "The answer is found by "})
    reply = bound.invoke([SystemMessage(SYSTEM), HumanMessage("Is payments-api healthy?")])
    assert reply.content == "" and len(reply.tool_calls) == 1
    assert reply.tool_calls[0]["name"] in {"get_application_status", "list_applications"}


def test_a_greeting_with_tools_bound_gets_a_plain_answer(model: ChatLocalLlama) -> None:
    tools = [status_tool([]), list_applications]
    messages = [SystemMessage(SYSTEM), HumanMessage("Hi!")]
    reply = model.bind_tools(tools).invoke(messages)
    assert reply.tool_calls == [] and reply.content
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] == model.get_num_tokens_from_messages(
        messages, tools
    )
    assert reply.response_metadata["model_name"] == "qwen2.5-coder-1.5b-instruct"


def test_answers_stream_in_pieces(model: ChatLocalLlama) -> None:
    chunks = list(model.stream("Name three Kubernetes workload kinds, comma separated."))
    assert sum(1 for c in chunks if c.content) > 3
    assert chunks[-1].usage_metadata is not None


async def test_a_tool_call_streams_as_one_call_chunk(model: ChatLocalLlama) -> None:
    bound = model.bind_tools([status_tool([]), list_applications])
    merged: Any = None
    question = [SystemMessage(SYSTEM), HumanMessage("Is payments-api healthy?")]
    async for chunk in bound.astream(question):
        assert not chunk.content  # no JSON leaks into the visible answer
        merged = chunk if merged is None else merged + chunk
    assert [(c["name"], c["args"]) for c in merged.tool_calls] == [
        ("get_application_status", {"name": "payments-api"})
    ]


async def test_leaving_a_stream_early_frees_the_model(model: ChatLocalLlama) -> None:
    async for chunk in model.astream("Count from 1 to 300, one number per line."):
        if chunk.content:
            break
    # Finishing the count would hold the model for 1024 tokens (40+ s); stopping takes one.
    engine = shared_engine(model.model_path, model.n_ctx)
    assert await asyncio.to_thread(engine.lock.acquire, True, 15)
    engine.lock.release()
    reply = await model.ainvoke("Reply with the single word OK.")
    assert "OK" in str(reply.content).upper()


def test_context_overflow_is_an_error_naming_the_sizes(model: ChatLocalLlama) -> None:
    with pytest.raises(ContextOverflowError) as caught:
        model.invoke("status " * 9000)
    message = str(caught.value)
    assert "exceeds the context window" in message and "8192" in message


def test_token_counter_uses_the_model_vocabulary(model_path: Path) -> None:
    count: Callable[[str], int] = local_token_counter(model_path)
    assert count("hello world") == 2
    assert count("<|im_end|>") > 1  # plain text: markers are not special tokens here


def test_the_worker_stops_exactly_when_asked(model: ChatLocalLlama) -> None:
    """`should_stop` runs here, the model in the worker: no token after a stop is used."""
    engine = shared_engine(model.model_path, model.n_ctx)
    pieces: list[str] = []
    stats = GenerationStats()
    with engine.lock:
        for piece in engine.generate("Count from 1 to 50, comma separated.", stats=stats,
                                     max_tokens=40, should_stop=lambda: len(pieces) >= 3):
            pieces.append(piece)
    assert len(pieces) == 3 and stats.completion_tokens == 3
    assert stats.finish_reason == "stop"
