"""Settings: defaults, the seed's variables, and errors that name the variable."""

from __future__ import annotations

import pytest

from pilothouse.config import DEFAULT_MODEL, Settings
from pilothouse.errors import ConfigurationError
from pilothouse.models.windows import resolve_context_window


def test_defaults_work_offline() -> None:
    settings = Settings.from_env({})
    assert settings.model == DEFAULT_MODEL and settings.provider == "local"
    assert settings.max_tool_output_size == 10_000
    assert settings.max_search_results == 1000 and settings.warn_search_results == 500


@pytest.mark.parametrize(("env", "variable"), [
    ({"MAX_TOOL_OUTPUT_SIZE": "lots"}, "MAX_TOOL_OUTPUT_SIZE"),
    ({"MAX_CONTEXT_TOKENS": "12"}, "MAX_CONTEXT_TOKENS"),
    ({"ANTHROPIC_MAX_CONTEXT_TOKENS": "x"}, "ANTHROPIC_MAX_CONTEXT_TOKENS"),
    ({"PILOTHOUSE_MODEL": "gpt-4o"}, "PILOTHOUSE_MODEL"),
    ({"PILOTHOUSE_MODEL": "acme:gpt"}, "PILOTHOUSE_MODEL"),
    ({"ARGOCD_VERIFY_SSL": "maybe"}, "ARGOCD_VERIFY_SSL"),
    ({"PILOTHOUSE_DISABLE_LAYERS": "preflight,magic"}, "PILOTHOUSE_DISABLE_LAYERS"),
    ({"WARN_SEARCH_RESULTS": "2000"}, "WARN_SEARCH_RESULTS"),
    ({"LLM_PROVIDER": "openai"}, "LLM_PROVIDER"),
    ({"PILOTHOUSE_MEMORY_LIMIT": "lots"}, "PILOTHOUSE_MEMORY_LIMIT"),
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"}, "OTEL_EXPORTER_OTLP_PROTOCOL"),
])
def test_invalid_values_name_the_variable(env: dict[str, str], variable: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        Settings.from_env(env)
    assert variable in str(error.value)


def test_seed_variables_select_provider_and_window() -> None:
    settings = Settings.from_env({"LLM_PROVIDER": "anthropic", "LLM_MODEL": "claude-sonnet-4-5",
                                  "ANTHROPIC_MAX_CONTEXT_TOKENS": "150000",
                                  "MAX_CONTEXT_TOKENS": "90000"})
    assert settings.model == "anthropic:claude-sonnet-4-5"
    window = resolve_context_window(settings)
    assert (window.tokens, window.source) == (150_000, "ANTHROPIC_MAX_CONTEXT_TOKENS")


def test_window_from_table_then_variable_and_unknown_models_say_what_to_set() -> None:
    assert resolve_context_window(Settings.from_env(
        {"PILOTHOUSE_MODEL": "openai:gpt-4o-mini-2024-07-18"})).tokens == 128_000
    assert resolve_context_window(Settings.from_env(
        {"PILOTHOUSE_MODEL": "openai:gpt-4o", "MAX_CONTEXT_TOKENS": "30000"})).tokens == 30_000
    with pytest.raises(ConfigurationError) as error:
        resolve_context_window(Settings.from_env({"PILOTHOUSE_MODEL": "ollama:my-finetune"}))
    assert "MAX_CONTEXT_TOKENS" in str(error.value)


def test_secrets_are_redacted_for_display() -> None:
    env = {"ARGOCD_TOKEN": "eyJabc.def.ghi", "OPENAI_API_KEY": "sk-x"}
    shown = Settings.from_env(env).redacted()
    assert shown["argocd_token"] == "[REDACTED]" and shown["openai_api_key"] == "[REDACTED]"


def test_the_local_model_gets_longer_to_summarize_unless_told_otherwise() -> None:
    assert Settings.from_env({}).summary_timeout_seconds == 180
    assert Settings.from_env({"PILOTHOUSE_MODEL": "openai:gpt-4o"}).summary_timeout_seconds == 60
    assert Settings.from_env({"PILOTHOUSE_SUMMARY_TIMEOUT": "30"}).summary_timeout_seconds == 30


def test_with_model_checks_the_name_and_says_where_it_came_from() -> None:
    assert Settings.from_env({}).with_model("ollama:llama3.1").provider == "ollama"
    with pytest.raises(ConfigurationError, match="--judge names an unknown provider 'gpt'"):
        Settings.from_env({}).with_model("gpt:4o", "--judge")
