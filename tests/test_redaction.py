"""One table of secret shapes, applied to every place text leaves Pilothouse.

Each sink is the real path: the redactor itself, a structured log line through the logging
pipeline, a span attribute through the exporter, an error shown to a user, an Argo CD and a
GitHub tool error through the real MCP client against the sandboxes, a real `echo` through the
shell tool, and `Settings.redacted()`. Every shape must be masked in every sink, and every
near miss (a git SHA, a UUID, a token count) must come out unchanged.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import structlog
from anyio.from_thread import start_blocking_portal
from mcp import Client
from opentelemetry.trace import Status, StatusCode

from pilothouse.config import Settings
from pilothouse.observability.logging import configure_logging, get_logger, remove_logging
from pilothouse.observability.tracing import configure_tracing, get_tracer, shutdown_tracing
from pilothouse.redaction import MASK, Redactor, is_secret_name
from pilothouse.runtime.errors import describe_failure
from pilothouse.sandbox.argocd import FleetSpec, running_sandbox
from pilothouse.sandbox.github import running_github_sandbox
from pilothouse.tools.argocd.server import build_argocd_server
from pilothouse.tools.github import build_github_server
from pilothouse.tools.shell import ShellService

#: A configured credential with no recognisable shape: only exact-value masking catches it.
KNOWN = "Pilothouse-Canary-42"


@dataclass(frozen=True)
class Shape:
    """A text holding a credential: `secret` must vanish, `kept` (its label) must stay."""

    id: str
    text: str
    secret: str
    kept: str = ""


JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
ARGOCD_JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJhcmdvY2QiLCJzdWIiOiJhZG1pbjphcGlL"
              "ZXkiLCJqdGkiOiI1YzFmIn0.Wd3nKq0v3l7cQ1yHqJ7Xw0ZbS9hM3c0F6m2aP8sT4uE")
PEM_BODY = "MIIEowIBAAKCAQEA7bq9Zz"
SHAPES = [
    Shape("github-classic", "clone with ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 please",
          "ghp_a1B2c3D4e5F6g7H8i9J0", "clone with"),
    Shape("github-app", "GH_TOKEN is ghs_16C7e42F292c6912E7710c838347Ae178B4a",
          "ghs_16C7e42F292c6912E7710c838347Ae178B4a", "GH_TOKEN is"),
    Shape("github-fine-grained",
          "auth github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW x",
          "github_pat_11ABCDEFG0123456789", "auth"),
    Shape("aws-access-key-id", "key id AKIAIOSFODNN7EXAMPLE in use", "AKIAIOSFODNN7EXAMPLE",
          "in use"),
    Shape("aws-session-key-id", "ASIAY34FZKBOKMUTVV7A expired", "ASIAY34FZKBOKMUTVV7A", "expired"),
    Shape("aws-secret-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
          "wJalrXUtnFEMI", "aws_secret_access_key = "),
    Shape("jwt", f"session {JWT} ok", JWT[:40], "session"),
    Shape("argocd-token", f"ARGOCD_AUTH_TOKEN {ARGOCD_JWT}", ARGOCD_JWT[40:80], "ARGOCD_AUTH"),
    Shape("bearer-header", "Authorization: Bearer abc123DEF456ghi789", "abc123DEF456ghi789",
          "Authorization: Bearer "),
    Shape("basic-header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA",
          "Authorization: Basic "),
    Shape("url-password", "cloning https://deploy:hunter2hunter2@git.example.com/repo.git",
          "hunter2hunter2", "https://deploy:"),
    Shape("password-assignment", "login with password=correct-horse-battery now",
          "correct-horse-battery", "password="),
    Shape("token-yaml", "token: 7f3c9a0e5b1d now", "7f3c9a0e5b1d", "token: "),
    Shape("api-key-json", '{"api_key": "AIzaSyA-1234567890abcdef"}', "AIzaSyA-1234567890",
          '"api_key": "'),
    Shape("secret-assignment", "client_secret=s3cr3t-v4lue-x", "s3cr3t-v4lue-x", "client_secret="),
    Shape("pem-private-key",
          f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\nq8ZzKw==\n-----END RSA PRIVATE KEY-----",
          PEM_BODY),
    Shape("openai-key", "key sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34 set",
          "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34", "set"),
    Shape("anthropic-key", "sk-ant-api03-Xy9_Zq8-Wv7Ut6Sr5Qp4On3Ml2Kj1IhGf", "sk-ant-api03-Xy9"),
]
NEAR_MISSES = [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "request 123e4567-e89b-12d3-a456-426614174000",
    "max_output_tokens=4096",
    "local_context_tokens: 8192",
    "MAX_CONTEXT_TOKENS=32000",
    "app sk-payments-api-production-eu",
    "Basic authentication is disabled",
    "https://git.example.com/acme/repo.git",
]

Show = Callable[[str], str]


# -- sinks: each shows what leaves Pilothouse for a given text ------------------------------
@pytest.fixture
def redactor_sink() -> Show:
    return Redactor([KNOWN])


@pytest.fixture
def log_sink() -> Iterator[Show]:
    """Both kinds of logger through the real pipeline, rendered as JSON lines."""
    root, level = logging.getLogger(), logging.getLogger().level
    buffer = io.StringIO()
    handler = configure_logging("INFO", json=True, stream=buffer, redactor=Redactor([KNOWN]))

    def show(text: str) -> str:
        buffer.seek(0)
        buffer.truncate()
        get_logger("pilothouse.test").info("call failed", detail=text)
        logging.getLogger("pilothouse.std").warning("upstream said %s", text)
        lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
        assert len(lines) == 2
        # The parsed fields, plus the raw lines (every other field) for the leak check.
        return "\n".join([lines[0]["detail"], lines[1]["event"], buffer.getvalue()])

    try:
        yield show
    finally:
        remove_logging(handler)
        root.setLevel(level)
        structlog.contextvars.clear_contextvars()


@pytest.fixture
def span_sink() -> Iterator[Show]:
    """A span attribute, an event attribute and a status, as the exporter receives them."""
    setup = configure_tracing("redaction-test", in_memory=True, install_global=False,
                              redactor=Redactor([KNOWN]))
    assert setup.memory is not None
    memory = setup.memory

    def show(text: str) -> str:
        memory.clear()
        with get_tracer().start_as_current_span("probe", attributes={"pilothouse.detail": text,
                                                                     "pilothouse.count": 3}):
            span = get_tracer().start_span("inner")
            span.add_event("upstream", {"message": text})
            span.set_status(Status(StatusCode.ERROR, text))
            span.end()
        setup.flush()
        spans = {s.name: s for s in memory.get_finished_spans()}
        outer, inner = spans["probe"], spans["inner"]
        assert (outer.attributes or {})["pilothouse.count"] == 3
        (event,) = inner.events
        return "\n".join([str((outer.attributes or {})["pilothouse.detail"]),
                          str((event.attributes or {})["message"]),
                          inner.status.description or ""])

    try:
        yield show
    finally:
        shutdown_tracing()


@pytest.fixture
def error_sink() -> Show:
    """What a user is told when a run fails with an exception carrying the text."""
    return lambda text: describe_failure(RuntimeError(text)).message


@pytest.fixture(scope="module")
def argocd_tool() -> Iterator[Show]:
    """An Argo CD tool error: the sandbox echoes an unparsable selector back in its 500."""
    with (running_sandbox(FleetSpec(apps=3), username="ops", password=KNOWN) as fleet,
          start_blocking_portal() as portal):
        settings = Settings(argocd_url=fleet.url, argocd_username="ops", argocd_password=KNOWN)
        server = build_argocd_server(settings)
        with portal.wrap_async_context_manager(Client(server, mode="legacy")) as client:

            def show(text: str) -> str:
                result = portal.call(client.call_tool, "list_applications",
                                     {"selector": f"x {text}"})
                text = result.content[0].text  # type: ignore[union-attr]
                payload = result.structured_content
                assert result.is_error and payload is not None
                assert payload["error"].startswith("Invalid label selector")
                # What is shown (the rendered view) carries the same, masked, message.
                assert payload["error"] in text
                return text

            yield show


@pytest.fixture(scope="module")
def github_tool() -> Iterator[Show]:
    """A GitHub tool error that quotes the owner it was given."""
    with running_github_sandbox() as github, start_blocking_portal() as portal:
        server = build_github_server(github.url, github.token, timeout=10)
        with portal.wrap_async_context_manager(Client(server, mode="legacy")) as client:

            def show(text: str) -> str:
                result = portal.call(client.call_tool, "get_pull_request",
                                     {"owner": text, "repo": "payments-api", "number": 1})
                text = result.content[0].text  # type: ignore[union-attr]
                payload = result.structured_content
                assert result.is_error and payload is not None
                assert "is not a valid GitHub owner" in payload["error"]
                # What is shown (the rendered view) carries the same, masked, message.
                assert payload["error"] in text
                return text

            yield show


@pytest.fixture
def shell_sink(tmp_path: Path) -> Show:
    """A real `echo` run by the shell tool, with KNOWN in the server's environment."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "DEPLOY_TOKEN": KNOWN}
    service = ShellService(workspace, approval_secret="approval-secret-for-tests", base_env=env)

    def show(text: str) -> str:
        result = service.run(f"echo '{text}'")
        assert result["status"] == "ok", result
        return str(result["stdout"])

    return show


