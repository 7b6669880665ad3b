"""The network and storage checks of `pilothouse doctor`: does each configured thing answer?

Each check is one row: the Argo CD server (its version, then an authenticated call that proves
the token), GitHub (the rate-limit endpoint, which does not count against the quota, with the
token), the model's endpoint and credentials, the workspace and the database. Every request
has a short time limit (`PROBE_TIMEOUT_SECONDS`), so a closed port or a black-holed host is
named in seconds; no credential appears in a row, since errors come from the API clients,
whose messages pass their redactors. The clients (httpx, the tool packages) are imported by the
check that uses them: registering `doctor` must not load them.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pilothouse.config import DEFAULT_ARGOCD_INSTANCE, Settings
from pilothouse.errors import PilothouseError
from pilothouse.models.registry import PROVIDER_INFO
from pilothouse.redaction import Redactor
from pilothouse.runtime.database import conninfo, describe_url, is_postgres

#: Seconds any one request of `doctor` may take (connect and answer).
PROBE_TIMEOUT_SECONDS = 2.0


@dataclass(frozen=True)
class Check:
    """One row of `doctor`: what was checked, whether it works, and what to do if not."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    #: False for a part that is simply not set up (not a problem: the row says how to).
    configured: bool = True

    @property
    def status(self) -> str:
        if not self.configured:
            return "not configured"
        return "ok" if self.ok else "problem"

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "ok": self.ok,
                "detail": self.detail, "fix": self.fix}


def failed(name: str, error: PilothouseError) -> Check:
    return Check(name, False, error.message, error.hint or "")


# -- Argo CD ----------------------------------------------------------------------------------
async def argocd_checks(settings: Settings) -> list[Check]:
    """One row per Argo CD instance (ARGOCD_URL, then each of ARGOCD_INSTANCES)."""
    import asyncio

    from pilothouse.tools.argocd.instances import instance_settings

    targets = instance_settings(settings)
    if not targets:
        return [await argocd_check(settings)]
    rows = [argocd_check(one) if name == DEFAULT_ARGOCD_INSTANCE else
            argocd_check(one, f"Argo CD {name}", f"ARGOCD_{name.upper().replace('-', '_')}_")
            for name, one in targets.items()]
    return list(await asyncio.gather(*rows))


async def argocd_check(settings: Settings, name: str = "Argo CD",
                       prefix: str = "ARGOCD_") -> Check:
    """The server answers /api/version, and /api/v1/session/userinfo shows the token logged in
    (`prefix` names the instance's variables in the row)."""
    from pilothouse.tools.argocd.client import ArgoCDClient
    from pilothouse.tools.argocd.errors import ARGOCD, CREDENTIALS_HINT
    from pilothouse.tools.http_api.errors import display_url

    if not settings.argocd_url:
        return Check(name, True, "not configured (ARGOCD_URL is not set)",
                     "Set ARGOCD_URL and ARGOCD_TOKEN to use the Argo CD agent, or start "
                     "`pilothouse sandbox argocd` and use the lines it prints.", configured=False)
    shown = display_url(settings.argocd_url)
    try:
        client = ArgoCDClient.from_settings(settings, timeout=PROBE_TIMEOUT_SECONDS, retries=0)
    except PilothouseError as error:
        return failed(name, error)
    async with client:
        try:
            version = await client.get("/api/version")
            user = await client.get("/api/v1/session/userinfo")
        except PilothouseError as error:
            return failed(name, error)
        except ValueError:  # an answer that is not JSON: not the Argo CD API
            return Check(name, False, f"{shown} answered, but not as the Argo CD API.",
                         ARGOCD.url_hint)
    if not isinstance(version, dict) or "Version" not in version:
        return Check(name, False, f"{shown} answered, but not as the Argo CD API.",
                     ARGOCD.url_hint)
    if not (isinstance(user, dict) and user.get("loggedIn")):
        way = f"{prefix}TOKEN" if settings.argocd_token else \
            f"{prefix}USERNAME/{prefix}PASSWORD"
        return Check(name, False, f"Argo CD {version['Version']} at {shown} answers, but "
                                  f"does not accept {way}.", CREDENTIALS_HINT)
    mode = "read-only" if settings.argocd_read_only else "sync allowed (ARGOCD_READ_ONLY=false)"
    return Check(name, True, f"{version['Version']} at {shown}; logged in as "
                             f"{user.get('username', '?')}; {mode}")


