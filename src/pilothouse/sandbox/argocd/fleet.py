"""A deterministic, lazily generated Argo CD fleet: every application is a function of its index.

Nothing per application is stored. `Fleet.app(i)` derives an `AppRecord` from `(seed, i)` with
a hash, so a fleet of 100,000 applications costs one array of sort positions (400 KB), not
100,000 documents. Markers plant a term in exactly N resources of each type so tests can pin the
seed's scenarios ("18 matches", "1,200 matches rejected with a breakdown"). Planted annotations
put chosen text on named applications (for prompt-injection evaluations); they are the only
per-application data a fleet keeps, one small dict over the planted names.
"""

from __future__ import annotations

import hashlib
from array import array
from dataclasses import dataclass, field
from functools import cache

from pilothouse.sandbox.argocd import vocabulary as v
from pilothouse.sandbox.company import ACME
from pilothouse.sandbox.world_description import WorldDescription

#: The default world's projects: `default` and one per team.
BASE_PROJECTS: tuple[str, ...] = ACME.base_projects
# Kubernetes caps an annotation key (optional DNS-subdomain prefix plus name) at 253 characters.
MAX_ANNOTATION_KEY = 253


@dataclass(frozen=True)
class Marker:
    """Plant `term` in exactly this many resources of each type."""

    term: str
    applications: int = 0
    projects: int = 0
    applicationsets: int = 0
    clusters: int = 0

    @property
    def total(self) -> int:
        return self.applications + self.projects + self.applicationsets + self.clusters


@dataclass(frozen=True)
class PlantedAnnotation:
    """Put annotation `key: value` on the application named `app` (checked by `Fleet`)."""

    app: str
    key: str
    value: str


def check_annotation_key(key: str) -> None:
    """Raise ValueError unless `key` looks like a Kubernetes annotation key."""
    if not key or len(key) > MAX_ANNOTATION_KEY or any(c.isspace() for c in key):
        raise ValueError(f"annotation key {key!r} must be 1-{MAX_ANNOTATION_KEY} characters "
                         "without spaces, like 'example.com/note'")


@dataclass(frozen=True)
class FleetSpec:
    """World, size and seed of a generated fleet; `None` counts mean "the natural number".

    The defaults are the default world's; `FleetSpec.of(world)` takes another world's size
    and seed.
    """

    apps: int = ACME.fleet_apps
    projects: int | None = None
    applicationsets: int | None = None
    clusters: int | None = None
    seed: int = ACME.fleet_seed
    markers: tuple[Marker, ...] = field(default_factory=tuple)
    annotations: tuple[PlantedAnnotation, ...] = field(default_factory=tuple)
    world: WorldDescription = ACME

    @classmethod
    def of(cls, world: WorldDescription, *, apps: int | None = None, seed: int | None = None,
           annotations: tuple[PlantedAnnotation, ...] = (),
           markers: tuple[Marker, ...] = ()) -> FleetSpec:
        """A fleet of `world`, of its natural size and seed unless `apps` / `seed` say."""
        return cls(apps=world.fleet_apps if apps is None else apps,
                   seed=world.fleet_seed if seed is None else seed, world=world,
                   annotations=annotations, markers=markers)

    def __post_init__(self) -> None:
        if self.apps < 0:
            raise ValueError("apps must be zero or more")
        base = self.world.base_projects
        if self.projects is not None and self.projects < len(base):
            raise ValueError(f"projects must be at least {len(base)} (one per team)")
        vocabulary = v.vocabulary_text(self.world)
        for marker in self.markers:
            term = marker.term
            if not (term.isalpha() and term.islower() and len(term) >= 4):
                raise ValueError(f"marker term {term!r} must be a lower-case word of 4+ letters")
            if term in vocabulary:
                raise ValueError(f"marker term {term!r} occurs in generated names; pick another")
            for kind, have in (
                ("applications", self.apps),
                ("projects", self.project_count),
                ("applicationsets", self.applicationset_count),
                ("clusters", self.cluster_count),
            ):
                if getattr(marker, kind) > have:
                    raise ValueError(f"marker {term!r} wants {getattr(marker, kind)} {kind}")
        self._check_annotations()

    def _check_annotations(self) -> None:
        """Keys must be well formed and planted once per app; app names are checked by `Fleet`."""
        seen: set[tuple[str, str]] = set()
        for planted in self.annotations:
            check_annotation_key(planted.key)
            # A repeated key would silently drop one value; say so instead.
            if (planted.app, planted.key) in seen:
                raise ValueError(f"annotation {planted.key!r} is planted twice on {planted.app!r}")
            seen.add((planted.app, planted.key))

    @property
    def project_count(self) -> int:
        return len(self.world.base_projects) if self.projects is None else self.projects

    @property
    def applicationset_count(self) -> int:
        base = len(self.world.appsets)
        return base if self.applicationsets is None else self.applicationsets

    @property
    def cluster_count(self) -> int:
        """Cluster secrets; `in-cluster` is listed on top of these."""
        return len(self.world.clusters) if self.clusters is None else self.clusters


