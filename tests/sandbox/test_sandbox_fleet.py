"""The generated fleet: deterministic, lazy, realistic, and markers that hit exact counts."""

from __future__ import annotations

import re
import tracemalloc
from collections import Counter

import pytest

from pilothouse.sandbox.argocd import inventory
from pilothouse.sandbox.argocd.fleet import Fleet, FleetSpec, Marker, chosen


def test_same_seed_same_fleet_and_another_seed_differs() -> None:
    a, b = Fleet(FleetSpec(apps=300)), Fleet(FleetSpec(apps=300))
    assert [a.app(i) for i in range(300)] == [b.app(i) for i in range(300)]
    other = Fleet(FleetSpec(apps=300, seed=1))
    assert [a.app(i).health for i in range(300)] != [other.app(i).health for i in range(300)]


def test_default_fleet_is_819_apps_mostly_synced_and_healthy_with_some_trouble() -> None:
    fleet = Fleet()
    apps = [fleet.app(i) for i in range(len(fleet))]
    assert len(apps) == 819
    assert len({a.name for a in apps}) == 819
    health, sync = Counter(a.health for a in apps), Counter(a.sync for a in apps)
    assert health["Healthy"] / 819 > 0.75 and sync["Synced"] / 819 > 0.75
    assert {"Degraded", "Progressing", "Missing"} <= set(health)
    assert sync["OutOfSync"] > 0
    assert set(Counter(a.env for a in apps)) == {"production", "staging", "dev"}
    assert len({a.project for a in apps}) == 16 and len({a.cluster_name for a in apps}) >= 5
    assert all({"team", "env", "tier"} <= set(a.labels) for a in apps)
    assert 0 < sum(1 for a in apps if a.annotations) < 819 * 0.1


def test_sorted_order_is_by_name_and_names_map_back_to_indices() -> None:
    fleet = Fleet(FleetSpec(apps=2000))
    names = [fleet.name_of(i) for i in fleet.sorted_indices()]
    assert names == sorted(names)
    for index in range(0, 2000, 7):
        assert fleet.index_of(fleet.name_of(index)) == index
    assert fleet.index_of("payments-api-production-cell-999") is None
    assert fleet.index_of("no-such-app") is None


def test_a_100k_fleet_is_lazy() -> None:
    tracemalloc.start()
    try:
        fleet = Fleet(FleetSpec(apps=100_000))
        retained, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # One 4-byte sort position per app, not 100,000 records.
    assert retained < 1_000_000
    last = fleet.app(99_999)
    assert fleet.index_of(last.name) == 99_999


@pytest.mark.parametrize(("count", "total"), [(0, 10), (18, 819), (387, 400), (819, 819)])
def test_chosen_picks_exactly_count_indices(count: int, total: int) -> None:
    assert sum(chosen(i, count, total) for i in range(total)) == count


def test_markers_land_in_exactly_the_requested_resources() -> None:
    spec = FleetSpec(apps=819, projects=320, applicationsets=360, clusters=160,
                     markers=(Marker("condor", 400, 300, 350, 150), Marker("kestrel", 18)))
    fleet = Fleet(spec)
    apps = [fleet.app(i) for i in range(819)]
    assert sum("condor" in a.labels for a in apps) == 400
    assert sum("kestrel" in a.labels for a in apps) == 18
    assert sum("condor" in p["spec"]["description"] for p in inventory.projects(fleet)) == 300
    sets = list(inventory.applicationsets(fleet))
    assert len(sets) == 360 and sum("condor" in s["metadata"]["labels"] for s in sets) == 350
    clusters = list(inventory.clusters(fleet))
    assert len(clusters) == 161 and clusters[-1]["name"] == "in-cluster"
    assert sum("condor" in c.get("labels", {}) for c in clusters) == 150
    # The marker appears nowhere else: no generated name contains it.
    assert not any(re.search("condor|kestrel", a.name + a.repo + a.path) for a in apps)


@pytest.mark.parametrize("term", ["api", "Kestrel", "ab", "prod", "pay9"])
def test_marker_terms_must_be_new_lowercase_words(term: str) -> None:
    with pytest.raises(ValueError, match="marker term"):
        FleetSpec(markers=(Marker(term, applications=1),))


def test_marker_counts_cannot_exceed_the_fleet() -> None:
    with pytest.raises(ValueError, match="wants 20 clusters"):
        FleetSpec(markers=(Marker("kestrel", clusters=20),))
    with pytest.raises(ValueError, match="one per team"):
        FleetSpec(projects=3)
