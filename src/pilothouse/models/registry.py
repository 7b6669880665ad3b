"""`provider:model` -> a LangChain chat model, its context window and its token counter.

`PROVIDER_INFO` is read by `pilothouse models` and `doctor`, which do not build a model: so
LangChain and the token counters are imported where a model is built, not at the top.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.models.windows import ContextWindow, resolve_context_window

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from pilothouse.models.tokens import TokenCounter


@dataclass(frozen=True)
class ProviderInfo:
    """How to build one provider's chat model, and what it needs installed."""

    package: str
    module: str
    cls: str
    example: str
    needs: str


PROVIDER_INFO: dict[str, ProviderInfo] = {
    "local": ProviderInfo(
        "llama-cpp-python",
        "pilothouse.models.local_chat",
        "ChatLocalLlama",
        "local:qwen2.5-coder-1.5b-instruct",
        "nothing (offline, bundled)",
    ),
    "openai": ProviderInfo(
        "langchain-openai", "langchain_openai", "ChatOpenAI", "openai:gpt-4o-mini", "OPENAI_API_KEY"
    ),
    "azure-openai": ProviderInfo(
        "langchain-openai",
        "langchain_openai",
        "AzureChatOpenAI",
        "azure-openai:my-gpt4o-deployment",
        "AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT, OPENAI_API_VERSION",
    ),
    "anthropic": ProviderInfo(
        "langchain-anthropic",
        "langchain_anthropic",
        "ChatAnthropic",
        "anthropic:claude-sonnet-4-5",
        "ANTHROPIC_API_KEY",
    ),
    "aws-bedrock": ProviderInfo(
        "langchain-aws",
        "langchain_aws",
        "ChatBedrockConverse",
        "aws-bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0",
        "AWS credentials and AWS_REGION",
    ),
    "google-gemini": ProviderInfo(
        "langchain-google-genai",
        "langchain_google_genai",
        "ChatGoogleGenerativeAI",
        "google-gemini:gemini-2.0-flash",
        "GOOGLE_API_KEY",
    ),
    "ollama": ProviderInfo(
        "langchain-ollama",
        "langchain_ollama",
        "ChatOllama",
        "ollama:llama3.1",
        "a running Ollama (OLLAMA_BASE_URL)",
    ),
    "openai-compatible": ProviderInfo(
        "langchain-openai",
        "langchain_openai",
        "ChatOpenAI",
        "openai-compatible:qwen2.5-coder",
        "OPENAI_BASE_URL (vLLM, LM Studio, llama.cpp server)",
    ),
}


def _load_class(provider: str) -> Any:
    info = PROVIDER_INFO[provider]
    try:
        module = importlib.import_module(info.module)
    except ImportError as exc:
        raise ConfigurationError(
            f"Provider {provider!r} needs the package {info.package}, which is not installed "
            f"({exc.name}).",
            hint=f"pip install {info.package}",
        ) from exc
    return getattr(module, info.cls)


# Providers whose LangChain class takes `timeout` (seconds per request) and `max_retries`. One
# retry: a second attempt helps with a dropped connection, but the SDK default of two more full
# timeouts is what kept a stalled turn alive for minutes. Every provider (these, Bedrock,
# Ollama, the local model) is also bounded per call by `ModelTimeoutMiddleware`.
_TIMEOUT_KWARGS = {"openai", "azure-openai", "openai-compatible", "anthropic", "google-gemini"}
MODEL_MAX_RETRIES = 1


def model_call_cap(settings: Settings) -> float:
    """The most seconds one model call may take, retries included, before it is abandoned.

    Where the client enforces the timeout itself, it closes the connection cleanly and its
    one retry must fit, so the cap leaves room for both (and the retry's back-off); for
    every other provider the cap is the timeout.
    """
    seconds = settings.model_timeout_seconds
    if settings.provider in _TIMEOUT_KWARGS:
        return seconds * (1 + MODEL_MAX_RETRIES) + 5.0
    return seconds


def _kwargs(settings: Settings) -> dict[str, Any]:
    provider, name = settings.provider, settings.model_name
    common: dict[str, Any] = {"temperature": 0}
    if provider in _TIMEOUT_KWARGS:
        common.update(timeout=settings.model_timeout_seconds, max_retries=MODEL_MAX_RETRIES)
    if provider == "openai":
        return {
            **common,
            "model": name,
            "max_tokens": settings.max_output_tokens,
            **({"api_key": settings.openai_api_key} if settings.openai_api_key else {}),
        }
    if provider == "azure-openai":
        return {**common, "azure_deployment": name, "max_tokens": settings.max_output_tokens}
    if provider == "openai-compatible":
        if not settings.openai_base_url:
            raise ConfigurationError(
                "Provider 'openai-compatible' needs OPENAI_BASE_URL.",
                hint="e.g. OPENAI_BASE_URL=http://127.0.0.1:8000/v1 for vLLM or llama.cpp",
            )
        # Local servers ignore max_completion_tokens; max_tokens goes in the body as is.
        return {
            **common,
            "model": name,
            "base_url": settings.openai_base_url,
            "api_key": settings.openai_api_key or "not-needed",
            "extra_body": {"max_tokens": settings.max_output_tokens},
        }
    if provider == "anthropic":
        return {**common, "model": name, "max_tokens": settings.max_output_tokens}
    if provider == "aws-bedrock":
        return {**common, "model": name, "max_tokens": settings.max_output_tokens}
    if provider == "google-gemini":
        return {**common, "model": name, "max_output_tokens": settings.max_output_tokens}
    if provider == "ollama":
        return {
            **common,
            "model": name,
            "num_predict": settings.max_output_tokens,
            **({"base_url": settings.ollama_base_url} if settings.ollama_base_url else {}),
        }
    raise ConfigurationError(f"Unknown provider {provider!r}.")


def build_chat_model(
    settings: Settings, progress: Callable[[int, int], None] | None = None
) -> BaseChatModel:
    """The configured chat model (the local one assembles its weights first, with progress)."""
    if settings.provider == "local":
        from pilothouse.models.local_chat import build_local_chat_model

        return build_local_chat_model(settings, progress)
    cls = _load_class(settings.provider)
    try:
        model: BaseChatModel = cls(**_kwargs(settings))
    except ConfigurationError:
        raise
    except Exception as exc:  # provider SDKs raise on missing keys at construction
        info = PROVIDER_INFO[settings.provider]
        raise ConfigurationError(
            f"Could not set up {settings.model!r}: {exc}"[:400], hint=f"It needs {info.needs}."
        ) from exc
    return model


@dataclass
class ModelSetup:
    """A chat model with the facts the context layers need about it."""

    chat_model: BaseChatModel
    window: ContextWindow
    counter: TokenCounter
    name: str


def setup_model(
    settings: Settings,
    chat_model: BaseChatModel | None = None,
    local_counter: Callable[[str], int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ModelSetup:
    """Build (or wrap a given) chat model with its window and the best token counter."""
    from pilothouse.models.tokens import build_token_counter

    model = chat_model if chat_model is not None else build_chat_model(settings, progress)
    window = resolve_context_window(settings, model)
    if local_counter is None and settings.provider == "local" and chat_model is None:
        local_counter = model.get_num_tokens  # the model's own vocabulary (a vocab-only load)
    counter = build_token_counter(settings.provider, local_counter=local_counter)
    return ModelSetup(model, window, counter, settings.model)
