"""The sandbox's facts: small frozen records from which every GitHub document is rendered.

A record holds what varies (numbers, names, states, times as epoch seconds); the 18 KB of URLs
and nested objects a real payload carries are produced by `documents` on request, so an
organisation of a thousand pull requests costs a few hundred kilobytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pilothouse.sandbox.world_description import KINDS, RepoSpec

#: Repository kinds and what to generate of one repository: part of a world's description.
__all__ = ["KINDS", "FileChange", "Issue", "Job", "Pull", "Repo", "RepoSpec", "Review", "Run",
           "Step"]


@dataclass(frozen=True)
class Review:
    """A submitted review: APPROVED, CHANGES_REQUESTED or COMMENTED."""

    id: int
    reviewer: str
    state: str
    submitted_at: int


@dataclass(frozen=True)
class FileChange:
    """One file a pull request changes."""

    path: str
    status: str
    additions: int
    deletions: int


@dataclass(frozen=True)
class Pull:
    """A pull request."""

    number: int
    id: int
    issue_id: int
    title: str
    body: str
    author: str
    state: str
    merged: bool
    draft: bool
    labels: tuple[str, ...]
    requested_reviewers: tuple[str, ...]
    reviews: tuple[Review, ...]
    files: tuple[FileChange, ...]
    head_ref: str
    base_ref: str
    head_sha: str
    base_sha: str
    created_at: int
    updated_at: int
    closed_at: int | None
    merged_at: int | None
    comments: int
    review_comments: int
    commits: int

    @property
    def review_decision(self) -> str:
        """GitHub's reviewDecision with one required approval: the latest verdict per reviewer
        counts, a change request blocks, comments never decide."""
        verdicts: dict[str, str] = {}
        for review in sorted(self.reviews, key=lambda r: r.submitted_at):
            if review.state in ("APPROVED", "CHANGES_REQUESTED"):
                verdicts[review.reviewer] = review.state
        if "CHANGES_REQUESTED" in verdicts.values():
            return "CHANGES_REQUESTED"
        if "APPROVED" in verdicts.values():
            return "APPROVED"
        return "REVIEW_REQUIRED"

    @property
    def additions(self) -> int:
        return sum(f.additions for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f.deletions for f in self.files)


@dataclass(frozen=True)
class Issue:
    """An issue (pull requests are issues too, but live in `Pull`)."""

    number: int
    id: int
    title: str
    body: str
    author: str
    state: str
    state_reason: str | None
    labels: tuple[str, ...]
    assignees: tuple[str, ...]
    comments: int
    created_at: int
    updated_at: int
    closed_at: int | None


@dataclass(frozen=True)
class Step:
    """One step of a job; `lines` is how long its log is."""

    number: int
    name: str
    conclusion: str | None
    lines: int


@dataclass(frozen=True)
class Job:
    """One job of a workflow run."""

    id: int
    name: str
    conclusion: str | None
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Run:
    """A workflow run; `failure` is what the failing step printed, `app` what it deployed."""

    id: int
    run_number: int
    workflow: str
    workflow_path: str
    workflow_id: int
    head_branch: str
    head_sha: str
    event: str
    status: str
    conclusion: str | None
    display_title: str
    actor: str
    created_at: int
    updated_at: int
    pull_numbers: tuple[int, ...]
    jobs: tuple[Job, ...]
    app: str
    failure: tuple[str, ...] = ()


@dataclass(frozen=True)
class Repo:
    """A generated repository with everything in it, newest last."""

    spec: RepoSpec
    owner: str
    id: int
    created_at: int
    pushed_at: int
    pulls: tuple[Pull, ...] = ()
    issues: tuple[Issue, ...] = ()
    runs: tuple[Run, ...] = ()
    _pulls_by_number: dict[int, Pull] = field(default_factory=dict, compare=False, repr=False)
    _issues_by_number: dict[int, Issue] = field(default_factory=dict, compare=False, repr=False)
    _runs_by_id: dict[int, Run] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._pulls_by_number.update((p.number, p) for p in self.pulls)
        self._issues_by_number.update((i.number, i) for i in self.issues)
        self._runs_by_id.update((r.id, r) for r in self.runs)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.spec.name}"

    def pull(self, number: int) -> Pull | None:
        return self._pulls_by_number.get(number)

    def issue(self, number: int) -> Issue | None:
        return self._issues_by_number.get(number)

    def run(self, run_id: int) -> Run | None:
        return self._runs_by_id.get(run_id)

    @property
    def open_issue_count(self) -> int:
        """GitHub's `open_issues_count`: open issues plus open pull requests."""
        return (sum(p.state == "open" for p in self.pulls)
                + sum(i.state == "open" for i in self.issues))
