"""One Settings object: the only place in Pilothouse that reads the environment.

We read variables by hand rather than with pydantic-settings because the names we must honour
come from several conventions at once (the seed's bare `MAX_CONTEXT_TOKENS`, `LLM_PROVIDER`,
per-provider `OPENAI_MAX_CONTEXT_TOKENS`, Argo CD's `ARGOCD_*`, our `PILOTHOUSE_*`), and an
invalid value must produce one error that names the exact variable the operator typed.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from pilothouse.errors import ConfigurationError
from pilothouse.keys import check_key
from pilothouse.redaction import Redactor, is_secret_name
from pilothouse.sizes import parse_memory_size

#: Providers Pilothouse can build a chat model for (see `pilothouse.models.registry`).
PROVIDERS: tuple[str, ...] = (
    "local",
    "openai",
    "azure-openai",
    "anthropic",
    "aws-bedrock",
    "google-gemini",
    "ollama",
    "openai-compatible",
)
DEFAULT_MODEL = "local:qwen2.5-coder-1.5b-instruct"
CONTEXT_LAYERS: tuple[str, ...] = (
    "preflight",
    "tool_output_guard",
    "orphan_repair",
    "overflow_recovery",
    "tool_resilience",
    "prioritization",
    "correlation",
    # Issue 15's answer layers: tool views quoted in answers, the grounding check, and the
    # request -> tool-call examples chosen per question, the first call's tool read from the
    # request's words (off for the ablation runs).
    "views",
    "grounding",
    "few_shot",
    "tool_hints",
)


def _database_url(url: str | None, file: str | None) -> str | None:
    """PILOTHOUSE_DATABASE_URL, or the contents of PILOTHOUSE_DATABASE_URL_FILE (a mounted
    Secret: Docker/Compose secrets, Kubernetes volumes), so the password stays out of the
    environment listing."""
    if url or not file:
        return url
    try:
        return Path(file).read_text().strip() or None
    except OSError as exc:
        raise ConfigurationError(
            f"PILOTHOUSE_DATABASE_URL_FILE={file} cannot be read: {exc.strerror}.",
            hint="Mount the secret holding the database URL there, or unset the variable.",
        ) from None


def _split(value: str | None) -> tuple[str, ...]:
    """A comma-separated variable as a tuple of its non-empty parts."""
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


#: The prefix of the agent topology's variables (PILOTHOUSE_AGENTS_ARGOCD_URL, ..._TIMEOUT).
_AGENTS = "PILOTHOUSE_AGENTS_"
#: Seconds the local model gets to summarize: reading a 3,300-token transcript and writing
#: 250 words takes ~50 s on 2 cores when nothing else runs, so 60 s fell back to deletion.
LOCAL_SUMMARY_TIMEOUT = 180.0


#: The providers' own credential variables (their SDKs read them): `doctor` checks which are
#: set. Settings keeps only their names, never their values.
PROVIDER_VARIABLES: tuple[str, ...] = (
    "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION",
    "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "AWS_REGION", "AWS_DEFAULT_REGION",
    "AWS_ACCESS_KEY_ID", "AWS_PROFILE",
)

#: The MCP tool servers, for PILOTHOUSE_MCP_<SERVER>_TOOLS and _EXCLUDE_TOOLS.
MCP_SERVERS = ("argocd", "github", "shell", "rag")
_MCP = "PILOTHOUSE_MCP_"


def _agent_keys(env: Mapping[str, str], agent_urls: Mapping[str, str]) -> dict[str, str]:
    """PILOTHOUSE_AGENTS_<NAME>_KEY per remote agent, checked as the agent checks its own keys
    (so a key it would refuse stops this process at start, not each call with a 401)."""
    keys: dict[str, str] = {}
    for name in agent_urls:
        setting = f"{_AGENTS}{name.upper()}_KEY"
        key = (env.get(setting) or "").strip()
        if key:
            check_key(key, setting=setting, position=1)
            keys[name] = key
    return keys


def _mcp_tool_lists(env: Mapping[str, str], suffix: str) -> dict[str, tuple[str, ...]]:
    """Per server, the tool names of PILOTHOUSE_MCP_<SERVER><suffix> (set, even if empty)."""
    lists: dict[str, tuple[str, ...]] = {}
    for key, value in env.items():
        if not (key.startswith(_MCP) and key.endswith(suffix)):
            continue
        server = key[len(_MCP):-len(suffix)].lower()
        if suffix == "_TOOLS" and server.endswith("_exclude"):
            continue  # PILOTHOUSE_MCP_<SERVER>_EXCLUDE_TOOLS, read with its own suffix
        if server not in MCP_SERVERS:
            raise ConfigurationError(
                f"{key} names no MCP server.",
                hint=f"Use PILOTHOUSE_MCP_<SERVER>{suffix} with SERVER one of "
                     f"{', '.join(s.upper() for s in MCP_SERVERS)}, e.g. "
                     f"{example(f'{_MCP}ARGOCD{suffix}', 'list_applications')}.")
        lists[server] = _split(value)
    return lists


#: A model name per provider, for hints (the models registry has the full table).
MODEL_EXAMPLES: dict[str, str] = {
    "local": DEFAULT_MODEL.split(":", 1)[1],
    "openai": "gpt-4o-mini",
    "azure-openai": "my-gpt4o-deployment",
    "anthropic": "claude-sonnet-4-5",
    "aws-bedrock": "anthropic.claude-3-5-sonnet-20240620-v1:0",
    "google-gemini": "gemini-2.0-flash",
    "ollama": "llama3.1",
    "openai-compatible": "qwen2.5-coder",
}


def _model_example(source: str, model: str) -> str:
    """A valid value for `source` (a variable, or an option such as --model)."""
    if source.startswith("--"):
        return f"`{source} {model}`"
    return example(source, model)


def check_model(model: str, source: str) -> str:
    """`model` when it looks like `provider:model` with a known provider; `source` names it."""
    if ":" not in model:
        raise ConfigurationError(
            f"{source}={model!r} must look like provider:model.",
            hint=f"e.g. {_model_example(source, DEFAULT_MODEL)} or "
                 f"{_model_example(source, 'anthropic:claude-sonnet-4-5')}.",
        )
    if model.split(":", 1)[0] not in PROVIDERS:
        raise ConfigurationError(
            f"{source} names an unknown provider {model.split(':', 1)[0]!r}.",
            hint="Known providers: " + ", ".join(PROVIDERS) + "; e.g. "
                 + _model_example(source, "openai:gpt-4o-mini") + ".",
        )
    return model


# Model-call timeout (PILOTHOUSE_MODEL_TIMEOUT), per call. A hosted provider answers a turn in
# seconds and streams its first token in well under a minute, so 120 s means it has stalled
# (the SDKs' own default, 600 s x 2 retries, held a turn for 20 minutes). The local model runs
# on the CPU at ~10-90 tokens/s and reads a whole prompt before its first token: a long
# conversation on a slow machine legitimately takes minutes, so it gets 600 s.
HOSTED_MODEL_TIMEOUT = 120.0
LOCAL_MODEL_TIMEOUT = 600.0


def default_model_timeout(model: str) -> float:
    """The default seconds one model call may take, by provider."""
    return LOCAL_MODEL_TIMEOUT if model.startswith("local:") else HOSTED_MODEL_TIMEOUT


def provider_env_prefix(provider: str) -> str:
    """`azure-openai` -> `AZURE_OPENAI`: the prefix of a provider's own variables."""
    return provider.upper().replace("-", "_")