@pytest.fixture
def settings_sink() -> Show:
    """A setting shown by `Settings.redacted()` (`pilothouse doctor`, the API's settings view)."""
    return lambda text: str(Settings(argocd_password=KNOWN,
                                     otel_service_name=text).redacted()["otel_service_name"])


SINKS = ["redactor_sink", "log_sink", "span_sink", "error_sink", "argocd_tool", "github_tool",
         "shell_sink", "settings_sink"]
#: The sinks that are given the configured secret values (the others see shapes only).
KNOWING_SINKS = ["redactor_sink", "log_sink", "span_sink", "argocd_tool", "shell_sink",
                 "settings_sink"]


@pytest.fixture(params=SINKS)
def sink(request: pytest.FixtureRequest) -> Show:
    show: Show = request.getfixturevalue(request.param)
    return show


# -- the table, through every sink ---------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=[s.id for s in SHAPES])
def test_every_sink_masks_every_secret_shape(sink: Show, shape: Shape) -> None:
    shown = sink(shape.text)
    assert shape.secret not in shown
    assert MASK in shown
    assert shape.kept in shown


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_every_sink_keeps_what_only_looks_like_a_secret(sink: Show, text: str) -> None:
    shown = sink(text)
    assert text in shown
    assert MASK not in shown


@pytest.mark.parametrize("name", KNOWING_SINKS)
def test_configured_secret_values_are_masked_whatever_their_shape(
    request: pytest.FixtureRequest, name: str
) -> None:
    show: Show = request.getfixturevalue(name)
    shown = show(f"the value {KNOWN} leaked")
    assert KNOWN not in shown
    assert f"the value {MASK} leaked" in shown