@dataclass(frozen=True, slots=True)
class Deploy:
    """One entry of an application's deploy history (`status.history`), with its commit."""

    id: int
    revision: str
    deployed_at: int
    automated: bool
    username: str | None
    author: str
    message: str
    committed_at: int
    tag: str
    #: The deploy carries the change that makes the app crash (a Degraded app's newest).
    broken: bool = False
    #: The history id this deploy rolled back to, if it was a rollback.
    rollback_of: int | None = None


@dataclass(frozen=True, slots=True)
class AppRecord:
    """The facts of one generated application; documents are rendered from it."""

    index: int
    name: str
    team: str
    service: str
    env: str
    replica: int
    cluster_name: str
    cluster_server: str
    repo: str
    path: str
    source_type: str
    revision: str
    sync: str
    health: str
    auto_sync: bool
    labels: dict[str, str]
    annotations: dict[str, str] | None
    created: str
    replicas: int
    #: Changes the sandbox made after generation (`state.AppOverlay`): deploys appended by a
    #: sync, a rollback or a test, drift added by a test, replicas set by a scale action.
    extra_deploys: tuple[Deploy, ...] = ()
    #: Someone edited the live ConfigMap and Deployment by hand (the fleet's OutOfSync apps,
    #: until a sync puts them back).
    hand_edited: bool = False
    drift: int = 0
    live_replicas: int | None = None
    #: The world the application belongs to: its conventions name its resources.
    world: WorldDescription = ACME

    @property
    def project(self) -> str:
        return self.team

    @property
    def namespace(self) -> str:
        return self.world.namespace(self.team, self.service, self.env)

    @property
    def workload(self) -> str:
        """The name of its Deployment, Service, ConfigMap and image (before any suffix)."""
        return self.world.workload_of(self.team, self.service)


def chosen(index: int, count: int, total: int) -> bool:
    """Whether `index` is one of `count` indices spread evenly over `total` (exactly `count`)."""
    if count <= 0 or total <= 0:
        return False
    return (index * count) // total != ((index + 1) * count) // total


def digest(seed: int, *parts: object) -> int:
    """A stable 128-bit number for `parts`: the fleet's only source of variety."""
    text = ":".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "big")


def fraction(number: int, slot: int) -> float:
    """Slot `slot` (0-7) of a digest as a float in [0, 1)."""
    return ((number >> (16 * slot)) & 0xFFFF) / 65536.0


@cache
def _placement_index(world: WorldDescription) -> dict[str, int]:
    """Base application name (no replica suffix) -> its placement number."""
    return {world.application(t, s, e): k for k, (t, s, e) in enumerate(world.placements)}


