"""The names a question mentions, resolved against the live inventories of each agent's domain.

A person names what they ask about the way their fleet names it: "is shopfront healthy?",
"what changed in ledgerline?", "where is RETRY_LIMIT used?". No list of words can know those
names; the inventories do. Each word of the question that could be a name is looked up where
names live: Argo CD's applications and ApplicationSets, the GitHub repositories the token can
see, the workspace's files and identifiers. A word found there is a `Mention` of that agent's
resource, whatever the world calls its things, and routing asks that agent.

Exact and normalized matches only (case, and `_`/`.`/space against `-`): a close spelling is
not a mention, so nothing is routed on a guess; the agent's own tools answer an unknown name
with the closest ones ("did you mean"). Names every Argo CD install has (the `default`
project, the `in-cluster` cluster) are left out. Projects and clusters are group kinds: they
are often named beside the word for them ("the payments project"), which routing already
reads, and a bare team word ("payments") is too often also an ordinary word of the question,
so they decide the agent only where nothing else does; they still count as names a question
acts on (`agents.recall`: a cluster named early in a long conversation, and asked about as
"the cluster I named", is recalled by its name, whatever the world calls its clusters). Each
lookup is bounded (streamed names, a few pages of repositories, a bounded walk of the
workspace) and one that fails is skipped: resolving names improves routing, it never stops a
question.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError
from pilothouse.tools.closeness import normal
from pilothouse.tools.github.connection import GitHubConnection, github_connection

if TYPE_CHECKING:
    from pilothouse.tools.github.client import GitHubClient

log = logging.getLogger("pilothouse.agents.inventory")

#: A word that could be a name: letters, digits and the characters names join parts with.
_CANDIDATE = re.compile(r"(?<![\w./-])[A-Za-z0-9][\w./-]*[A-Za-z0-9_]|(?<![\w./-])[A-Za-z0-9]\b")
#: A web address's first two path segments: the `owner/name` of a repository's address
#: (`https://github.com/o/r.git`, as Argo CD shows an application's source), which no whole
#: word of the address is.
_ADDRESS_PATH = re.compile(r"\bhttps?://[^/\s]+/(?P<path>[\w.-]+/[\w.-]+)")
#: Shortest word looked up: two letters are an abbreviation more often than a name.
_MIN_LENGTH = 3
#: How long the lookups of one question may take, together, before routing goes on without.
LOOKUP_SECONDS = 5.0


@dataclass(frozen=True)
class Candidate:
    """A word of the question that could name something, and where it starts."""

    text: str
    start: int


@dataclass(frozen=True)
class Mention:
    """A word of the question that names a resource of `agent`'s domain."""

    text: str
    start: int
    agent: str
    kind: str
    #: The inventory's own name for it (`owner/name` for a repository named without owner).
    name: str

    def describe(self) -> str:
        """The resolution in words, for the agent asked: "'x' is a GitHub repository (o/x)"."""
        same = self.name == self.text
        return f"'{self.text}' is {self.kind}" + ("" if same else f" ({self.name})")


def name_words(text: str) -> list[str]:
    """Every word of `text` that could be part of a name, however short (`_CANDIDATE`)."""
    return _CANDIDATE.findall(text)


def candidates(question: str) -> list[Candidate]:
    """The words of `question` that could be names (of `_MIN_LENGTH` characters or more),
    and the `owner/name` of each web address in it."""
    words = [Candidate(m.group(0), m.start()) for m in _CANDIDATE.finditer(question)
             if len(m.group(0)) >= _MIN_LENGTH]
    addresses = [Candidate(path, m.start("path")) for m in _ADDRESS_PATH.finditer(question)
                 if (path := m.group("path").rstrip(".").removesuffix(".git"))]
    return sorted(words + addresses, key=lambda c: c.start)


class InventorySource(Protocol):
    """One domain's names: which of the candidates it holds."""

    agent: str

    async def resolve(self, words: Sequence[Candidate]) -> list[Mention]: ...


