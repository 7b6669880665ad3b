"""The sandbox's mutable state: credentials and sync operations layered over the generated fleet.

The fleet itself never changes; a sync only records an operation for one application. While it
runs, further syncs get Argo CD's 400 "another operation is already in progress"; when it
finishes, the application reads as Synced and Healthy. The overlay holds one entry per synced
application, so it stays small however large the fleet is.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pilothouse.sandbox.argocd.documents import resources
from pilothouse.sandbox.argocd.fleet import AppRecord, Fleet, FleetSpec


def _b64(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


#: The sandbox's default bearer token. It has the three dot-separated parts of a JWT because the
#: real server only reads `Authorization: Bearer` when the token looks like one.
DEFAULT_TOKEN = ".".join((
    _b64({"alg": "HS256", "typ": "JWT"}),
    _b64({"iss": "argocd", "sub": "admin", "pilothouse-sandbox": True}),
    "c2FuZGJveC1zaWduYXR1cmUtbm90LWEtc2VjcmV0",
))
DEFAULT_USERNAME = "admin"
DEFAULT_PASSWORD = "sandbox-password"


def _stamp(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Operation:
    """A sync the sandbox accepted for one application."""

    started: float
    finishes: float
    revision: str
    prune: bool
    username: str

    def running(self, now: float) -> bool:
        return now < self.finishes

    def as_operation(self) -> dict[str, Any]:
        return {"sync": {"revision": self.revision, "prune": self.prune},
                "initiatedBy": {"username": self.username}}

    def as_state(self, now: float) -> dict[str, Any]:
        state: dict[str, Any] = {"operation": self.as_operation(),
                                 "startedAt": _stamp(self.started)}
        if self.running(now):
            state.update(phase="Running", message="one or more tasks are running")
        else:
            state.update(phase="Succeeded", message="successfully synced (all tasks run)",
                         finishedAt=_stamp(self.finishes))
        return state


@dataclass
class SandboxState:
    """Fleet, credentials and the operations overlay of one sandbox server."""

    fleet: Fleet
    token: str = DEFAULT_TOKEN
    username: str = DEFAULT_USERNAME
    password: str = DEFAULT_PASSWORD
    operation_seconds: float = 3.0
    operations: dict[int, Operation] = field(default_factory=dict)

    @classmethod
    def create(cls, spec: FleetSpec | None = None, **options: Any) -> SandboxState:
        return cls(fleet=Fleet(spec), **options)

    def view(self, index: int) -> tuple[AppRecord, dict[str, Any] | None, dict[str, Any] | None]:
        """(record, operationState override, running `operation`) for application `index`."""
        rec = self.fleet.app(index)
        op = self.operations.get(index)
        if op is None:
            return rec, None, None
        now = time.time()
        if op.running(now):
            return rec, op.as_state(now), op.as_operation()
        return dataclasses.replace(rec, sync="Synced", health="Healthy"), op.as_state(now), None

    def start_sync(self, index: int, *, dry_run: bool, revision: str | None,
                   prune: bool) -> tuple[bool, list[dict[str, Any]]]:
        """Accept a sync; False if one is running. Returns the resources it would change."""
        now = time.time()
        current = self.operations.get(index)
        if current is not None and current.running(now):
            return False, []
        rec, _, _ = self.view(index)
        changes = [r for r in resources(rec) if r.get("status") != "Synced"]
        if not dry_run:
            self.operations[index] = Operation(
                started=now, finishes=now + self.operation_seconds,
                revision=revision or rec.revision, prune=prune, username=self.username)
        return True, changes
