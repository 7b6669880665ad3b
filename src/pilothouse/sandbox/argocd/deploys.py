"""Deploy history of a generated application: which revisions it ran, when, and who made them.

Generated from the record like everything else, consistently with the fleet: a Degraded
application's newest deploy is recent and carries the change that breaks it; an application
whose repository is in the GitHub sandbox (`platform-deployments`) deploys that repository's
main-line commits, so each revision has a commit and a pull request there
(`sandbox.main_line_data`, generated from the GitHub sandbox: the two sandboxes share data,
not code). Other Git repositories get commits made up here; Helm charts deploy
chart versions. Deploys appended later (a sync, a rollback, a test's new commit) sit in the
record's `extra_deploys`.
"""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from pilothouse.sandbox import main_line_data
from pilothouse.sandbox.argocd.fleet import AppRecord, Deploy
from pilothouse.sandbox.company import ACME
from pilothouse.sandbox.world_description import WorldDescription

HOUR, DAY = 3600, 86_400
#: The sandbox's clock (documents.NOW) and the moment before the Degraded apps' bad deploys.
NOW = int(datetime(2026, 8, 22, 8, 15, 41, tzinfo=UTC).timestamp())
RECENT = int(datetime(2026, 8, 22, 6, 30, tzinfo=UTC).timestamp())
#: The default world's people (each world's are `world.humans`).
HUMANS = main_line_data.PEOPLE


@dataclass(frozen=True)
class Commit:
    """One main-line commit of a repository in the GitHub sandbox."""

    sha: str
    author: str
    date: int
    message: str


@lru_cache(maxsize=8)
def main_line_of(repo: str, world: WorldDescription = ACME) -> tuple[Commit, ...]:
    """The main line of `repo`, oldest first (empty: not a GitHub sandbox repository)."""
    if repo != world.main_line_repo:
        return ()
    data = importlib.import_module(f"pilothouse.sandbox.{world.main_line_module}")
    return tuple(Commit(*row) for row in data.COMMITS)
_CHANGES = ("raise memory limit to 512Mi", "enable graceful shutdown", "tune HPA targets",
            "add a PodDisruptionBudget", "move secrets to the vault CSI driver",
            "set topology spread constraints", "lower log verbosity")
_BROKEN_CHANGE = "shrink the database pool to save connections"


def stamp(moment: int) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def github_repo(url: str, world: WorldDescription = ACME) -> str | None:
    """The GitHub sandbox repository behind `url`, if it has a main line there."""
    prefix = f"https://github.com/{world.org}/"
    if not url.startswith(prefix):
        return None
    name = url[len(prefix):].removesuffix(".git")
    return name if _usable(name, world) else None


def image_tag_back(rec: AppRecord, steps: int) -> str:
    """The image tag `steps` deploys before the current one (`documents.image_tag`)."""
    minor, patch = rec.index % 47, rec.index % 11 - steps
    while patch < 0:
        patch, minor = patch + 10, max(0, minor - 1)
    return f"1.{minor}.{patch}"


def _entropy(rec: AppRecord) -> int:
    return int(rec.revision[:24], 16)


def _commit_times(rec: AppRecord, count: int, h: int) -> list[int]:
    """Made-up commit times, oldest first: recent for a Degraded app, days old otherwise."""
    newest = RECENT - (h % 50) * 60 if rec.health == "Degraded" else \
        NOW - (2 + (h >> 8) % 25) * DAY - (h >> 16) % DAY
    times = [newest]
    for k in range(1, count):
        times.append(times[-1] - (2 + (h >> (20 + 3 * k)) % 8) * DAY)
    return times[::-1]


@lru_cache(maxsize=8)
def _usable(repo: str, world: WorldDescription = ACME) -> tuple[Commit, ...]:
    """The repository's main line up to the moment the Degraded apps broke."""
    return tuple(c for c in main_line_of(repo, world) if c.date < RECENT)


def _picked(repo: str, rec: AppRecord, count: int, h: int) -> list[Commit]:
    """`count` distinct main-line commits (oldest first) made before the Degraded apps broke."""
    usable = _usable(repo, rec.world)
    at = len(usable) - 1 - (h % 3 if rec.health == "Degraded" else 3 + (h >> 8) % 25)
    chosen: list[Commit] = []
    for k in range(count):
        if at < 0:
            break
        chosen.append(usable[at])
        at -= 1 + (h >> (12 + 4 * k)) % 4
    return chosen[::-1]


