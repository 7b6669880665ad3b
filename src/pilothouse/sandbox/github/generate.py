"""Generate one repository's pull requests, issues and workflow runs from `(seed, name)`.

Each record gets its own `random.Random` seeded with a string naming it, so adding a repository
or changing one count never reshuffles the others. Review states follow GitHub's rules: a
reviewer who submits a review leaves `requested_reviewers`; drafts request nobody.
"""

from __future__ import annotations

import hashlib
import random
import re

from pilothouse.sandbox.github import vocabulary as v
from pilothouse.sandbox.github.records import (
    FileChange,
    Issue,
    Job,
    Pull,
    RepoSpec,
    Review,
    Run,
    Step,
)

DAY = 86_400
#: How far back a repository's pull requests and issues reach, and its workflow runs.
HISTORY_SECONDS = 420 * DAY
RUN_HISTORY_SECONDS = 60 * DAY
#: Lines of the one oversized failing log (payments-api's newest failure): ~5 MB unzipped,
#: for tests of a client's decompression cap.
HUGE_LOG_LINES = 60_000


def sha(*parts: object) -> str:
    """A stable 40-hex commit id for `parts`."""
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].rstrip("-")


class RepoGenerator:
    """Builds the contents of one repository; `now` anchors every timestamp."""

    def __init__(self, spec: RepoSpec, *, seed: int, index: int, now: int,
                 words: v.Words = v.DEFAULT_WORDS) -> None:
        self.spec = spec
        self.seed = seed
        self.index = index
        self.now = now
        self.words = words

    def rng(self, *parts: object) -> random.Random:
        return random.Random("/".join(map(str, (self.seed, self.spec.name, *parts))))

    # -- pull requests and issues share one number sequence -------------------------------
    def contents(self) -> tuple[tuple[Pull, ...], tuple[Issue, ...]]:
        spec = self.spec
        prs = spec.open_prs + spec.closed_prs
        total = prs + spec.issues
        kinds = ["pull"] * prs + ["issue"] * spec.issues
        self.rng("kinds").shuffle(kinds)
        step = HISTORY_SECONDS / max(total, 1)
        start = self.now - HISTORY_SECONDS
        created = [int(start + k * step + self.rng("t", k).uniform(0, step * 0.8))
                   for k in range(total)]
        pull_numbers = [k + 1 for k, kind in enumerate(kinds) if kind == "pull"]
        recent = int(spec.open_prs * 0.8)
        open_numbers = set(pull_numbers[len(pull_numbers) - recent:]) if recent else set()
        older = pull_numbers[: len(pull_numbers) - recent]
        open_numbers |= set(self.rng("open").sample(older, spec.open_prs - recent))
        # The first open pull request of a large GitOps repository touches every app:
        # a real "files changed" list that needs several pages.
        sweeping = (min(open_numbers) if spec.kind == "gitops" and prs >= 100 and open_numbers
                    else None)
        pulls, issues = [], []
        for k, kind in enumerate(kinds):
            number = k + 1
            if kind == "pull":
                pulls.append(self.pull(number, created[k], number in open_numbers,
                                       sweeping=number == sweeping))
            else:
                issues.append(self.issue(number, created[k]))
        return tuple(pulls), tuple(issues)

    def _title(self, rng: random.Random) -> tuple[str, str, bool, str, str]:
        """(title, app, is_dependency_bump, env, template)."""
        kind = self.spec.kind
        app = rng.choice(self.words.apps) if kind in ("gitops", "charts", "docs") \
            else self.spec.name
        env = rng.choice(self.words.envs)
        dependency = kind != "docs" and rng.random() < 0.2
        if dependency:
            template = rng.choice(v.DEPENDENCY_TITLES)
        elif kind in ("gitops", "charts"):
            template = rng.choice(v.GITOPS_TITLES)
        elif kind == "docs":
            template = rng.choice(v.DOCS_TITLES)
        else:
            template = rng.choice(v.SERVICE_TITLES)
        title = template.format(
            app=app, env=env, version=f"1.{rng.randint(10, 60)}.{rng.randint(0, 9)}",
            version_from=f"1.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
            replicas=rng.choice((6, 8, 12, 16)), memory=rng.choice((256, 512, 1024)),
            feature=rng.choice(v.FEATURES), bug=rng.choice(v.BUGS),
            module=rng.choice(v.MODULES), dependency=rng.choice(v.DEPENDENCIES))
        return title, app, dependency, env, template

    def _files(self, rng: random.Random, app: str, env: str,
               dependency: bool) -> tuple[FileChange, ...]:
        kind = self.spec.kind
        if dependency:
            paths = {"web": ["package.json", "package-lock.json"],
                     "service": ["go.mod", "go.sum"]}.get(kind, [".github/workflows/ci.yml"])
        elif kind == "gitops":
            paths = [f"apps/{env}/{app}/values.yaml"]
            if rng.random() < 0.4:
                paths.append(f"apps/{env}/{app}/kustomization.yaml")
            if rng.random() < 0.3:
                paths.append(f"clusters/{rng.choice(self.words.clusters)}/apps/{app}.yaml")
        elif kind == "charts":
            paths = [f"charts/{app}/values-{env}.yaml", f"charts/{app}/Chart.yaml"]
            if rng.random() < 0.5:
                paths.append(f"charts/{app}/templates/deployment.yaml")
        elif kind == "web":
            page = rng.choice(("Cart", "Checkout", "Payment", "Confirmation"))
            paths = [f"src/pages/{page}.tsx", f"src/components/{page}Summary.tsx",
                     f"src/components/__tests__/{page}Summary.test.tsx"][: rng.randint(1, 3)]
        elif kind == "docs":
            paths = [f"docs/runbooks/{app}.md"]
        else:
            module = rng.choice(v.MODULES)
            paths = [f"internal/{module}/{module}.go", f"internal/{module}/{module}_test.go",
                     "cmd/server/main.go", "deploy/helm/values.yaml"][: rng.randint(1, 4)]
        return tuple(FileChange(p, "modified", rng.randint(1, 60), rng.randint(0, 30))
                     for p in paths)

    def pull(self, number: int, created: int, is_open: bool, *, sweeping: bool = False) -> Pull:
        rng = self.rng("pull", number)
        title, app, dependency, env, template = self._title(rng)
        files = self._files(rng, app, env, dependency)
        if sweeping:
            title = "Migrate every app to ingress class nginx-internal"
            files = tuple(FileChange(f"apps/{e}/{a}/{name}", "modified", 3, 1)
                          for a in self.words.apps for e in self.words.envs
                          for name in ("values.yaml", "ingress.yaml", "kustomization.yaml",
                                       "network-policy.yaml"))
        bot = "renovate[bot]" if self.spec.kind in ("gitops", "charts") else "dependabot[bot]"
        humans = self.words.humans
        author = bot if dependency else rng.choice(humans)
        others = [h for h in humans if h != author]
        updated = min(self.now - 60, created + int(rng.uniform(0.1, 1.0) * (self.now - created)))
        draft = is_open and not dependency and rng.random() < 0.1
        requested: list[str] = []
        verdicts: list[tuple[str, str]] = []
        merged = not is_open and rng.random() < 0.75
        choice = rng.random()
        reviewers = rng.sample(others, 3)
        if is_open and not draft:
            if choice < 0.45:  # waiting for review, perhaps after a drive-by comment
                requested = reviewers[: rng.randint(1, 2)]
                if rng.random() < 0.3:
                    verdicts = [(reviewers[2], "COMMENTED")]
            elif choice < 0.7:
                verdicts = [(reviewers[0], "APPROVED")]
                requested = reviewers[1:2] if rng.random() < 0.3 else []
            elif choice < 0.9:
                verdicts = [(reviewers[0], "CHANGES_REQUESTED")]
                requested = reviewers[1:2] if rng.random() < 0.5 else []
            else:
                verdicts = [(reviewers[0], "CHANGES_REQUESTED"), (reviewers[0], "APPROVED")]
        elif merged:
            verdicts = [(r, "APPROVED") for r in reviewers[: rng.randint(1, 2)]]
        elif not is_open and choice < 0.5:
            verdicts = [(reviewers[0], "CHANGES_REQUESTED")]
        closed = None if is_open else min(self.now - 30, updated + rng.randint(60, 3 * DAY))
        span = max(1, (closed or updated) - created)
        reviews = tuple(Review(id=(2_500_000_000 + self.index * 1_000_000 + number * 10 + k),
                               reviewer=who, state=state,
                               submitted_at=created + span * (k + 1) // (len(verdicts) + 1))
                        for k, (who, state) in enumerate(verdicts))
        labels = self._labels(rng, app, env, template, dependency, is_open, len(files))
        if requested and "needs-review" not in labels and rng.random() < 0.3:
            labels = (*labels, "needs-review")
        body = (f"## What\n{title}.\n\n## Why\nRequested by the {self.spec.team} team.\n\n"
                f"## Rollout\nArgo CD auto-sync on merge; staging first.\n\n- [x] tests pass\n")
        return Pull(
            number=number, id=2_000_000_000 + self.index * 100_000 + number,
            issue_id=3_000_000_000 + self.index * 100_000 + number,
            title=title, body=body, author=author, state="open" if is_open else "closed",
            merged=merged, draft=draft, labels=labels, requested_reviewers=tuple(requested),
            reviews=reviews, files=files,
            head_ref=(f"{author.split('[')[0]}/{_slug(title)}-{number}" if dependency
                      else f"{_slug(title)}-{number}"),
            base_ref="main" if self.spec.kind != "service" or rng.random() < 0.9
            else "release/2026.08",
            head_sha=sha(self.spec.name, number, "head"), base_sha=sha(self.spec.name, "main"),
            created_at=created, updated_at=max(updated, closed or 0),
            closed_at=closed, merged_at=closed if merged else None,
            comments=rng.randint(0, 12), review_comments=rng.randint(0, 8),
            commits=rng.randint(1, 6))

    def _labels(self, rng: random.Random, app: str, env: str, template: str, dependency: bool,
                is_open: bool, file_count: int) -> tuple[str, ...]:
        known = self.words.labels
        team = (self.words.app_teams.get(app, app.split("-")[0])
                if self.spec.kind in ("gitops", "charts") else self.spec.team)
        labels = [f"team:{team}"] if f"team:{team}" in known else []
        if dependency:
            labels.append("dependencies")
        elif "Fix" in template or "Handle" in template or "{bug}" in template:
            labels.append("bug")
        elif "Add" in template or "enable" in template:
            labels.append("enhancement")
        if self.spec.kind in ("gitops", "charts") and f"env:{env}" in known:
            labels.append(f"env:{env}")
        labels.append("size/S" if file_count < 3 else "size/M" if file_count < 20 else "size/L")
        if rng.random() < 0.05:
            labels.append("security")
        if is_open and rng.random() < 0.04:
            labels.append("do-not-merge")
        return tuple(labels)

    def issue(self, number: int, created: int) -> Issue:
        rng = self.rng("issue", number)
        words = self.words
        app = rng.choice(words.apps) if self.spec.kind in ("gitops", "charts") else self.spec.name
        title = rng.choice((f"{app} {rng.choice(v.BUGS)} in {rng.choice(words.envs)}",
                            f"Alert: {app} error rate above SLO",
                            f"Flaky test in {rng.choice(v.MODULES)}",
                            f"Request: {rng.choice(v.FEATURES)} for {app}"))
        is_open = rng.random() < 0.6
        updated = min(self.now - 60, created + int(rng.uniform(0.1, 1.0) * (self.now - created)))
        closed = None if is_open else updated
        labels = ["bug" if "Request" not in title else "enhancement"]
        if f"team:{self.spec.team}" in words.labels:
            labels.append(f"team:{self.spec.team}")
        return Issue(
            number=number, id=3_000_000_000 + self.index * 100_000 + number, title=title,
            body=f"Seen on {rng.choice(words.clusters)}. Steps and logs below.\n",
            author=rng.choice(words.humans), state="open" if is_open else "closed",
            state_reason=None if is_open else rng.choice(("completed", "not_planned")),
            labels=tuple(labels), assignees=tuple(rng.sample(words.humans, rng.randint(0, 2))),
            comments=rng.randint(0, 20), created_at=created, updated_at=updated,
            closed_at=closed)

    # -- workflow runs ----------------------------------------------------------------------
    def runs(self, pulls: tuple[Pull, ...]) -> tuple[Run, ...]:
        count = self.spec.runs
        names = {"gitops": ("Validate manifests", "Deploy"), "charts": ("Validate manifests",),
                 "docs": ("CI",)}.get(self.spec.kind, ("CI", "CI", "CI", "Deploy"))
        runs: list[Run] = []
        huge_pending = self.spec.name == self.words.huge_log_repo
        for k in range(count, 0, -1):  # newest first, so "the newest failure" is easy to pick
            rng = self.rng("run", k)
            workflow = rng.choice(names)
            path, job_specs = v.WORKFLOWS[workflow]
            created = self.now - RUN_HISTORY_SECONDS + k * RUN_HISTORY_SECONDS // (count + 1)
            event = rng.choices(("push", "pull_request", "schedule", "workflow_dispatch"),
                                (40, 50, 5, 5))[0]
            pull = rng.choice(pulls) if pulls and event == "pull_request" else None
            status = "in_progress" if k == count else "queued" if k == count - 1 else "completed"
            conclusion = (None if status != "completed" else rng.choices(
                ("success", "failure", "cancelled", "skipped"), (75, 17, 5, 3))[0])
            app = (pull.title.split(":")[0] if pull and ":" in pull.title
                   else rng.choice(self.words.apps) if self.spec.kind in ("gitops", "charts")
                   else self.spec.name)
            huge = conclusion == "failure" and huge_pending
            huge_pending = huge_pending and not huge
            jobs, failure = self._jobs(rng, k, job_specs, status, conclusion, app, huge)
            run_id = 9_100_000_000 + self.index * 1_000_000 + k
            title = (pull.title if pull else "Nightly validation" if event == "schedule"
                     else f"Merge pull request #{rng.randint(1, 900)} from "
                          f"{self.words.owner}/{app}")
            runs.append(Run(
                id=run_id, run_number=k, workflow=workflow, workflow_path=path,
                workflow_id=70_000_000 + self.index * 10 + sorted(v.WORKFLOWS).index(workflow),
                head_branch=pull.head_ref if pull else "main",
                head_sha=pull.head_sha if pull else sha(self.spec.name, "run", k),
                event=event, status=status, conclusion=conclusion, display_title=title,
                actor=pull.author if pull else rng.choice(self.words.humans), created_at=created,
                updated_at=created + rng.randint(40, 900),
                pull_numbers=(pull.number,) if pull else (), jobs=jobs, app=app,
                failure=failure))
        return tuple(reversed(runs))

    def _jobs(self, rng: random.Random, k: int,
              job_specs: tuple[tuple[str, tuple[str, ...]], ...], status: str,
              conclusion: str | None, app: str,
              huge: bool) -> tuple[tuple[Job, ...], tuple[str, ...]]:
        failing_job = rng.randrange(len(job_specs)) if conclusion == "failure" else -1
        jobs: list[Job] = []
        failure: tuple[str, ...] = ()
        for j, (job_name, steps) in enumerate(job_specs):
            failures = self.words.failures
            candidates = [s for s, name in enumerate(steps) if name in failures]
            fail_at = rng.choice(candidates) if j == failing_job and candidates else -1
            built, job_conclusion = [], conclusion if j == failing_job else (
                "success" if conclusion == "failure" else conclusion)
            for s, name in enumerate(steps):
                if status != "completed":
                    step_conclusion = None
                elif fail_at >= 0 and s > fail_at and name != "Complete job":
                    step_conclusion = "skipped"
                elif s == fail_at:
                    step_conclusion = "failure"
                    failure = tuple(line.format(app=app) for line in failures[name])
                else:
                    step_conclusion = job_conclusion if job_conclusion != "failure" else "success"
                lines = (HUGE_LOG_LINES if huge and s == fail_at
                         else rng.randint(40, 400) if s == fail_at else rng.randint(5, 60))
                built.append(Step(s + 1, name, step_conclusion, lines))
            jobs.append(Job(id=(9_100_000_000 + self.index * 1_000_000 + k) * 10 + j,
                            name=job_name, conclusion=job_conclusion if status == "completed"
                            else None, steps=tuple(built)))
        return tuple(jobs), failure
