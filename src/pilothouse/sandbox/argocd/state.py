"""The sandbox's mutable state: credentials, operations and changes layered over the fleet.

The fleet itself never changes. A sync or rollback records an operation for one application;
while it runs, further ones get Argo CD's 400 "another operation is already in progress"; when
it finishes it is settled into the app's `AppOverlay` (a new history entry, the health it
leaves). Resource actions, auto-sync switches and the test hooks (a new commit deployed, drift)
go to the overlay too. Only touched applications have one, so the state stays small however
large the fleet is.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pilothouse.sandbox.argocd import deploys
from pilothouse.sandbox.argocd.documents import resources
from pilothouse.sandbox.argocd.fleet import AppRecord, Deploy, Fleet, FleetSpec


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
    """A sync (or a rollback, which Argo CD runs as a sync) accepted for one application."""

    started: float
    finishes: float
    revision: str
    prune: bool
    username: str
    #: The history entry a rollback restores; None for a sync.
    target: Deploy | None = None
    settled: bool = False

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
class AppOverlay:
    """What happened to one application since the fleet was generated."""

    auto_sync: bool | None = None
    extra_deploys: list[Deploy] = field(default_factory=list)
    #: A sync or rollback put the hand-edited live objects back.
    restored: bool = False
    drift: int = 0
    live_replicas: int | None = None
    #: The health a settled operation left; None keeps the fleet's.
    health: str | None = None
    #: A resource action's rollout runs until then (epoch seconds): the app is Progressing.
    busy_until: float = 0.0


def _with_overlay(rec: AppRecord, overlay: AppOverlay, now: float) -> AppRecord:
    rec = dataclasses.replace(
        rec, auto_sync=rec.auto_sync if overlay.auto_sync is None else overlay.auto_sync,
        extra_deploys=tuple(overlay.extra_deploys),
        hand_edited=rec.hand_edited and not overlay.restored, drift=overlay.drift,
        live_replicas=overlay.live_replicas)
    behind = deploys.current(rec).revision != deploys.head(rec).revision
    if rec.hand_edited or rec.drift or rec.live_replicas is not None or behind:
        sync = "OutOfSync"
    else:
        sync = "Unknown" if rec.sync == "Unknown" and not overlay.restored else "Synced"
    health = overlay.health or rec.health
    if now < overlay.busy_until:
        health = "Progressing"
    return dataclasses.replace(rec, sync=sync, health=health)


@dataclass
class SandboxState:
    """Fleet, credentials, operations and overlays of one sandbox server."""

    fleet: Fleet
    token: str = DEFAULT_TOKEN
    username: str = DEFAULT_USERNAME
    password: str = DEFAULT_PASSWORD
    operation_seconds: float = 3.0
    operations: dict[int, Operation] = field(default_factory=dict)
    overlays: dict[int, AppOverlay] = field(default_factory=dict)

    @classmethod
    def create(cls, spec: FleetSpec | None = None, **options: Any) -> SandboxState:
        return cls(fleet=Fleet(spec), **options)

    def overlay(self, index: int) -> AppOverlay:
        return self.overlays.setdefault(index, AppOverlay())

    def record(self, index: int) -> AppRecord:
        """Application `index` as it is now: the fleet's record with its overlay applied."""
        return self.view(index)[0]

    def view(self, index: int) -> tuple[AppRecord, dict[str, Any] | None, dict[str, Any] | None]:
        """(record, operationState override, running `operation`) for application `index`."""
        rec = self.fleet.app(index)
        op = self.operations.get(index)
        if op is None and index not in self.overlays:
            return rec, None, None
        now = time.time()
        if op is not None and not op.running(now) and not op.settled:
            self._settle(index, rec, op)
        if index in self.overlays:
            rec = _with_overlay(rec, self.overlays[index], now)
        if op is None:
            return rec, None, None
        if op.running(now):
            if op.target is not None:
                rec = dataclasses.replace(rec, health="Progressing")
            return rec, op.as_state(now), op.as_operation()
        return rec, op.as_state(now), None

    def _settle(self, index: int, fleet_rec: AppRecord, op: Operation) -> None:
        """A finished operation becomes history: what it deployed and the health it left."""
        op.settled = True
        overlay = self.overlay(index)
        rec = _with_overlay(fleet_rec, overlay, op.finishes)
        target = op.target
        if target is None:
            head = deploys.head(rec)
            deploy = deploys.new_deploy(rec, revision=op.revision, username=op.username,
                                        tag=head.tag, broken=head.broken, message=head.message,
                                        author=head.author, committed_at=head.committed_at,
                                        moment=int(op.finishes))
        else:
            deploy = deploys.new_deploy(rec, revision=target.revision, username=op.username,
                                        tag=target.tag, broken=target.broken,
                                        rollback_of=target.id, message=target.message,
                                        author=target.author,
                                        committed_at=target.committed_at,
                                        moment=int(op.finishes))
        overlay.extra_deploys.append(deploy)
        overlay.restored, overlay.drift, overlay.live_replicas = True, 0, None
        overlay.health = "Degraded" if deploy.broken else "Healthy"

    def busy(self, index: int) -> bool:
        op = self.operations.get(index)
        return op is not None and op.running(time.time())

    def start_sync(self, index: int, *, dry_run: bool, revision: str | None,
                   prune: bool) -> tuple[bool, list[dict[str, Any]]]:
        """Accept a sync; False if one is running. Returns the resources it would change."""
        if self.busy(index):
            return False, []
        rec, _, _ = self.view(index)
        changes = [r for r in resources(rec) if r.get("status") != "Synced"]
        if not dry_run:
            now = time.time()
            self.operations[index] = Operation(
                started=now, finishes=now + self.operation_seconds,
                revision=revision or deploys.head(rec).revision, prune=prune,
                username=self.username)
        return True, changes

    def start_rollback(self, index: int, target: Deploy, *, prune: bool) -> None:
        """Start syncing back to history entry `target` (the caller checked the preconditions)."""
        now = time.time()
        self.operations[index] = Operation(
            started=now, finishes=now + self.operation_seconds, revision=target.revision,
            prune=prune, username=self.username, target=target)

    def run_action(self, index: int, action: str, replicas: int | None = None) -> None:
        """`restart` rolls the pods; `scale` sets the replicas. Both roll out for a while."""
        overlay = self.overlay(index)
        if action == "scale" and replicas is not None:
            overlay.live_replicas = replicas
        overlay.busy_until = time.time() + self.operation_seconds

    def set_auto_sync(self, index: int, enabled: bool) -> None:
        self.overlay(index).auto_sync = enabled

    # -- test hooks: change the world behind an approval -------------------------------------
    def add_drift(self, index: int) -> None:
        """Someone edits the live ConfigMap by hand."""
        self.overlay(index).drift += 1

    def deploy_new_commit(self, index: int, message: str = "") -> Deploy:
        """A new commit lands on the tracked branch and is deployed (auto-sync, or by hand)."""
        rec = self.record(index)
        count = len(self.overlay(index).extra_deploys)
        revision = hashlib.sha1(f"{rec.name}:sandbox-commit:{count}".encode()).hexdigest()
        current = deploys.current(rec)
        deploy = deploys.new_deploy(
            rec, revision=revision, username=None if rec.auto_sync else self.username,
            tag=f"{current.tag}-hotfix.{count + 1}", message=message or
            f"{rec.service}({rec.env}): hotfix {count + 1}", author=rec.world.oncall,
            moment=int(time.time()))
        self.overlay(index).extra_deploys.append(deploy)
        return deploy