def generated(rec: AppRecord) -> tuple[Deploy, ...]:
    """The history the fleet starts with, oldest first (3-5 deploys)."""
    h = _entropy(rec)
    count = 3 + h % 3
    repo = github_repo(rec.repo, rec.world)
    humans = rec.world.humans
    commits: list[tuple[str, str, str, int]] = []  # (revision, author, message, committed)
    if repo is not None:
        commits = [(c.sha, c.author, c.message, c.date)
                   for c in _picked(repo, rec, count, h)]
    else:
        for k, when in enumerate(_commit_times(rec, count, h)):
            steps = count - 1 - k
            change = _BROKEN_CHANGE if rec.health == "Degraded" and steps == 0 else \
                _CHANGES[(h >> (4 * k)) % len(_CHANGES)]
            if rec.repo == rec.world.helm_chart_repo:
                revision = image_tag_back(rec, steps)
            else:
                revision = hashlib.sha1(f"{rec.repo}:{rec.name}:{k}".encode()).hexdigest()
            commits.append((revision, humans[(h >> (5 * k)) % len(humans)],
                            f"{rec.service}({rec.env}): {change}", when))
    deploys: list[Deploy] = []
    first_id = 40 + (h >> 30) % 60
    for k, (revision, author, message, committed) in enumerate(commits):
        steps = len(commits) - 1 - k
        newest = steps == 0
        if rec.auto_sync:
            deployed = committed + 120 + (h >> (40 + k)) % 240
        elif newest and rec.health == "Degraded":
            deployed = max(committed + 600, RECENT + (h >> 44) % 1500)
        else:
            deployed = committed + (1 + (h >> (44 + k)) % 20) * HOUR
        if deploys and deployed <= deploys[-1].deployed_at:
            deployed = deploys[-1].deployed_at + 600
        deploys.append(Deploy(
            id=first_id + k, revision=revision, deployed_at=min(deployed, NOW - 900),
            automated=rec.auto_sync,
            username=None if rec.auto_sync else humans[(h >> (7 * k + 3)) % len(humans)],
            author=author, message=message, committed_at=committed,
            tag=image_tag_back(rec, steps), broken=newest and rec.health == "Degraded"))
    return tuple(deploys)


def deploys(rec: AppRecord) -> tuple[Deploy, ...]:
    """The whole history, oldest first: generated, then what happened since."""
    return generated(rec) + rec.extra_deploys


def current(rec: AppRecord) -> Deploy:
    """What runs now: the newest deploy."""
    return deploys(rec)[-1]


def head_revision(rec: AppRecord) -> str:
    """`head(rec).revision` without building the history (list projections ask for it per app)."""
    if rec.extra_deploys:
        return head(rec).revision
    h = _entropy(rec)
    count = 3 + h % 3
    repo = github_repo(rec.repo, rec.world)
    if repo is not None:
        return _picked(repo, rec, 1, h)[-1].sha
    if rec.repo == rec.world.helm_chart_repo:
        return image_tag_back(rec, 0)
    return hashlib.sha1(f"{rec.repo}:{rec.name}:{count - 1}".encode()).hexdigest()


def head(rec: AppRecord) -> Deploy:
    """What the tracked branch points to: the newest deploy that was not a rollback."""
    return next(d for d in reversed(deploys(rec)) if d.rollback_of is None)


def find(rec: AppRecord, revision: str) -> Deploy | None:
    """The newest deploy of `revision` (a full SHA, a 7+ character prefix, or a chart version)."""
    for deploy in reversed(deploys(rec)):
        if deploy.revision == revision or (len(revision) >= 7 and
                                           deploy.revision.startswith(revision)):
            return deploy
    return None


def revision_metadata(rec: AppRecord, revision: str) -> dict[str, Any] | None:
    """`GET .../revisions/{revision}/metadata` for a Git revision the app deployed or could."""
    deploy = find(rec, revision)
    if deploy is not None:
        author, message, date = deploy.author, deploy.message, deploy.committed_at
    else:
        repo = github_repo(rec.repo, rec.world)
        commit = next((c for c in main_line_of(repo, rec.world) if c.sha == revision),
                      None) if repo else None
        if commit is None:
            return None
        author, message, date = commit.author, commit.message, commit.date
    return {"author": f"{author} <{author.split('[')[0]}@users.noreply.github.com>",
            "date": stamp(date), "message": message}


def history_entry(rec: AppRecord, deploy: Deploy, source: dict[str, Any]) -> dict[str, Any]:
    """One `status.history` item as the controller records it."""
    initiated: dict[str, Any] = {"automated": True} if deploy.automated else \
        {"username": deploy.username or "admin"}
    return {"revision": deploy.revision, "deployedAt": stamp(deploy.deployed_at),
            "id": deploy.id, "source": source,
            "deployStartedAt": stamp(deploy.deployed_at - 18), "initiatedBy": initiated}


def new_deploy(rec: AppRecord, *, revision: str, username: str | None, tag: str,
               broken: bool = False, rollback_of: int | None = None, message: str = "",
               author: str = "", committed_at: int | None = None,
               moment: int | None = None) -> Deploy:
    """A deploy appended after generation, with the next history id."""
    history = deploys(rec)
    when = max(moment or NOW, history[-1].deployed_at + 60)
    return Deploy(id=history[-1].id + 1, revision=revision, deployed_at=when,
                  automated=username is None, username=username, author=author or
                  (username or "admin"), message=message, committed_at=committed_at or when,
                  tag=tag, broken=broken, rollback_of=rollback_of)
