"""The Host and Origin rules every HTTP server applies, as a table of requests and answers.

The servers themselves are driven over real HTTP in tests/a2a/test_serve_host_origin.py
(`pilothouse serve`) and tests/tools/test_mcp_http_auth.py (MCP over HTTP).
"""

from __future__ import annotations

import pytest

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.http_guard import HostPolicy, bearer_token, split_host

LOOPBACK = HostPolicy.for_server("127.0.0.1")
BEHIND_PROXY = HostPolicy.for_server(
    "0.0.0.0", ["pilothouse.example.com", "*.internal.example", "pinned.example:9000",
                "argocd"], cors_origins=["https://ops.example.com"])


@pytest.mark.parametrize(("policy", "host", "allowed"), [
    (LOOPBACK, "127.0.0.1:8080", True),
    (LOOPBACK, "localhost", True),
    (LOOPBACK, "LocalHost.:9", True),  # DNS ignores case and the root dot
    (LOOPBACK, "[::1]:8080", True),
    (LOOPBACK, "evil.example:8080", False),  # the rebinding attacker's name
    (LOOPBACK, "localhost.evil.example", False),
    (LOOPBACK, "10.0.0.5:8080", False),  # an address only counts when bound to every one
    (LOOPBACK, "", False),
    (LOOPBACK, "[::1", False),
    (BEHIND_PROXY, "10.0.0.5:8080", True),  # the kubelet's probe names the pod by address
    (BEHIND_PROXY, "[fd00::5]:8080", True),
    (BEHIND_PROXY, "pilothouse.example.com", True),
    (BEHIND_PROXY, "pilothouse.example.com:443", True),
    (BEHIND_PROXY, "a.internal.example", True),
    (BEHIND_PROXY, "internal.example", False),
    (BEHIND_PROXY, "pinned.example:9000", True),
    (BEHIND_PROXY, "pinned.example:9001", False),
    (BEHIND_PROXY, "argocd:8080", True),  # e.g. `serve`'s public URL host
    (BEHIND_PROXY, "evil.example", False),
])
def test_only_the_names_a_server_answers_to_pass(policy: HostPolicy, host: str,
                                                 allowed: bool) -> None:
    assert policy.allows_host(host) is allowed


@pytest.mark.parametrize(("origin", "host", "allowed"), [
    ("http://127.0.0.1:8080", "127.0.0.1:8080", True),  # the web UI's own page
    ("https://pilothouse.example.com", "pilothouse.example.com", True),
    ("http://localhost:3000", "localhost:8080", False),  # another local page is another site
    ("https://evil.example", "127.0.0.1:8080", False),
    ("null", "127.0.0.1:8080", False),  # sandboxed frames and file:// pages
    ("https://ops.example.com", "10.0.0.5:8080", True),  # PILOTHOUSE_CORS_ORIGINS
    ("https://ops.example.com/", "10.0.0.5:8080", True),
    ("https://pilothouse.example.com", "10.0.0.5:8080", True),  # proxy rewrote Host
    ("https://b.internal.example:8443", "10.0.0.5:8080", True),
    ("https://localhost", "10.0.0.5:8080", False),  # loopback names are not origins
])
def test_a_browser_origin_must_be_the_servers_own_or_configured(origin: str, host: str,
                                                                 allowed: bool) -> None:
    assert BEHIND_PROXY.allows_origin(origin, host) is allowed


def test_a_star_accepts_any_host_but_not_any_origin() -> None:
    policy = HostPolicy.for_server("0.0.0.0", ["*"])
    assert policy.any_host and policy.allows_host("whatever.example:1")
    assert not policy.allows_origin("https://evil.example", "whatever.example:1")


@pytest.mark.parametrize(("entry", "shown"), [
    ("https://pilothouse.example.com", "`PILOTHOUSE_ALLOWED_HOSTS=pilothouse.example.com`"),
    ("pilot house", "`PILOTHOUSE_ALLOWED_HOSTS=pilothouse.example.com,"),
])
def test_a_bad_allowed_host_stops_the_settings_and_shows_a_good_one(entry: str,
                                                                    shown: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        Settings.from_env({"PILOTHOUSE_ALLOWED_HOSTS": f"ok.example,{entry}"})
    assert "PILOTHOUSE_ALLOWED_HOSTS" in refused.value.message
    assert shown in (refused.value.hint or "")


def test_the_settings_read_names_and_mcp_keys_without_showing_keys() -> None:
    key = "k" * 40
    settings = Settings.from_env({"PILOTHOUSE_ALLOWED_HOSTS": "a.example, b.example:8443",
                                  "PILOTHOUSE_MCP_KEYS": f"{key}, "})
    assert settings.allowed_hosts == ("a.example", "b.example:8443")
    assert settings.mcp_keys == (key,)
    assert key not in repr(settings) and key in settings.secret_values()


@pytest.mark.parametrize(("value", "parsed"), [
    ("example.com:8080", ("example.com", 8080)), ("[::1]:80", ("::1", 80)),
    ("::1", ("::1", None)), ("host:99999", None), ("a/b", None), ("[::1]x", None),
])
def test_host_values_split_into_name_and_port(value: str,
                                              parsed: tuple[str, int | None] | None) -> None:
    assert split_host(value) == parsed


@pytest.mark.parametrize(("header", "token"), [
    (None, None), ("Bearer abc", "abc"), ("bearer  abc ", "abc"), ("Basic YTpi", ""),
])
def test_the_bearer_token_is_read_only_from_the_bearer_scheme(header: str | None,
                                                              token: str | None) -> None:
    headers = [(b"authorization", header.encode())] if header else []
    assert bearer_token({"type": "http", "headers": headers}) == token
