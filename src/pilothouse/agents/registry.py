"""Which agents exist and where each runs: in this process, or at an A2A URL.

`PILOTHOUSE_AGENTS_<NAME>_URL` (e.g. `PILOTHOUSE_AGENTS_ARGOCD_URL=http://argocd:8080/a2a/argocd`)
makes the supervisor call that agent over A2A (with `PILOTHOUSE_AGENTS_<NAME>_KEY`, the API
key the agent's server gave the supervisor, sent as a bearer token); without it the agent runs
in process when it is configured (Argo CD by ARGOCD_URL, GitHub by GITHUB_TOKEN or
GITHUB_API_URL, DevOps by PILOTHOUSE_WORKSPACE: a server should not open a shell on whatever
directory it started in).
Specialists start in the background while the supervisor is ready; one that fails to start
answers the supervisor's calls as unavailable, with the reason (also in the log).
`AgentFactory` (factory.py) builds them.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from pilothouse.agents.argocd import open_argocd_toolkit
from pilothouse.agents.devops import open_devops_toolkit
from pilothouse.agents.github import open_github_toolkit
from pilothouse.agents.supervisor import SUPERVISOR
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError, PilothouseError
from pilothouse.tools.github.client import DEFAULT_API_URL


@dataclass(frozen=True)
class AgentSpec:
    """A specialist: what it does (for cards and the supervisor's prompt) and its toolkit."""

    name: str
    description: str
    open_toolkit: Callable[[Settings], AbstractAsyncContextManager[Toolkit]]


#: Each description says where its agent's facts live (the clusters, GitHub, the local
#: checkout) as well as what it does: the supervisor's model picks an agent by it when the
#: question names none. Measured (a probe of the local supervisor's free choice over 133 dev
#: questions): with descriptions that said only what each agent does, a question about the
#: checkout's files or git history went to Argo CD or GitHub 28 times; saying where each
#: agent's facts live, 15.
SPECIALISTS: dict[str, AgentSpec] = {
    "argocd": AgentSpec(
        "argocd", "Argo CD: what runs on the clusters: the applications deployed there, their "
                  "sync and health status, resources, events, pod logs and deploy history; "
                  "projects, ApplicationSets and clusters. Syncs need approval.",
        open_argocd_toolkit),
    "github": AgentSpec(
        "github", "GitHub: repositories hosted on GitHub, named by owner/repo or repository "
                  "name: their pull requests (open, awaiting review, files changed), issues, "
                  "commits, GitHub Actions runs and their logs, search across repositories.",
        open_github_toolkit),
    "devops": AgentSpec(
        "devops", "DevOps: the local workspace, the git checkout the user works in: its code "
                  "(how it works, where something is defined or set), its files (read, list, "
                  "count, search), config and deployment manifests, its git history and "
                  "uncommitted changes; runs shell commands there (unsafe ones need approval) "
                  "and plans multi-step tasks.",
        open_devops_toolkit),
}
AGENT_NAMES: tuple[str, ...] = (*SPECIALISTS, SUPERVISOR)


@dataclass(frozen=True)
class Topology:
    """Where agents run: remote `urls` by name, and which specialists are configured here."""

    urls: dict[str, str] = field(default_factory=dict)
    configured: frozenset[str] = frozenset()
    keys: dict[str, str] = field(default_factory=dict, repr=False)
    timeout_seconds: float = 180.0
    answer_tokens: int | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Topology:
        """Remote agents from PILOTHOUSE_AGENTS_<NAME>_URL / _KEY, _TIMEOUT and _ANSWER_TOKENS;
        local ones by what is configured (ARGOCD_URL, GITHUB_TOKEN or GITHUB_API_URL,
        PILOTHOUSE_WORKSPACE)."""
        unknown = sorted(set(settings.agent_urls) - set(SPECIALISTS))
        if unknown:
            raise ConfigurationError(
                "PILOTHOUSE_AGENTS_" + unknown[0].upper() + "_URL names no agent.",
                hint="Agents that can run elsewhere: " + ", ".join(SPECIALISTS) + ".")
        configured = set()
        if settings.workspace_set:
            configured.add("devops")
        if settings.argocd_url:
            configured.add("argocd")
        if settings.github_token or settings.github_api_url != DEFAULT_API_URL:
            configured.add("github")
        return cls(urls=dict(settings.agent_urls), configured=frozenset(configured),
                   keys=dict(settings.agent_keys), timeout_seconds=settings.agent_timeout_seconds,
                   answer_tokens=settings.agent_answer_tokens)

    def local_specialists(self) -> list[str]:
        """Specialists to run in this process by default: configured and not remote."""
        return [n for n in SPECIALISTS if n in self.configured and n not in self.urls]

    def left_out(self) -> dict[str, str]:
        """Specialists that neither run here nor remotely, each with the setting that would
        start it (for the line `serve` prints, so none is missing silently)."""
        return {n: NOT_CONFIGURED[n] for n in SPECIALISTS
                if n not in self.configured and n not in self.urls}


#: Why a specialist is not started by default, and the setting that starts it.
NOT_CONFIGURED: dict[str, str] = {
    "argocd": "ARGOCD_URL is not set; set ARGOCD_URL and ARGOCD_TOKEN to add it.",
    "github": "GITHUB_TOKEN is not set; set it (and GITHUB_API_URL for GitHub Enterprise) to "
              "add it.",
    "devops": "PILOTHOUSE_WORKSPACE is not set, and a server does not open a shell on the "
              "directory it was started in; set PILOTHOUSE_WORKSPACE to the repository to add "
              "it.",
}


def startup_failure(error: BaseException) -> str:
    """The message of a start-up failure, from inside the exception groups task groups add."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, PilothouseError):
        return error.message
    return f"{type(error).__name__}: {error}"