class Inventory:
    """Every configured domain's inventory, asked together, each within `LOOKUP_SECONDS`."""

    def __init__(self, sources: Iterable[InventorySource], *,
                 timeout_seconds: float = LOOKUP_SECONDS) -> None:
        self.sources = list(sources)
        self.timeout_seconds = timeout_seconds

    async def mentions(self, question: str) -> list[Mention]:
        """The resources `question` names, in the order it names them."""
        words = candidates(question)
        if not words or not self.sources:
            return []
        found = await asyncio.gather(*(self._resolve(s, words) for s in self.sources))
        return sorted((m for batch in found for m in batch), key=lambda m: m.start)

    async def _resolve(self, source: InventorySource, words: list[Candidate]) -> list[Mention]:
        try:
            return await asyncio.wait_for(source.resolve(words), self.timeout_seconds)
        except (PilothouseError, OSError, TimeoutError) as exc:
            # A dead server or a slow one: the question is routed by its words alone.
            log.debug("The %s inventory was not read (%s).", source.agent, exc)
            return []


def by_name(words: Sequence[Candidate]) -> dict[str, list[Candidate]]:
    """The candidates by normalized name (one name may be written twice)."""
    table: dict[str, list[Candidate]] = {}
    for word in words:
        table.setdefault(normal(word.text), []).append(word)
    return table


#: The kinds of resource an inventory names (the words an agent is told them in).
APPLICATION = "an Argo CD application"
APPLICATIONSET = "an Argo CD ApplicationSet"
PROJECT = "an Argo CD project"
CLUSTER = "an Argo CD cluster"
FOLDER = "a folder of the workspace"
#: Kinds that name a group of resources, often with an ordinary word ("search", "default",
#: "platform", a cluster called "edge", a folder called "helm"): such a name decides the agent
#: only for a question nothing else decides.
GROUP_KINDS = frozenset({PROJECT, CLUSTER, FOLDER})
#: Every Argo CD has the project "default" and the cluster "in-cluster": naming them says
#: nothing about the question ("the default timeout"), so they are never resolved.
BUILT_IN_NAMES = frozenset({(PROJECT, "default"), (CLUSTER, "in-cluster")})
REPOSITORY = "a GitHub repository"


class ArgoCDNames:
    """Argo CD's names of the `kinds` asked for (applications, ApplicationSets, projects),
    streamed by name (bounded memory)."""

    agent = "argocd"
    _PATHS: ClassVar[dict[str, str]] = {
        APPLICATION: "/api/v1/applications", APPLICATIONSET: "/api/v1/applicationsets",
        PROJECT: "/api/v1/projects", CLUSTER: "/api/v1/clusters"}
    #: How long a word's answer stands: one turn looks its words up for the next-page check,
    #: for each named-resource scope and for recall, and each look is a scan of every name
    #: (seconds at 100,000 applications). Only the words are kept, never the fleet's names.
    REUSE_SECONDS: ClassVar[float] = 30.0
    _KEPT_WORDS: ClassVar[int] = 1024

    def __init__(self, settings: Settings,
                 kinds: Sequence[str] = (APPLICATION, APPLICATIONSET)) -> None:
        self.settings = settings
        self.kinds = tuple(kinds)
        #: A word's normal form -> (when it was looked up, the (kind, name)s that match it).
        self._answers: OrderedDict[str, tuple[float, list[tuple[str, str]]]] = OrderedDict()

    async def resolve(self, words: Sequence[Candidate]) -> list[Mention]:
        table = by_name(words)
        now = time.monotonic()
        unknown = {key for key in table if (kept := self._answers.get(key)) is None
                   or now - kept[0] >= self.REUSE_SECONDS}
        if unknown:
            held = await self._scan(unknown)
            for key in unknown:
                self._answers[key] = (now, held.get(key, []))
                self._answers.move_to_end(key)
            while len(self._answers) > self._KEPT_WORDS:
                self._answers.popitem(last=False)
        return [Mention(word.text, word.start, self.agent, kind, name)
                for key, said in table.items() for kind, name in self._answers[key][1]
                for word in said]

    async def _scan(self, keys: Collection[str]) -> dict[str, list[tuple[str, str]]]:
        """The (kind, name)s of every name whose normal form is one of `keys`."""
        from pilothouse.tools.argocd.client import ArgoCDClient

        held: dict[str, list[tuple[str, str]]] = {}
        async with ArgoCDClient.from_settings(self.settings, retries=0) as client:
            for kind in self.kinds:
                def take(item: dict[str, Any], kind: str = kind) -> None:
                    name = (item.get("metadata") or {}).get("name") or item.get("name")
                    if isinstance(name, str) and (kind, name) not in BUILT_IN_NAMES \
                            and (key := normal(name)) in keys:
                        held.setdefault(key, []).append((kind, name))

                # Only the names are read; a cluster's is not under `metadata`, and the list
                # of clusters is short: it is read whole.
                await client.scan(self._PATHS[kind], take, params=None if kind == CLUSTER
                                  else {"fields": "items.metadata.name"})
        return held


