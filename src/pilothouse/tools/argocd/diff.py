"""What differs between live and desired state, per resource, as capped unified diffs.

`GET .../managed-resources` carries each resource's live and desired manifest as JSON strings
(tens of KB for a large app); they are streamed item by item, rendered as YAML and diffed with
`difflib`, and only the diff lines are kept: at most `per_resource` lines for one resource and
`total` for the answer, with counts of every line and resource left out. Secret values never
reach a diff. The same rendering serves the rollback's "what it would apply".
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from pilothouse.errors import UserInputError
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.details import MAX_LISTED, app_name
from pilothouse.tools.argocd.errors import AppSubject

MAX_LINES_PER_RESOURCE = 40
MAX_LINES_TOTAL = 200
_MASK = "***"


def _masked(manifest: Any) -> Any:
    """A Secret with its values replaced: a diff shows which keys changed, never what to."""
    if isinstance(manifest, dict) and manifest.get("kind") == "Secret":
        masked = dict(manifest)
        for key in ("data", "stringData"):
            if isinstance(masked.get(key), dict):
                masked[key] = dict.fromkeys(masked[key], _MASK)
        return masked
    return manifest


def parse_state(raw: Any) -> Any:
    """A `liveState`/`targetState` JSON string (or "null") as an object, or None."""
    if raw in (None, "", "null"):
        return None
    try:
        return json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return None


def _lines(manifest: Any) -> list[str]:
    if manifest is None:
        return []
    return yaml.safe_dump(_masked(manifest), sort_keys=True, default_flow_style=False) \
        .splitlines()


def unified_diff(before: Any, after: Any, label: str) -> list[str]:
    """The unified diff (2 lines of context) turning `before` into `after`."""
    return list(difflib.unified_diff(_lines(before), _lines(after), f"live/{label}",
                                     f"desired/{label}", n=2, lineterm=""))


def resource_key(item: dict[str, Any]) -> str:
    where = f"{item.get('namespace')}/" if item.get("namespace") else ""
    return f"{item.get('kind')}/{where}{item.get('name')}"


@dataclass
class DiffCollector:
    """Keeps capped diffs of the resources that differ; counts everything else."""

    per_resource: int = MAX_LINES_PER_RESOURCE
    total: int = MAX_LINES_TOTAL
    resources: int = 0
    differing: int = 0
    kept_lines: int = 0
    omitted_lines: int = 0
    omitted_resources: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)
    _digest: Any = field(default_factory=hashlib.sha256)

    def add(self, item: dict[str, Any], before: Any, after: Any) -> None:
        """Diff one resource: live `before` against desired `after`."""
        self.resources += 1
        label = resource_key(item)
        lines = unified_diff(before, after, label)
        if not lines:
            return
        self.differing += 1
        status = "missing" if before is None else "extra" if after is None else "modified"
        # The evidence covers every line, including those the answer leaves out.
        self._digest.update("\n".join([label, status, *lines]).encode())
        room = min(self.per_resource, self.total - self.kept_lines)
        if room <= 0 or len(self.rows) >= MAX_LISTED:
            self.omitted_resources += 1
            self.omitted_lines += len(lines)
            return
        shown = lines[:room]
        self.kept_lines += len(shown)
        row: dict[str, Any] = {"resource": label, "status": status, "diff": "\n".join(shown)}
        if len(lines) > len(shown):
            row["omitted_lines"] = len(lines) - len(shown)
            self.omitted_lines += len(lines) - len(shown)
        self.rows.append(row)

    @property
    def digest(self) -> str:
        return self._digest.hexdigest()[:16]

    def summary(self) -> dict[str, Any]:
        answer: dict[str, Any] = {"resources": self.resources, "differing": self.differing,
                                  "diffs": self.rows}
        if self.omitted_resources or self.omitted_lines:
            answer["omitted"] = {"resources": self.omitted_resources,
                                 "lines": self.omitted_lines}
        return answer


def _params(project: str | None) -> dict[str, str]:
    return {"project": project.strip()} if project and project.strip() else {}


async def live_states(client: ArgoCDClient, name: str,
                      project: str | None) -> dict[str, tuple[dict[str, Any], Any, Any]]:
    """(item, live, desired) per resource key, streamed from managed-resources."""
    found: dict[str, tuple[dict[str, Any], Any, Any]] = {}

    def take(item: dict[str, Any]) -> None:
        meta = {k: item.get(k) for k in ("group", "kind", "namespace", "name",
                                         "resourceVersion")}
        found[resource_key(meta)] = (meta, parse_state(item.get("liveState")),
                                     parse_state(item.get("targetState")))

    await client.scan(f"/api/v1/applications/{name}/managed-resources", take,
                      params=_params(project), subject=AppSubject(name))
    return found


async def diff_application(client: ArgoCDClient, name: str, *, project: str | None = None,
                           max_lines_per_resource: int = MAX_LINES_PER_RESOURCE
                           ) -> dict[str, Any]:
    """Per resource that differs: kind/name, status and a capped unified diff (live -> desired)."""
    name = app_name(name)
    if max_lines_per_resource < 1:
        raise UserInputError("max_lines_per_resource must be 1 or more.")
    collector = DiffCollector(per_resource=min(max_lines_per_resource, MAX_LINES_TOTAL))
    for item, live, desired in (await live_states(client, name, project)).values():
        collector.add(item, live, desired)
    answer = {"application": name, **collector.summary()}
    answer["next"] = ("Live state matches the desired state." if not collector.differing else
                      "Lines starting with - are live, + desired; a sync would apply the +.")
    return answer