def example(name: str, value: object) -> str:
    """`NAME=value` as every setting's hint shows it: in backticks, ready to copy."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, float):
        value = f"{value:g}"
    return f"`{name}={value}`"


class _Reader:
    """Typed access to an environment mapping; errors name the variable and show a valid value.

    Each hint's example is derived from the setting's default (or `example` where the default
    is "unset"), so it is always a value `Settings.from_env` accepts.
    """

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.env.get(name)
        return value.strip() if value is not None and value.strip() else default

    def integer(self, name: str, default: int | None, *, minimum: int = 0,
                maximum: int | None = None, sample: int | None = None) -> int | None:
        raw = self.text(name)
        if raw is None:
            return default
        valid = sample if sample is not None else default if default is not None else minimum
        bounds = (f"from {minimum} to {maximum}" if maximum is not None
                  else f"of {minimum} or more")
        hint = f"Set {name} to a whole number {bounds}, e.g. {example(name, valid)}."
        try:
            value = int(raw.replace("_", ""))
        except ValueError:
            raise ConfigurationError(f"{name}={raw!r} is not a whole number.",
                                     hint=hint) from None
        if value < minimum:
            raise ConfigurationError(f"{name}={value} is below the minimum of {minimum}.",
                                     hint=hint)
        if maximum is not None and value > maximum:
            raise ConfigurationError(f"{name}={value} is above the maximum of {maximum}.",
                                     hint=hint)
        return value

    def number(self, name: str, default: float, *, low: float, high: float) -> float:
        raw = self.text(name)
        if raw is None:
            return default
        hint = f"Set {name} to a number from {low:g} to {high:g}, e.g. {example(name, default)}."
        try:
            value = float(raw)
        except ValueError:
            raise ConfigurationError(f"{name}={raw!r} is not a number.", hint=hint) from None
        if not low <= value <= high:  # also refuses nan
            raise ConfigurationError(f"{name}={value} must be between {low} and {high}.",
                                     hint=hint)
        return value

    def flag(self, name: str, default: bool) -> bool:
        raw = self.text(name)
        if raw is None:
            return default
        lowered = raw.lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
        raise ConfigurationError(
            f"{name}={raw!r} is not a boolean.",
            hint=f"Set {name} to true or false (or 1/0, yes/no, on/off), e.g. "
                 f"{example(name, default)}.")

    def url(self, name: str, sample: str, default: str | None = None) -> str | None:
        """An http(s) URL without its trailing slash, or `default` when unset."""
        raw = self.text(name)
        if raw is None:
            return default
        if not raw.startswith(("https://", "http://")) or not raw.split("://", 1)[1].strip("/"):
            raise ConfigurationError(f"{name}={raw!r} is not an http(s) URL.",
                                     hint=f"Set {name} to the server's URL, e.g. "
                                          f"{example(name, sample)}.")
        return raw.rstrip("/")


# -- Issue 18: several Argo CD instances ---------------------------------------------------
#: ARGOCD_INSTANCES=staging,eu names instances beside the default one (ARGOCD_URL, named
#: "default"); each reads ARGOCD_<NAME>_URL, _TOKEN, _USERNAME, _PASSWORD, _VERIFY_SSL and
#: _CA_BUNDLE (NAME upper-cased, "-" as "_").
DEFAULT_ARGOCD_INSTANCE = "default"
_INSTANCE_NAME = re.compile(r"^[a-z][a-z0-9-]{0,30}$")


@dataclass(frozen=True)
class ArgoCDInstance:
    """One named Argo CD server beside the default one."""

    name: str
    url: str
    token: str | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    verify_ssl: bool = True
    ca_bundle: Path | None = None

    @property
    def prefix(self) -> str:
        return f"ARGOCD_{self.name.upper().replace('-', '_')}_"


def _argocd_instances(r: _Reader) -> tuple[ArgoCDInstance, ...]:
    found = []
    for name in _split(r.text("ARGOCD_INSTANCES")):
        if not _INSTANCE_NAME.match(name) or name == DEFAULT_ARGOCD_INSTANCE:
            raise ConfigurationError(
                f"ARGOCD_INSTANCES names {name!r}, which is not a usable instance name.",
                hint="Use lower-case names like 'staging' or 'eu-prod' ('default' is "
                     "ARGOCD_URL's), each with its URL, e.g. "
                     + example("ARGOCD_INSTANCES", "staging") + " and "
                     + example("ARGOCD_STAGING_URL", "https://argocd-staging.example.com")
                     + ".")
        prefix = ArgoCDInstance(name, "").prefix
        url = r.url(prefix + "URL", "https://argocd-staging.example.com")
        if not url:
            raise ConfigurationError(
                f"ARGOCD_INSTANCES names {name!r}, but {prefix}URL is not set.",
                hint=f"Set {prefix}URL (and {prefix}TOKEN), e.g. "
                     + example(prefix + "URL", f"https://argocd-{name}.example.com") + ".")
        ca = r.text(prefix + "CA_BUNDLE")
        found.append(ArgoCDInstance(
            name, url, token=r.text(prefix + "TOKEN"), username=r.text(prefix + "USERNAME"),
            password=r.text(prefix + "PASSWORD"), verify_ssl=r.flag(prefix + "VERIFY_SSL", True),
            ca_bundle=Path(ca).expanduser() if ca else None))
    return tuple(found)


@dataclass(frozen=True)
class Settings:
    """Every tunable of Pilothouse, with embedded defaults that work offline."""

    # Model choice and context window.
    model: str = DEFAULT_MODEL
    max_context_tokens: int | None = None
    provider_context_overrides: dict[str, int] = field(default_factory=dict)
    max_output_tokens: int = 1024
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    ollama_base_url: str | None = None
    local_model_path: Path | None = None
    local_context_tokens: int = 8192
    local_threads: int | None = None
    #: Keep the local model's KV prefixes on disk, so a new process skips re-reading prompts.
    local_prefix_cache: bool = True
    #: Have the local model write a lead above views that answer the question (`models.lead`).
    local_leads: bool = False
    #: Seconds the shared local model service stays loaded after its last turn; 0: no
    #: service, each process runs a model worker of its own (`models.local_service`).
    local_idle_seconds: int = 600

    # Context safety.
    max_tool_output_size: int = 10_000
    tool_output_window_share: float = 0.25
    context_trigger_ratio: float = 0.8
    context_target_ratio: float = 0.5
    summary_timeout_seconds: float = 60.0
    model_timeout_seconds: float = 120.0
    disabled_layers: frozenset[str] = frozenset()
    tool_timeout_seconds: float = 60.0
    model_call_limit: int = 25
    tool_call_limit: int = 50
    repeated_call_limit: int = 3

    # Storage.
    home: Path = field(default_factory=lambda: Path.home() / ".pilothouse")
    database_url: str | None = None

    # Argo CD.
    argocd_url: str | None = None
    argocd_token: str | None = None
    argocd_username: str | None = None
    argocd_password: str | None = None
    argocd_verify_ssl: bool = True
    argocd_ca_bundle: Path | None = None
    argocd_timeout_seconds: float = 30.0
    argocd_read_only: bool = True
    argocd_instances: tuple[ArgoCDInstance, ...] = ()  # issue 18: named instances
    max_search_results: int = 1000
    warn_search_results: int = 500

    # DevOps agent: the shell tool's jail and policy, and the codebase index.
    workspace: Path = field(default_factory=Path.cwd)
    shell_policy_file: Path | None = None
    shell_timeout_seconds: float = 30.0
    approval_secret: str | None = None
    #: Indexing started by a question that needs the code covers a code repository of at
    #: most this many files; a larger folder is searched by a bounded keyword scan instead.
    index_max_files: int = 5000

    # GitHub.
    github_token: str | None = None
    github_api_url: str = "https://api.github.com"
    github_timeout_seconds: float = 30.0
    github_rate_limit_max_wait: float = 10.0

    # REST API, web UI and A2A: who may call (entries `name=key` or a bare `key`).
    api_keys: tuple[str, ...] = ()
    admin_keys: tuple[str, ...] = ()
    api_host: str = "127.0.0.1"
    api_port: int = 8080
    cors_origins: tuple[str, ...] = ()
    api_max_body_bytes: int = 64_000
    # Every HTTP server (API, A2A, MCP): Host names answered besides loopback and the bound
    # address (`http_guard`).
    allowed_hosts: tuple[str, ...] = ()
    # Per minute: wrong keys per client address, new conversations per identity (then 429).
    auth_failures_per_minute: int = 20
    new_conversations_per_minute: int = 30
    # Slow clients (`pilothouse serve`): seconds for a request head, then for its body.
    api_header_timeout_seconds: float = 10.0
    api_body_timeout_seconds: float = 30.0

    # Agents: a specialist served elsewhere (PILOTHOUSE_AGENTS_<NAME>_URL, by agent name) and the
    # key the supervisor sends it (_KEY); how long one sub-agent answer may take and how many
    # tokens it may have; whether PILOTHOUSE_WORKSPACE was set (the DevOps agent needs it).
    agent_urls: dict[str, str] = field(default_factory=dict)
    agent_keys: dict[str, str] = field(default_factory=dict, repr=False)
    agent_timeout_seconds: float = 180.0
    agent_answer_tokens: int | None = None
    workspace_set: bool = False

    # MCP tool servers: read-only hides every writing tool of every server; per server
    # (PILOTHOUSE_MCP_<SERVER>_TOOLS / _EXCLUDE_TOOLS) only or all but the tools named.
    mcp_read_only: bool = False
    mcp_tools: dict[str, tuple[str, ...]] = field(default_factory=dict)
    mcp_exclude_tools: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # MCP over HTTP: bearer keys (bare); without any, only a loopback address may be bound.
    mcp_keys: tuple[str, ...] = field(default=(), repr=False)

    # Doctor: which of PROVIDER_VARIABLES are set (names only).
    provider_variables: frozenset[str] = frozenset()

    # Operations: logs, traces, the memory guard.
    log_level: str = "WARNING"
    log_json: bool = False
    otel_endpoint: str | None = None
    otel_protocol: str = "http/protobuf"
    otel_service_name: str = "pilothouse"
    trace_console: bool = False
    memory_limit_bytes: int | None = None
    memory_high_water: float = 0.85
    memory_sample_seconds: float = 5.0

    @property
    def provider(self) -> str:
        return self.model.split(":", 1)[0]

    @property
    def model_name(self) -> str:
        return self.model.split(":", 1)[1]

    @property
    def checkpoint_path(self) -> Path:
        return self.home / "state" / "checkpoints.sqlite"

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    @property
    def prefix_cache_dir(self) -> Path | None:
        """Where the local model keeps its KV prefixes (None: PILOTHOUSE_LOCAL_PREFIX_CACHE=0)."""
        return self.home / "cache" / "kv-prefixes" if self.local_prefix_cache else None

    def with_model(self, model: str, source: str = "--model") -> Settings:
        """These settings with another `provider:model` (a command's --model option)."""
        model = check_model(model, source)
        timeout = self.model_timeout_seconds
        if timeout == default_model_timeout(self.model):  # a default follows the provider
            timeout = default_model_timeout(model)
        return dataclasses.replace(self, model=model, model_timeout_seconds=timeout)

    def layer_enabled(self, layer: str) -> bool:
        return layer not in self.disabled_layers

    def redacted(self) -> dict[str, object]:
        """Every setting for display, with secrets replaced (pilothouse.redaction's rules)."""
        redactor = Redactor(self.secret_values())
        return {f.name: redactor.field(f.name, getattr(self, f.name)) for f in fields(self)}

    def secret_values(self) -> list[str]:
        """The configured credentials, for a `Redactor` to mask wherever they appear."""
        values: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if not is_secret_name(f.name):
                continue
            items = value.values() if isinstance(value, dict) else value
            for item in items if isinstance(value, tuple | dict) else (value,):
                if isinstance(item, str):
                    # An API key entry is `name=key` or a bare key: the key alone is secret.
                    values += [item, item.partition("=")[2]] if "=" in item else [item]
        return [v for v in values if v]

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read settings from `env` (default: the process environment)."""
        # Here, not at the top: its module loads Starlette, which `pilothouse --help` need not.
        from pilothouse.http_guard import parse_allowed_hosts

        r = _Reader(os.environ if env is None else env)
        model = r.text("PILOTHOUSE_MODEL")
        provider = r.text("LLM_PROVIDER")
        if model is None:
            if provider is None:
                model = DEFAULT_MODEL
            else:
                name = r.text("LLM_MODEL") or r.text(f"{provider_env_prefix(provider)}_MODEL")
                if provider not in PROVIDERS:
                    raise ConfigurationError(
                        f"LLM_PROVIDER names an unknown provider {provider!r}.",
                        hint="Known providers: " + ", ".join(PROVIDERS) + "; e.g. "
                             + example("LLM_PROVIDER", "local") + ".")
                if name is None and provider != "local":
                    raise ConfigurationError(
                        f"LLM_PROVIDER={provider!r} needs a model name.",
                        hint=f"Set LLM_MODEL too, e.g. "
                             f"{example('LLM_MODEL', MODEL_EXAMPLES[provider])}, or set "
                             "PILOTHOUSE_MODEL=provider:model instead.",
                    )
                model = f"{provider}:{name or DEFAULT_MODEL.split(':', 1)[1]}"
        check_model(model, "PILOTHOUSE_MODEL")
        overrides: dict[str, int] = {}
        for p in PROVIDERS:
            value = r.integer(f"{provider_env_prefix(p)}_MAX_CONTEXT_TOKENS", None, minimum=512,
                              sample=32_768)
            if value is not None:
                overrides[p] = value
        disabled = frozenset(
            x.strip() for x in (r.text("PILOTHOUSE_DISABLE_LAYERS") or "").split(",") if x.strip()
        )
        unknown = disabled - set(CONTEXT_LAYERS)
        if unknown:
            raise ConfigurationError(
                f"PILOTHOUSE_DISABLE_LAYERS names unknown layers: {', '.join(sorted(unknown))}.",
                hint="Known layers: " + ", ".join(CONTEXT_LAYERS) + "; e.g. "
                     + example("PILOTHOUSE_DISABLE_LAYERS", "correlation,prioritization") + ".",
            )
        trigger = r.number("PILOTHOUSE_CONTEXT_TRIGGER", 0.8, low=0.1, high=0.95)
        target = r.number("PILOTHOUSE_CONTEXT_TARGET", 0.5, low=0.05, high=0.9)
        if target >= trigger:
            raise ConfigurationError(
                f"PILOTHOUSE_CONTEXT_TARGET={target} must be below "
                f"PILOTHOUSE_CONTEXT_TRIGGER={trigger}.",
                hint="Compression must leave room below its trigger: e.g. "
                     + example("PILOTHOUSE_CONTEXT_TARGET", max(0.05, round(trigger * 0.6, 2)))
                     + ".")
        max_search = r.integer("MAX_SEARCH_RESULTS", 1000, minimum=1) or 1000
        warn_search = r.integer("WARN_SEARCH_RESULTS", 500, minimum=1) or 500
        if warn_search > max_search:
            raise ConfigurationError(
                f"WARN_SEARCH_RESULTS={warn_search} exceeds MAX_SEARCH_RESULTS={max_search}.",
                hint="Warn before the cap: e.g. "
                     + example("WARN_SEARCH_RESULTS", max(1, max_search // 2)) + ".")
        home = r.text("PILOTHOUSE_HOME")
        local_path = r.text("PILOTHOUSE_LOCAL_MODEL_PATH")
        ca_bundle = r.text("ARGOCD_CA_BUNDLE")
        workspace = r.text("PILOTHOUSE_WORKSPACE")
        github_url = r.url("GITHUB_API_URL", "https://api.github.com",
                           "https://api.github.com")  # Enterprise: https://HOST/api/v3
        otel_protocol = r.text("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
        if otel_protocol not in {"http/protobuf", "grpc"}:
            raise ConfigurationError(
                f"OTEL_EXPORTER_OTLP_PROTOCOL={otel_protocol!r} is not supported.",
                hint="Use http/protobuf or grpc, e.g. "
                     + example("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf") + ".",
            )
        raw_limit = r.text("PILOTHOUSE_MEMORY_LIMIT")
        memory_limit = None
        if raw_limit is not None:
            memory_limit = parse_memory_size(raw_limit)
        agent_urls = {key[len(_AGENTS):-len("_URL")].lower(): url for key in r.env
                      if key.startswith(_AGENTS) and key.endswith("_URL")
                      and (url := r.text(key))}
        for name, url in agent_urls.items():
            if not url.startswith(("http://", "https://")):
                raise ConfigurationError(
                    f"{_AGENTS}{name.upper()}_URL={url!r} is not an http(s) URL.",
                    hint="Set it to the agent's A2A URL, e.g. "
                         + example(f"{_AGENTS}{name.upper()}_URL",
                                   f"http://{name}:8080/a2a/{name}") + ".")
        policy = r.text("PILOTHOUSE_SHELL_POLICY")
        log_level = (r.text("PILOTHOUSE_LOG_LEVEL") or "WARNING").upper()
        if log_level not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ConfigurationError(
                f"PILOTHOUSE_LOG_LEVEL={log_level!r} is not a log level.",
                hint="Use DEBUG, INFO, WARNING or ERROR, e.g. "
                     + example("PILOTHOUSE_LOG_LEVEL", "INFO") + ".")
        return cls(
            model=model,
            max_context_tokens=r.integer("MAX_CONTEXT_TOKENS", None, minimum=512, sample=32_768),
            provider_context_overrides=overrides,
            max_output_tokens=r.integer("PILOTHOUSE_MAX_OUTPUT_TOKENS", 1024, minimum=16) or 1024,
            openai_base_url=r.url("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"),
            openai_api_key=r.text("OPENAI_API_KEY"),
            ollama_base_url=r.url("OLLAMA_BASE_URL", "http://127.0.0.1:11434"),
            local_model_path=Path(local_path).expanduser() if local_path else None,
            local_context_tokens=r.integer("PILOTHOUSE_LOCAL_CONTEXT_TOKENS", 8192, minimum=1024)
            or 8192,
            local_threads=r.integer("PILOTHOUSE_LOCAL_THREADS", None, minimum=1, sample=2),
            local_prefix_cache=r.flag("PILOTHOUSE_LOCAL_PREFIX_CACHE", True),
            local_leads=r.flag("PILOTHOUSE_LOCAL_LEADS", False),
            local_idle_seconds=r.integer("PILOTHOUSE_LOCAL_IDLE_SECONDS", 600, minimum=0) or 0,
            max_tool_output_size=r.integer("MAX_TOOL_OUTPUT_SIZE", 10_000, minimum=200) or 10_000,
            tool_output_window_share=r.number(
                "PILOTHOUSE_TOOL_OUTPUT_WINDOW_SHARE", 0.25, low=0.01, high=0.9
            ),
            context_trigger_ratio=trigger,
            context_target_ratio=target,
            summary_timeout_seconds=r.number(
                "PILOTHOUSE_SUMMARY_TIMEOUT",
                LOCAL_SUMMARY_TIMEOUT if model.startswith("local:") else 60.0, low=0.1, high=3600
            ),
            model_timeout_seconds=r.number(
                "PILOTHOUSE_MODEL_TIMEOUT", default_model_timeout(model), low=0.1, high=7200),
            disabled_layers=disabled,
            tool_timeout_seconds=r.number("PILOTHOUSE_TOOL_TIMEOUT", 60.0, low=0.05, high=3600),
            model_call_limit=r.integer("PILOTHOUSE_MODEL_CALL_LIMIT", 25, minimum=1) or 25,
            tool_call_limit=r.integer("PILOTHOUSE_TOOL_CALL_LIMIT", 50, minimum=1) or 50,
            repeated_call_limit=r.integer("PILOTHOUSE_REPEATED_CALL_LIMIT", 3, minimum=1) or 3,
            home=Path(home).expanduser() if home else Path.home() / ".pilothouse",
            database_url=_database_url(r.text("PILOTHOUSE_DATABASE_URL"),
                                       r.text("PILOTHOUSE_DATABASE_URL_FILE")),
            argocd_url=r.url("ARGOCD_URL", "https://argocd.example.com"),
            argocd_token=r.text("ARGOCD_TOKEN"),
            argocd_username=r.text("ARGOCD_USERNAME"),
            argocd_password=r.text("ARGOCD_PASSWORD"),
            argocd_verify_ssl=r.flag("ARGOCD_VERIFY_SSL", True),
            argocd_ca_bundle=Path(ca_bundle).expanduser() if ca_bundle else None,
            argocd_timeout_seconds=r.number("ARGOCD_TIMEOUT", 30.0, low=0.1, high=600),
            argocd_read_only=r.flag("ARGOCD_READ_ONLY", True),
            argocd_instances=_argocd_instances(r),
            max_search_results=max_search,
            warn_search_results=warn_search,
            workspace=Path(workspace).expanduser().resolve() if workspace else Path.cwd(),
            shell_policy_file=Path(policy).expanduser() if policy else None,
            shell_timeout_seconds=r.number("PILOTHOUSE_SHELL_TIMEOUT", 30.0, low=0.1, high=3600),
            index_max_files=r.integer("PILOTHOUSE_INDEX_MAX_FILES", 5000, minimum=1,
                                      sample=5000) or 5000,
            approval_secret=r.text("PILOTHOUSE_APPROVAL_SECRET"),
            github_token=r.text("GITHUB_TOKEN") or r.text("GH_TOKEN"),
            github_api_url=github_url or "https://api.github.com",
            github_timeout_seconds=r.number("GITHUB_TIMEOUT", 30.0, low=0.1, high=600),
            github_rate_limit_max_wait=r.number("GITHUB_RATE_LIMIT_MAX_WAIT", 10.0, low=0,
                                                high=3600),
            api_keys=_split(r.text("PILOTHOUSE_API_KEYS")),
            admin_keys=_split(r.text("PILOTHOUSE_ADMIN_KEYS")),
            api_host=r.text("PILOTHOUSE_API_HOST") or "127.0.0.1",
            api_port=r.integer("PILOTHOUSE_API_PORT", 8080, minimum=1, maximum=65535) or 8080,
            cors_origins=_split(r.text("PILOTHOUSE_CORS_ORIGINS")),
            allowed_hosts=parse_allowed_hosts(_split(r.text("PILOTHOUSE_ALLOWED_HOSTS"))),
            api_max_body_bytes=r.integer("PILOTHOUSE_API_MAX_BODY_BYTES", 64_000, minimum=1024)
            or 64_000,
            auth_failures_per_minute=r.integer("PILOTHOUSE_AUTH_FAILURES_PER_MINUTE", 20,
                                               minimum=1, maximum=100_000) or 20,
            new_conversations_per_minute=r.integer("PILOTHOUSE_NEW_CONVERSATIONS_PER_MINUTE",
                                                   30, minimum=1, maximum=100_000) or 30,
            api_header_timeout_seconds=r.number("PILOTHOUSE_API_HEADER_TIMEOUT", 10.0,
                                                low=0.1, high=3600),
            api_body_timeout_seconds=r.number("PILOTHOUSE_API_BODY_TIMEOUT", 30.0, low=0.1,
                                              high=3600),
            log_level=log_level,
            log_json=r.flag("PILOTHOUSE_LOG_JSON", False),
            otel_endpoint=r.text("OTEL_EXPORTER_OTLP_ENDPOINT"),
            otel_protocol=otel_protocol,
            otel_service_name=r.text("OTEL_SERVICE_NAME") or "pilothouse",
            trace_console=r.flag("PILOTHOUSE_TRACE_CONSOLE", False),
            memory_limit_bytes=memory_limit,
            memory_high_water=r.number("PILOTHOUSE_MEMORY_HIGH_WATER", 0.85, low=0.1, high=0.99),
            memory_sample_seconds=r.number("PILOTHOUSE_MEMORY_SAMPLE_SECONDS", 5.0, low=0.1,
                                           high=3600),
            agent_urls=agent_urls,
            agent_keys=_agent_keys(r.env, agent_urls),
            agent_timeout_seconds=r.number(f"{_AGENTS}TIMEOUT", 180.0, low=0.1, high=86_400),
            agent_answer_tokens=r.integer(f"{_AGENTS}ANSWER_TOKENS", None, minimum=0,
                                          sample=1500) or None,
            workspace_set=workspace is not None,
            mcp_read_only=r.flag("PILOTHOUSE_MCP_READ_ONLY", False),
            mcp_tools=_mcp_tool_lists(r.env, "_TOOLS"),
            mcp_exclude_tools=_mcp_tool_lists(r.env, "_EXCLUDE_TOOLS"),
            mcp_keys=_split(r.text("PILOTHOUSE_MCP_KEYS")),
            provider_variables=frozenset(n for n in PROVIDER_VARIABLES if r.text(n)),
        )