# -- GitHub -----------------------------------------------------------------------------------
async def github_check(settings: Settings) -> Check:
    """GET /rate_limit with the token: reachability, the token, and the quota left."""
    from pilothouse.tools.github.client import DEFAULT_API_URL, GitHubClient
    from pilothouse.tools.http_api.errors import display_url

    name = "GitHub"
    if not settings.github_token and settings.github_api_url == DEFAULT_API_URL:
        return Check(name, True, "not configured (GITHUB_TOKEN is not set)",
                     "Set GITHUB_TOKEN (a read-only token; see the README) to use the GitHub "
                     "agent.", configured=False)
    shown = display_url(settings.github_api_url)
    client = GitHubClient(settings.github_api_url, settings.github_token,
                          timeout=PROBE_TIMEOUT_SECONDS, retries=0, max_rate_limit_wait=0)
    async with client:
        try:
            limits = await client.get_json("/rate_limit")
        except PilothouseError as error:
            return failed(name, error)
        except ValueError:
            return Check(name, False, f"{shown} answered, but not as the GitHub API.",
                         client.api.url_hint)
    core = (limits.get("resources", {}).get("core") if isinstance(limits, dict) else None) or {}
    if "remaining" not in core:
        return Check(name, False, f"{shown} answered, but not as the GitHub API.",
                     client.api.url_hint)
    quota = f"{core['remaining']:,} of {core.get('limit', 0):,} requests left this hour"
    if not settings.github_token:
        return Check(name, True, f"{shown} reachable without a token; {quota}",
                     "Set GITHUB_TOKEN: without one GitHub allows 60 requests an hour and no "
                     "private repositories.")
    if core["remaining"] == 0:
        return Check(name, False, f"{shown}: token accepted, but {quota}.",
                     "Wait for the hourly reset, or use another token.")
    return Check(name, True, f"{shown}: token accepted; {quota}")


# -- the model --------------------------------------------------------------------------------
#: Per provider: the variables that must be set (any one of each group).
_NEEDED: dict[str, tuple[tuple[str, ...], ...]] = {
    "openai": (("OPENAI_API_KEY",),),
    "azure-openai": (("AZURE_OPENAI_API_KEY",), ("AZURE_OPENAI_ENDPOINT",),
                     ("OPENAI_API_VERSION",)),
    "anthropic": (("ANTHROPIC_API_KEY",),),
    "google-gemini": (("GOOGLE_API_KEY",),),
    "aws-bedrock": (("AWS_REGION", "AWS_DEFAULT_REGION"),),
}


def model_credentials(settings: Settings) -> Check:
    """The provider's package is installed and the variables it needs are set."""
    provider = settings.provider
    info = PROVIDER_INFO[provider]
    if importlib.util.find_spec(info.module.split(".")[0]) is None:
        return Check("model", False, f"{settings.model}: the package {info.package} is not "
                                     "installed.", f"pip install {info.package}")
    have = set(settings.provider_variables)
    missing = [" or ".join(group) for group in _NEEDED.get(provider, ())
               if not have.intersection(group)]
    if missing:
        return Check("model", False, f"{settings.model}: {', '.join(missing)} not set.",
                     f"Set {', '.join(missing)} (the {provider} provider needs {info.needs}), "
                     "or choose another model with PILOTHOUSE_MODEL.")
    if provider == "openai-compatible" and not settings.openai_base_url:
        return Check("model", False, f"{settings.model}: OPENAI_BASE_URL is not set.",
                     "Set OPENAI_BASE_URL to the server, e.g. `OPENAI_BASE_URL=http://127.0.0.1:"
                     "8000/v1` for vLLM or a llama.cpp server.")
    return Check("model", True, settings.model)


def _model_endpoint(settings: Settings) -> tuple[str, str, dict[str, str]] | None:
    """(URL to GET, the variable that sets it, headers) of an endpoint worth probing."""
    provider = settings.provider
    key = {"Authorization": f"Bearer {settings.openai_api_key}"} \
        if settings.openai_api_key else {}
    if provider in ("openai", "openai-compatible") and settings.openai_base_url:
        return f"{settings.openai_base_url}/models", "OPENAI_BASE_URL", key
    if provider == "ollama":
        base = settings.ollama_base_url or "http://127.0.0.1:11434"
        return f"{base}/api/tags", "OLLAMA_BASE_URL", {}
    return None  # a hosted API at its default address: the key check is what doctor can do