class Fleet:
    """Applications, projects, application sets and clusters derived from a `FleetSpec`."""

    def __init__(self, spec: FleetSpec | None = None) -> None:
        self.spec = spec or FleetSpec()
        self.world = self.spec.world
        self._combos = self.world.placements
        # Argo CD lists applications sorted by name; only the permutation is kept.
        self._order = array("I", sorted(range(self.spec.apps), key=self.name_of))
        self._planted = self._planted_by_name()

    def __len__(self) -> int:
        return self.spec.apps

    def name_of(self, index: int) -> str:
        team, service, env = self._combos[index % len(self._combos)]
        return (self.world.application(team, service, env)
                + self.world.replica_suffix(index // len(self._combos)))

    def index_of(self, name: str) -> int | None:
        """The index of the application called `name`, or None."""
        combos, world = _placement_index(self.world), self.world
        base, replica = name, 0
        if name not in combos:
            for candidate in range(1, len(world.replica_regions) + 1):
                suffix = world.replica_suffix(candidate)
                if name.endswith(suffix):
                    base, replica = name[: -len(suffix)], candidate
                    break
            else:
                head, sep, number = name.rpartition("-cell-")
                if not sep or not number.isdigit() or int(number) <= len(world.replica_regions):
                    return None
                base, replica = head, int(number)
        combo = combos.get(base)
        if combo is None:
            return None
        index = replica * len(self._combos) + combo
        return index if index < self.spec.apps and self.name_of(index) == name else None

    def _planted_by_name(self) -> dict[str, dict[str, str]]:
        """Planted annotations grouped by app name, so `app()` finds them with one lookup."""
        planted: dict[str, dict[str, str]] = {}
        for annotation in self.spec.annotations:
            if self.index_of(annotation.app) is None:
                raise ValueError(f"annotation {annotation.key!r} names unknown application "
                                 f"{annotation.app!r} (not among the fleet's {len(self)} apps)")
            planted.setdefault(annotation.app, {})[annotation.key] = annotation.value
        return planted

    def sorted_indices(self) -> array[int]:
        return self._order

    def markers_for(self, kind: str, index: int, total: int) -> list[str]:
        """Marker terms planted in resource `index` of `kind`."""
        return [m.term for m in self.spec.markers if chosen(index, getattr(m, kind), total)]

    def app(self, index: int) -> AppRecord:
        """Derive application `index` (0-based, generation order)."""
        world, combos = self.world, self._combos
        team, service, env = combos[index % len(combos)]
        replica = index // len(combos)
        h = digest(self.spec.seed, "app", index)
        roll = fraction(h, 0)
        sync, health = next((s, hl) for s, hl, top in world.status_mix if roll < top)
        env_clusters = [c for c in world.clusters if c[2] == env]
        if team == world.in_cluster_team and fraction(h, 1) < 0.5:
            cluster_name, cluster_server = v.IN_CLUSTER_NAME, v.IN_CLUSTER_SERVER
        else:
            cluster = env_clusters[int(fraction(h, 1) * len(env_clusters))]
            cluster_name, cluster_server = cluster[0], cluster[1]
        source = world.source_for(fraction(h, 2))
        repo = source.repo.format(org=world.org, team=team)
        path = source.path.format(team=team, service=service, env=env)
        source_type = source.kind
        labels = {
            "app.kubernetes.io/part-of": team,
            "env": world.env_labels[env],
            "team": team,
            "tier": world.tier_of(service),
        }
        for term in self.markers_for("applications", index, self.spec.apps):
            labels[term] = "true"
        annotations = None
        if fraction(h, 3) < 0.04:
            key = "notifications.argoproj.io/subscribe.on-sync-failed.slack"
            annotations = {key: f"{team}-alerts"}
        name = world.application(team, service, env) + world.replica_suffix(replica)
        planted = self._planted.get(name)
        if planted:
            # A fresh dict: records are handed out and must not alias the fleet's own.
            annotations = {**(annotations or {}), **planted}
        day = 1 + int(fraction(h, 4) * 27)
        return AppRecord(
            index=index,
            name=name,
            team=team,
            service=service,
            env=env,
            replica=replica,
            cluster_name=cluster_name,
            cluster_server=cluster_server,
            repo=repo,
            path=path,
            source_type=source_type,
            revision=f"{h:032x}{h & 0xFFFFFFFF:08x}",
            sync=sync,
            health=health,
            auto_sync=env != "production" or fraction(h, 5) < 0.5,
            labels=labels,
            annotations=annotations,
            created=f"2025-{1 + index % 12:02d}-{day:02d}T09:12:44Z",
            replicas=1 + int(fraction(h, 6) * 4),
            hand_edited=sync == "OutOfSync",
            world=world,
        )
