"""Context windows: how many tokens each model accepts, and where that number came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pilothouse.config import Settings, provider_env_prefix
from pilothouse.errors import ConfigurationError

# Input windows of common models, in tokens. Prefix match on the model name: the longest
# matching prefix wins, so "gpt-4o-mini-2024-07-18" finds "gpt-4o-mini".
KNOWN_WINDOWS: dict[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude-3": 200_000,
    "claude-3-5": 200_000,
    "claude-3-7": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-haiku-4": 200_000,
    "anthropic.claude": 200_000,
    "us.anthropic.claude": 200_000,
    "amazon.nova": 300_000,
    "meta.llama3": 128_000,
    "mistral.mistral-large": 128_000,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5": 1_048_576,
    "llama3.1": 128_000,
    "llama3.2": 128_000,
    "llama3": 8_192,
    "qwen2.5": 32_768,
    "qwen2.5-coder": 32_768,
    "mistral": 32_768,
    "phi3": 4_096,
}


@dataclass(frozen=True)
class ContextWindow:
    """A model's input window and the source of the figure (shown by `pilothouse models`)."""

    tokens: int
    source: str


def lookup_known_window(model_name: str) -> int | None:
    """The table's window for `model_name` by longest prefix, or None."""
    name = model_name.lower().split("/")[-1]
    best: tuple[int, int] | None = None
    for prefix, tokens in KNOWN_WINDOWS.items():
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), tokens)
    return None if best is None else best[1]


def resolve_context_window(settings: Settings, chat_model: Any | None = None) -> ContextWindow:
    """Find the window for the configured model.

    Order: `<PROVIDER>_MAX_CONTEXT_TOKENS`, then `MAX_CONTEXT_TOKENS`, then the local model's
    configured n_ctx, then the table above, then the provider's own model profile.
    """
    provider = settings.provider
    if provider in settings.provider_context_overrides:
        return ContextWindow(
            settings.provider_context_overrides[provider],
            f"{provider_env_prefix(provider)}_MAX_CONTEXT_TOKENS",
        )
    if settings.max_context_tokens is not None:
        return ContextWindow(settings.max_context_tokens, "MAX_CONTEXT_TOKENS")
    if provider == "local":
        return ContextWindow(settings.local_context_tokens, "PILOTHOUSE_LOCAL_CONTEXT_TOKENS")
    known = lookup_known_window(settings.model_name)
    if known is not None:
        return ContextWindow(known, "built-in table")
    profile = getattr(chat_model, "profile", None) if chat_model is not None else None
    if isinstance(profile, dict) and isinstance(profile.get("max_input_tokens"), int):
        return ContextWindow(profile["max_input_tokens"], "provider profile")
    raise ConfigurationError(
        f"The context window of {settings.model!r} is unknown.",
        hint="Set MAX_CONTEXT_TOKENS (or "
        f"{provider_env_prefix(provider)}_MAX_CONTEXT_TOKENS) to the model's input limit.",
    )