class GitHubRepositories:
    """The GitHub repositories the token can see: `owner/name`, or a name one owner has."""

    agent = "github"
    #: How long one listing answers later lookups: a GitHub turn looks repositories up for its
    #: question and again for each call's owner (`agents.repository_owner`), and each listing
    #: is up to `MAX_REPO_PAGES` requests against the token's rate limit.
    REUSE_SECONDS: ClassVar[float] = 30.0

    def __init__(self, connection: GitHubConnection) -> None:
        self.connection = connection
        self._listed: tuple[float, list[str]] | None = None
        self._labels: dict[str, tuple[float, list[str]]] = {}

    def _client(self) -> GitHubClient:
        from pilothouse.tools.github.client import GitHubClient

        connection = self.connection
        return GitHubClient(connection.api_url, connection.token,
                            timeout=connection.timeout_seconds, retries=0,
                            max_rate_limit_wait=0)

    async def _visible(self) -> list[str]:
        """The repositories the token can see, listed at most once per `REUSE_SECONDS`."""
        if self._listed is not None and time.monotonic() - self._listed[0] < self.REUSE_SECONDS:
            return self._listed[1]
        async with self._client() as client:
            visible = await client.visible_repositories()
        self._listed = (time.monotonic(), visible)
        return visible

    async def labels(self, full_name: str) -> list[str]:
        """The label names of repository `full_name`, read at most once per `REUSE_SECONDS`."""
        kept = self._labels.get(full_name.lower())
        if kept is not None and time.monotonic() - kept[0] < self.REUSE_SECONDS:
            return kept[1]
        async with self._client() as client:
            names = await client.repository_labels(full_name)
        self._labels[full_name.lower()] = (time.monotonic(), names)
        return names

    async def resolve(self, words: Sequence[Candidate]) -> list[Mention]:
        visible = await self._visible()
        full = {name.lower(): name for name in visible}
        owners: dict[str, list[str]] = {}
        for name in visible:
            owners.setdefault(name.partition("/")[2].lower(), []).append(name)
        found = []
        for word in words:
            key = word.text.lower()
            if key in full:
                found.append(Mention(word.text, word.start, self.agent, REPOSITORY,
                                     full[key]))
            elif len(owners.get(key, ())) == 1:  # the one obvious owner
                found.append(Mention(word.text, word.start, self.agent, REPOSITORY,
                                     owners[key][0]))
        return found


def inventory_of(settings: Settings, agents: Collection[str]) -> Inventory:
    """The inventories of the `agents` configured in this process: Argo CD's when ARGOCD_URL
    is set, GitHub's when a token is, the workspace's for the DevOps agent. An agent served
    remotely (A2A) with credentials this process does not hold has none here."""
    from pilothouse.agents.code_words import CodeWords
    from pilothouse.agents.workspace_names import WorkspaceNames

    sources: list[InventorySource] = []
    if "argocd" in agents and settings.argocd_url:
        sources.append(ArgoCDNames(settings, (APPLICATION, APPLICATIONSET, PROJECT, CLUSTER)))
    if "github" in agents and settings.github_token:
        sources.append(GitHubRepositories(github_connection(settings)))
    if "devops" in agents:
        sources.append(WorkspaceNames(settings.workspace, max_files=settings.index_max_files))
        sources.append(CodeWords(settings.workspace, max_files=settings.index_max_files))
    return Inventory(sources)