async def model_endpoint_check(settings: Settings) -> Check | None:
    """The model server answers (any HTTP answer but a rejected key counts as reachable)."""
    import httpx

    from pilothouse.tools.http_api.errors import ApiProfile, display_url, transport_error

    target = _model_endpoint(settings)
    if target is None:
        return None
    url, variable, headers = target
    shown = display_url(url.rsplit("/", 1)[0])
    profile = ApiProfile(
        name="The model server", unreachable_hint=f"Check {variable} and that the server runs.",
        tls_hint="Install its CA in the system trust store (or point SSL_CERT_FILE at it).",
        timeout_setting="PILOTHOUSE_MODEL_TIMEOUT", narrow_hint="", url_hint="")
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_SECONDS) as http:
            response = await http.get(url, headers=headers)
    except httpx.TransportError as exc:
        return failed("model endpoint", transport_error(profile, exc, url=shown,
                                                        timeout=PROBE_TIMEOUT_SECONDS))
    if response.status_code in (401, 403):
        return Check("model endpoint", False,
                     f"{shown} refused the key (HTTP {response.status_code}).",
                     "Check OPENAI_API_KEY for this server.")
    return Check("model endpoint", True, f"{shown} answers (HTTP {response.status_code})")


# -- workspace and database -------------------------------------------------------------------
def workspace_check(settings: Settings) -> Check:
    """The DevOps agent's directory exists and can be read."""
    path = settings.workspace
    origin = "PILOTHOUSE_WORKSPACE" if settings.workspace_set else "the current directory"
    if not path.is_dir():
        return Check("workspace", False, f"{path} ({origin}) is not a directory.",
                     "Set PILOTHOUSE_WORKSPACE to the repository the DevOps agent works in.")
    if not os.access(path, os.R_OK | os.X_OK):
        return Check("workspace", False, f"{path} ({origin}) cannot be read.",
                     "Fix its permissions, or set PILOTHOUSE_WORKSPACE to another directory.")
    if settings.workspace_set:
        return Check("workspace", True, f"{path} (PILOTHOUSE_WORKSPACE)")
    return Check("workspace", True, f"{path} (the current directory: `ask`, `chat` and `tui` "
                                    "use it; `serve` starts the DevOps agent only with "
                                    "PILOTHOUSE_WORKSPACE)",
                 "Set PILOTHOUSE_WORKSPACE to serve the DevOps agent.")


async def database_check(settings: Settings) -> Check:
    """SQLite: the checkpoint file can be opened for writing. PostgreSQL: a short connect."""
    url = settings.database_url
    if is_postgres(url):
        assert url is not None
        return await _postgres_check(url)
    if url and not url.startswith("sqlite:///"):
        return Check("database", False,
                     f"PILOTHOUSE_DATABASE_URL has an unsupported scheme: "
                     f"{url.split(':', 1)[0]!r}.",
                     "Use sqlite:///path/to/file.sqlite or postgresql://user@host/db.")
    path = settings.checkpoint_path if not url else settings.home / url[len("sqlite:///"):]
    return _sqlite_check(path)


def _sqlite_check(path: Path) -> Check:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, timeout=PROBE_TIMEOUT_SECONDS)
        try:
            connection.execute("BEGIN IMMEDIATE")  # takes the write lock: proves writable
            connection.rollback()
        finally:
            connection.close()
    except (OSError, sqlite3.Error) as error:
        return Check("database", False, f"SQLite at {path} is not writable ({error}).",
                     "Set PILOTHOUSE_HOME (or PILOTHOUSE_DATABASE_URL=sqlite:///...) to a "
                     "writable place.")
    return Check("database", True, f"SQLite at {path} (writable)")


async def _postgres_check(url: str) -> Check:
    shown = describe_url(url)
    try:
        import psycopg
    except ImportError:
        return Check("database", False, f"PostgreSQL at {shown}: the driver is not installed.",
                     "pip install 'pilothouse[postgres]'")
    try:
        connection = await psycopg.AsyncConnection.connect(
            conninfo(url), connect_timeout=max(1, int(PROBE_TIMEOUT_SECONDS)), autocommit=True)
        async with connection:
            await connection.execute("SELECT 1")
    except psycopg.Error as error:
        # The driver's first line says why (refused, no such database, authentication
        # failed) without the password; the URL is shown without it too.
        text = Redactor([urlsplit(url).password])(str(error).strip())
        reason = " ".join(text.split("\n", 1)[0].split()) or type(error).__name__
        return Check("database", False, f"Cannot connect to PostgreSQL at {shown}: {reason}",
                     "Check that it runs and that PILOTHOUSE_DATABASE_URL (user, password, "
                     "database) is right.")
    return Check("database", True, f"PostgreSQL at {shown} (connected)")
