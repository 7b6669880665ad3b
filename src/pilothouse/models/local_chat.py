"""`ChatLocalLlama`: the offline default chat model, llama.cpp in a worker, with tool calling.

The pieces: `local_weights` assembles the GGUF, `local_engine` runs llama.cpp inside the
worker process `local_worker` starts and talks to over a pipe, in the shared model service
(`local_service`, reached by `local_service_client`) or under this process, `local_prompt`
renders Qwen2.5's chat format, `local_toolcalls` constrains and parses calls, `local_turn`
decides how a turn runs. This module is the LangChain face of all that.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel, LangSmithParams
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from pilothouse.config import Settings
from pilothouse.models.lead import LeadPolicy, lead_policy
from pilothouse.models.local_engine import local_token_counter, vocab_model
from pilothouse.models.local_prompt import render_prompt
from pilothouse.models.local_service_client import ServiceOptions
from pilothouse.models.local_service_files import service_paths
from pilothouse.models.local_toolcalls import MAX_PARALLEL_CALLS, REASON_FIRST
from pilothouse.models.local_turn import (
    READ_TOKENS_KEY,
    TurnOptions,
    TurnOutcome,
    normalize_tool_choice,
    run_turn,
)
from pilothouse.models.local_weights import ProgressCallback, ensure_local_model
from pilothouse.models.local_worker import shared_engine

__all__ = ["ChatLocalLlama", "build_local_chat_model", "local_token_counter"]


class ChatLocalLlama(BaseChatModel):
    """A LangChain chat model over `llama_cpp.Llama` in a worker process (Qwen2.5 chat format).

    Instances are cheap: the worker is shared per (file, n_ctx) by `local_worker`, and calls
    from any thread or event loop are serialized on it. Token counting stays here, on a
    vocabulary-only load (no weights, no compute). If the worker dies, the call raises
    `LocalModelCrashedError` and the next call starts a new one. Deterministic by default
    (temperature 0, greedy decoding).
    """

    model_path: str
    model_name: str = "qwen2.5-coder-1.5b-instruct"
    n_ctx: int = 8192
    n_threads: int | None = None
    #: Folder of the KV prefixes kept across processes (`local_prefix_store`); None: none.
    prefix_store: str | None = None
    #: Folder of the shared model service's socket (`local_service`); None: a worker process
    #: of this process's own.
    service_dir: str | None = None
    #: Seconds a service this process starts stays after its last turn.
    idle_seconds: float = 600.0
    max_tokens: int = 1024
    temperature: float = 0.0
    #: One call per turn unless bound with `parallel_tool_calls=True`: forced to call, the
    #: model filled the other three allowed slots with invented names ("my-app"), measured by
    #: `pilothouse eval`; one call at a time, it calls again after seeing the result.
    parallel_tool_calls: bool = False
    #: How an answer written after tool results is read and held (`models.lead`): set when
    #: the answer layer shows the results whole below it; None, the whole results and answer.
    lead: LeadPolicy | None = None
    #: It takes the `REASON_FIRST` model setting (other providers would reject the argument).
    reasons_before_calls: ClassVar[bool] = True

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-local"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_name": self.model_name,
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        return LangSmithParams(
            ls_provider="llama-cpp",
            ls_model_name=self.model_name,
            ls_model_type="chat",
            ls_temperature=self.temperature,
            ls_max_tokens=self.max_tokens,
            ls_stop=stop,
        )

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools (anything `convert_to_openai_tool` accepts) and a tool_choice."""
        formatted = [convert_to_openai_tool(t) for t in tools]
        choice = normalize_tool_choice(tool_choice, formatted)
        return super().bind(tools=formatted, tool_choice=choice, **kwargs)

    # -- token counting -------------------------------------------------------------------------

    def get_num_tokens(self, text: str) -> int:
        """Tokens of `text` in this model's own vocabulary."""
        return local_token_counter(self.model_path)(text)

    def get_num_tokens_from_messages(
        self, messages: list[BaseMessage], tools: Sequence[Any] | None = None
    ) -> int:
        """Exact size of the prompt these messages (and tools) render to."""
        formatted = [convert_to_openai_tool(t) for t in tools] if tools else None
        prompt = render_prompt(messages, formatted).encode("utf-8")
        return len(vocab_model(self.model_path).tokenize(prompt, add_bos=False, special=True))

    # -- the turn ---------------------------------------------------------------------------

    def _run(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        kwargs: dict[str, Any],
        should_stop: Callable[[], bool],
        outcome: TurnOutcome,
    ) -> Iterator[str]:
        # bind_tools has converted them already; tools passed to invoke() directly may not be.
        tools = [convert_to_openai_tool(t) for t in kwargs.get("tools") or []] or None
        choice = normalize_tool_choice(kwargs.get("tool_choice"), tools or [])
        parallel = kwargs.get("parallel_tool_calls", self.parallel_tool_calls)
        # A layer may ask for fewer tokens for one call (the short lead above the views).
        options = TurnOptions(
            max_tokens=min(int(kwargs.get("max_tokens") or self.max_tokens), self.max_tokens),
            temperature=self.temperature,
            stop=stop or (),
            should_stop=should_stop,
            max_calls=MAX_PARALLEL_CALLS if parallel else 1,
            lead=self.lead,
            reason_first=kwargs.get(REASON_FIRST) or None,
        )
        service = (ServiceOptions(Path(self.service_dir), self.idle_seconds)
                   if self.service_dir else None)
        engine = shared_engine(self.model_path, self.n_ctx, self.n_threads, self.prefix_store,
                               service)
        return run_turn(engine, messages, outcome, options, tools=tools, choice=choice)

    def _metadata(self, outcome: TurnOutcome) -> tuple[UsageMetadata, dict[str, Any]]:
        usage = UsageMetadata(
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
            total_tokens=outcome.input_tokens + outcome.output_tokens,
        )
        reason = "tool_calls" if outcome.parsed.tool_calls else outcome.finish_reason
        meta = {
            "model_name": self.model_name,
            "finish_reason": reason,
            # prompt+completion tokens of each generation this turn took (1 or 2)
            "generations": outcome.generations,
            # prompt tokens evaluated, not taken from the KV cache: what prompt latency costs
            READ_TOKENS_KEY: outcome.read_tokens,
        }
        return usage, meta

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._complete(messages, stop, kwargs, lambda: False)

    def _complete(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        kwargs: dict[str, Any],
        should_stop: Callable[[], bool],
    ) -> ChatResult:
        outcome = TurnOutcome()
        for _ in self._run(messages, stop, kwargs, should_stop, outcome):
            pass
        usage, meta = self._metadata(outcome)
        message = AIMessage(
            content=outcome.parsed.content,
            tool_calls=outcome.parsed.tool_calls,
            invalid_tool_calls=outcome.parsed.invalid_tool_calls,
            usage_metadata=usage,
            response_metadata=meta,
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _chunks(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        kwargs: dict[str, Any],
        should_stop: Callable[[], bool],
    ) -> Iterator[ChatGenerationChunk]:
        outcome = TurnOutcome()
        for text in self._run(messages, stop, kwargs, should_stop, outcome):
            yield ChatGenerationChunk(message=AIMessageChunk(content=text))
        usage, meta = self._metadata(outcome)
        calls = [
            tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
            for i, c in enumerate(outcome.parsed.tool_calls)
        ]
        calls += [
            tool_call_chunk(name=c["name"], args=c["args"], id=c["id"], index=len(calls) + i)
            for i, c in enumerate(outcome.parsed.invalid_tool_calls)
        ]
        last = AIMessageChunk(
            content="",
            tool_call_chunks=calls,
            usage_metadata=usage,
            response_metadata=meta,
            chunk_position="last",
        )
        yield ChatGenerationChunk(message=last)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages, stop, kwargs, lambda: False):
            if run_manager is not None and chunk.text:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    # -- async: the sync work runs in a thread; cancelling stops it after the current token --

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        cancel = threading.Event()
        work = asyncio.ensure_future(
            asyncio.to_thread(self._complete, messages, stop, kwargs, cancel.is_set)
        )
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            cancel.set()
            work.add_done_callback(lambda f: f.cancelled() or f.exception())
            raise

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[ChatGenerationChunk | BaseException | None] = asyncio.Queue()
        cancel = threading.Event()

        def post(item: ChatGenerationChunk | BaseException | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed under us: nobody listens
                loop.call_soon_threadsafe(queue.put_nowait, item)

        def work() -> None:
            try:
                for chunk in self._chunks(messages, stop, kwargs, cancel.is_set):
                    post(chunk)
            except BaseException as exc:  # handed to the awaiting side, which re-raises it
                post(exc)
            finally:
                post(None)

        worker = asyncio.ensure_future(asyncio.to_thread(work))
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                if run_manager is not None and item.text:
                    await run_manager.on_llm_new_token(item.text, chunk=item)
                yield item
        finally:
            cancel.set()
            await asyncio.wait([worker])


def build_local_chat_model(
    settings: Settings, progress: ProgressCallback | None = None
) -> ChatLocalLlama:
    """The default offline chat model, assembling its weights first if needed."""
    path = ensure_local_model(settings, progress)
    return ChatLocalLlama(
        model_path=str(path),
        model_name=settings.model_name if settings.provider == "local" else path.stem,
        n_ctx=settings.local_context_tokens,
        n_threads=settings.local_threads,
        prefix_store=str(settings.prefix_cache_dir) if settings.prefix_cache_dir else None,
        # PILOTHOUSE_LOCAL_IDLE_SECONDS=0: no shared service, a worker of this process's own.
        service_dir=str(service_paths(settings.home).folder) if settings.local_idle_seconds
        else None,
        idle_seconds=settings.local_idle_seconds,
        max_tokens=settings.max_output_tokens,
        # With views on, the answer is a lead above the results shown whole.
        lead=lead_policy(settings),
    )