# -- names -----------------------------------------------------------------------------------
SECRET_NAMES = ["GITHUB_TOKEN", "GH_TOKEN", "ARGOCD_TOKEN", "ARGOCD_PASSWORD", "OPENAI_API_KEY",
                "PILOTHOUSE_API_KEYS", "PILOTHOUSE_ADMIN_KEYS", "AWS_SECRET_ACCESS_KEY",
                "AWS_ACCESS_KEY_ID", "PILOTHOUSE_APPROVAL_SECRET", "SENTRY_DSN", "token",
                "argocd_token", "X-Api-Key", "Authorization", "Cookie", "client_secret",
                "apiKey", "accessToken", "passwordSecretRef"]
PLAIN_NAMES = ["max_output_tokens", "local_context_tokens", "MAX_CONTEXT_TOKENS", "input_tokens",
               "max_tokens", "token_count", "PWD", "author", "keyboard", "monkey",
               "ARGOCD_USERNAME", "github_api_url"]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_names_that_hold_no_secret(name: str) -> None:
    assert not is_secret_name(name)


OPS_KEY, BARE_KEY = "k3y-for-ops-2a6e0c4f8b1d5a9e3c7f", "bare-k3y-123-7d1b5f9c3a6e0d4b8f2a"


def test_settings_show_counts_and_hide_credentials() -> None:
    settings = Settings.from_env({
        "GITHUB_TOKEN": "ghp_" + "x" * 36, "ARGOCD_PASSWORD": "hunter2hunter2",
        "OPENAI_API_KEY": "sk-whatever",
        "PILOTHOUSE_API_KEYS": f"ops={OPS_KEY},{BARE_KEY}",
        "MAX_CONTEXT_TOKENS": "32000", "PILOTHOUSE_MAX_OUTPUT_TOKENS": "4096",
        "PILOTHOUSE_LOCAL_CONTEXT_TOKENS": "8192",
    })
    shown = settings.redacted()
    for secret in ("github_token", "argocd_password", "openai_api_key", "api_keys"):
        assert shown[secret] == MASK, secret
    assert shown["max_context_tokens"] == 32000 and shown["max_output_tokens"] == 4096
    assert shown["local_context_tokens"] == 8192
    assert shown["argocd_token"] is None and shown["admin_keys"] == (), "unset stays visible"
    # The key of a `name=key` entry is a secret value on its own, as are bare keys.
    assert {OPS_KEY, BARE_KEY, "hunter2hunter2"} <= set(settings.secret_values())


def test_a_value_learnt_later_is_masked_and_short_values_are_not() -> None:
    redact = Redactor(["abc"])  # too short: masking it would garble ordinary words
    redact.add("session-token-from-login")
    redact.add(None)
    assert redact("abc session-token-from-login") == f"abc {MASK}"
    assert redact.values == ("session-token-from-login",)
