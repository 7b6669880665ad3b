"""Every setting's error names the variable and shows a value that works.

The variables are not listed by hand: `Settings.from_env` is run over an environment that
records what it reads, so a new setting must be classified here (an invalid value, or free
text) before this suite passes. Each invalid value must raise a `ConfigurationError` whose
message names the variable and whose hint holds an example in backticks (`NAME=value`); the
example, applied in place of the invalid value, must then be accepted.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pilothouse.config import PROVIDER_VARIABLES, Settings
from pilothouse.errors import ConfigurationError


class RecordingEnv(dict[str, str]):
    """An environment that remembers every variable Settings asks for."""

    def __init__(self, values: dict[str, str], asked: set[str]) -> None:
        super().__init__(values)
        self.asked = asked

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        self.asked.add(key)
        return super().get(key, default)


def variables_read() -> set[str]:
    """The variables Settings reads, with and without the ones that switch on others."""
    asked: set[str] = set()
    Settings.from_env(RecordingEnv({}, asked))
    Settings.from_env(RecordingEnv({"LLM_PROVIDER": "openai", "OPENAI_MODEL": "gpt-4o",
                                    "PILOTHOUSE_AGENTS_ARGOCD_URL": "http://argocd:8080",
                                    **STAGING}, asked))
    return asked


#: A second Argo CD instance: its variables are read only when it is named.
STAGING = {"ARGOCD_INSTANCES": "staging",
           "ARGOCD_STAGING_URL": "https://argocd-staging.example.com"}
#: Any text is valid: names, paths (checked where they are used), secrets, host names.
FREE_TEXT = {
    "ARGOCD_CA_BUNDLE", "ARGOCD_PASSWORD", "ARGOCD_TOKEN", "ARGOCD_USERNAME", "GH_TOKEN",
    "GITHUB_TOKEN", "LLM_MODEL", "OPENAI_MODEL", "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_SERVICE_NAME", "PILOTHOUSE_ADMIN_KEYS", "PILOTHOUSE_AGENTS_ARGOCD_KEY",
    "PILOTHOUSE_API_HOST", "PILOTHOUSE_API_KEYS", "PILOTHOUSE_APPROVAL_SECRET",
    "PILOTHOUSE_CORS_ORIGINS", "PILOTHOUSE_DATABASE_URL", "PILOTHOUSE_HOME",
    "PILOTHOUSE_MCP_KEYS",  # checked where MCP over HTTP starts: stdio needs none
    "PILOTHOUSE_LOCAL_MODEL_PATH", "PILOTHOUSE_SHELL_POLICY", "PILOTHOUSE_WORKSPACE",
    "ARGOCD_STAGING_TOKEN", "ARGOCD_STAGING_USERNAME", "ARGOCD_STAGING_PASSWORD",
    "ARGOCD_STAGING_CA_BUNDLE", *PROVIDER_VARIABLES,
}
_CONTEXT_OVERRIDES = ("ANTHROPIC", "AWS_BEDROCK", "AZURE_OPENAI", "GOOGLE_GEMINI", "LOCAL",
                      "OLLAMA", "OPENAI", "OPENAI_COMPATIBLE")
#: One or more invalid values per variable that has a shape.
INVALID: dict[str, tuple[str, ...]] = {
    "MAX_CONTEXT_TOKENS": ("abc", "12", "1e5"),
    **{f"{p}_MAX_CONTEXT_TOKENS": ("lots", "100") for p in _CONTEXT_OVERRIDES},
    "PILOTHOUSE_MAX_OUTPUT_TOKENS": ("many", "8"),
    "PILOTHOUSE_LOCAL_CONTEXT_TOKENS": ("big", "100"),
    "PILOTHOUSE_LOCAL_THREADS": ("two", "0"),
    "PILOTHOUSE_LOCAL_IDLE_SECONDS": ("soon", "-1"),
    "MAX_TOOL_OUTPUT_SIZE": ("lots", "10"),
    "MAX_SEARCH_RESULTS": ("all", "0"),
    "WARN_SEARCH_RESULTS": ("some", "0", "2000"),
    "PILOTHOUSE_MODEL_CALL_LIMIT": ("x", "0"),
    "PILOTHOUSE_TOOL_CALL_LIMIT": ("x", "0"),
    "PILOTHOUSE_REPEATED_CALL_LIMIT": ("x", "0"),
    "PILOTHOUSE_API_PORT": ("http", "0", "70000"),
    "PILOTHOUSE_API_MAX_BODY_BYTES": ("1MB", "10"),
    "PILOTHOUSE_ALLOWED_HOSTS": ("https://ph.example.com", "https://", "ph example.com", "[::1"),
    "PILOTHOUSE_AUTH_FAILURES_PER_MINUTE": ("often", "0", "1e6"),
    "PILOTHOUSE_NEW_CONVERSATIONS_PER_MINUTE": ("many", "0"),
    "PILOTHOUSE_API_HEADER_TIMEOUT": ("10s", "0", "nan"),
    "PILOTHOUSE_API_BODY_TIMEOUT": ("slow", "0", "4000"),
    "PILOTHOUSE_AGENTS_ANSWER_TOKENS": ("short", "-1"),
    "PILOTHOUSE_TOOL_TIMEOUT": ("x", "0", "nan"),
    "PILOTHOUSE_TOOL_OUTPUT_WINDOW_SHARE": ("half", "2"),
    "PILOTHOUSE_CONTEXT_TRIGGER": ("often", "1.5", "0.3"),
    "PILOTHOUSE_CONTEXT_TARGET": ("low", "0", "0.85"),
    "PILOTHOUSE_SUMMARY_TIMEOUT": ("soon", "0"),
    "PILOTHOUSE_MODEL_TIMEOUT": ("soon", "99999"),
    "PILOTHOUSE_SHELL_TIMEOUT": ("soon", "0"),
    "PILOTHOUSE_INDEX_MAX_FILES": ("all", "0", "1e4"),
    "PILOTHOUSE_AGENTS_TIMEOUT": ("soon", "0"),
    "PILOTHOUSE_MEMORY_HIGH_WATER": ("high", "1"),
    "PILOTHOUSE_MEMORY_SAMPLE_SECONDS": ("often", "0"),
    "ARGOCD_TIMEOUT": ("soon", "0"),
    "GITHUB_TIMEOUT": ("soon", "0"),
    "GITHUB_RATE_LIMIT_MAX_WAIT": ("forever", "-1"),
    "ARGOCD_VERIFY_SSL": ("maybe",),
    "ARGOCD_READ_ONLY": ("maybe",),
    "PILOTHOUSE_MCP_READ_ONLY": ("maybe",),
    "PILOTHOUSE_LOG_JSON": ("maybe",),
    "PILOTHOUSE_LOCAL_PREFIX_CACHE": ("maybe",),
    "PILOTHOUSE_LOCAL_LEADS": ("maybe",),
    "PILOTHOUSE_TRACE_CONSOLE": ("maybe",),
    "PILOTHOUSE_LOG_LEVEL": ("loud",),
    "PILOTHOUSE_MODEL": ("gpt-4o", "acme:gpt"),
    "LLM_PROVIDER": ("openai", "acme"),
    "PILOTHOUSE_DISABLE_LAYERS": ("preflight,magic",),
    "PILOTHOUSE_MEMORY_LIMIT": ("lots", "4096", "1"),
    "OTEL_EXPORTER_OTLP_PROTOCOL": ("carrier-pigeon",),
    "ARGOCD_URL": ("notaurl", "argocd.example.com:443", "https://"),
    "GITHUB_API_URL": ("api.github.com",),
    "OPENAI_BASE_URL": ("localhost:8000/v1",),
    "OLLAMA_BASE_URL": ("localhost:11434",),
    "PILOTHOUSE_AGENTS_ARGOCD_URL": ("argocd:8080",),
    "ARGOCD_INSTANCES": ("Staging", "default", "staging"),
    "ARGOCD_STAGING_URL": ("notaurl",),
    "ARGOCD_STAGING_VERIFY_SSL": ("maybe",),
}
#: The variables a variable is read with (without them it is never read).
CONTEXT: dict[str, dict[str, str]] = {
    "ARGOCD_STAGING_URL": {"ARGOCD_INSTANCES": "staging"},
    "ARGOCD_STAGING_VERIFY_SSL": STAGING,
}
#: Variables that name a file Settings reads: a missing file is the invalid value, and the
#: fix (a readable file) has no example to copy, so the hint must say what the file holds.
FILES: dict[str, tuple[str, str]] = {
    "PILOTHOUSE_DATABASE_URL_FILE": ("postgresql://pilothouse@db/pilothouse", "secret"),
}
#: Variables whose name, not value, is wrong: the fix replaces the variable.
INVALID_NAMES = {"PILOTHOUSE_MCP_JENKINS_TOOLS": "list_jobs",
                 "PILOTHOUSE_MCP_JENKINS_EXCLUDE_TOOLS": "delete_job"}
_EXAMPLE = re.compile(r"`([A-Z][A-Z0-9_]*)=([^`]*)`")


def test_every_variable_settings_reads_is_classified() -> None:
    read = variables_read()
    assert read - FREE_TEXT - set(INVALID) - set(FILES) == set(), "classify the new settings"
    assert set(INVALID) - read == set(), "a variable Settings no longer reads"


def _cases() -> list[tuple[str, str]]:
    return [(name, value) for name, values in INVALID.items() for value in values] + \
        list(INVALID_NAMES.items())


@pytest.mark.parametrize(("variable", "value"), _cases())
def test_an_invalid_value_names_the_variable_and_shows_one_that_works(
        variable: str, value: str) -> None:
    env = {**CONTEXT.get(variable, {}), variable: value}
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env(env)
    error = caught.value
    assert variable in error.message
    assert error.hint, f"{variable}={value!r} has no 'What to do'"
    examples = dict(_EXAMPLE.findall(error.hint))
    assert examples, f"no `NAME=value` example in: {error.hint}"
    assert "None" not in examples.values()
    fixed = {k: v for k, v in env.items() if k not in examples and k not in INVALID_NAMES}
    Settings.from_env({**fixed, **examples})  # the example is accepted


@pytest.mark.parametrize("variable", sorted(FILES))
def test_a_missing_file_is_named_and_a_readable_one_is_accepted(
        variable: str, tmp_path: Path) -> None:
    content, said = FILES[variable]
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env({variable: str(tmp_path / "absent")})
    assert variable in caught.value.message and said in (caught.value.hint or "")
    file = tmp_path / "mounted"
    file.write_text(content + "\n")
    Settings.from_env({variable: str(file)})


def test_a_bad_pair_is_explained_with_a_value_that_fits_the_other() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env({"PILOTHOUSE_CONTEXT_TRIGGER": "0.3", "PILOTHOUSE_CONTEXT_TARGET": "0.4"})
    examples = dict(_EXAMPLE.findall(caught.value.hint or ""))
    settings = Settings.from_env({"PILOTHOUSE_CONTEXT_TRIGGER": "0.3", **examples})
    assert settings.context_target_ratio < settings.context_trigger_ratio == 0.3
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env({"MAX_SEARCH_RESULTS": "300", "WARN_SEARCH_RESULTS": "400"})
    examples = dict(_EXAMPLE.findall(caught.value.hint or ""))
    assert Settings.from_env({"MAX_SEARCH_RESULTS": "300", **examples}).warn_search_results <= 300


def test_a_command_line_option_gets_an_option_shaped_example() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env({}).with_model("gpt-4o", "--judge")
    assert "`--judge local:" in (caught.value.hint or "")


@pytest.mark.parametrize(("variable", "value", "shown"), [
    ("MAX_CONTEXT_TOKENS", "abc", "`MAX_CONTEXT_TOKENS=32768`"),
    ("PILOTHOUSE_TOOL_TIMEOUT", "x", "`PILOTHOUSE_TOOL_TIMEOUT=60`"),
])
def test_the_cli_prints_the_error_and_what_to_do_and_exits_2(
        tmp_path: Path, variable: str, value: str, shown: str) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PILOTHOUSE_", "MAX_", "LLM_", "ARGOCD_", "GITHUB_"))}
    env.update({"PILOTHOUSE_HOME": str(tmp_path), variable: value})
    done = subprocess.run([sys.executable, "-m", "pilothouse", "models"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    text = " ".join(done.stderr.split())  # however the console wrapped it
    assert done.returncode == 2, done.stderr
    assert f"{variable}={value!r}" in text and f"What to do: Set {variable} to" in text
    assert shown in text and "Traceback" not in done.stderr
