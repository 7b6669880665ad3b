"""A repository's main line: one squash-merge commit per merged pull request, oldest first.

The commit of pull request #N is its `merge_commit_sha`, so `GET .../commits/{sha}` and
`GET .../pulls/{N}` describe the same change, and the Argo CD sandbox deploys these very SHAs
(`sandbox.argocd.deploys`): a deploy's revision leads to its commit and its pull request.
`main_line_of` rebuilds one repository of the default organisation without the rest, for the
Argo CD sandbox, which has no GitHub world of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pilothouse.sandbox.github.generate import RepoGenerator
from pilothouse.sandbox.github.records import FileChange, Pull, Repo
from pilothouse.sandbox.github.vocabulary import HUMANS
from pilothouse.sandbox.github.world import WorldSpec


@dataclass(frozen=True)
class Commit:
    """One commit on `main`: the squash merge of pull request `pull`."""

    sha: str
    parent: str | None
    message: str
    author: str
    date: int
    pull: int
    files: tuple[FileChange, ...]


def merge_sha(pull: Pull) -> str:
    """The SHA GitHub reports as the pull request's `merge_commit_sha` (documents.pull)."""
    return pull.head_sha[::-1]


def main_line(pulls: tuple[Pull, ...]) -> tuple[Commit, ...]:
    """The merged pull requests as commits, oldest first, each the parent of the next."""
    merged = sorted((p for p in pulls if p.merged and p.merged_at is not None),
                    key=lambda p: (p.merged_at, p.number))
    commits: list[Commit] = []
    for pull in merged:
        commits.append(Commit(
            sha=merge_sha(pull), parent=commits[-1].sha if commits else None,
            message=f"{pull.title} (#{pull.number})",
            author=pull.author, date=int(pull.merged_at or 0), pull=pull.number,
            files=pull.files))
    return tuple(commits)


class MainLines:
    """Main lines of a world's repositories, built on first use and kept (a few KB each)."""

    def __init__(self) -> None:
        self._lines: dict[int, tuple[Commit, ...]] = {}
        self._index: dict[int, dict[str, int]] = {}

    def of(self, repo: Repo) -> tuple[Commit, ...]:
        if repo.id not in self._lines:
            line = main_line(repo.pulls)
            self._lines[repo.id] = line
            self._index[repo.id] = {c.sha: k for k, c in enumerate(line)}
        return self._lines[repo.id]

    def position(self, repo: Repo, sha: str) -> int | None:
        """Where commit `sha` (full, or a prefix of 7+ characters) sits on the main line."""
        self.of(repo)
        index = self._index[repo.id]
        if sha in index:
            return index[sha]
        if len(sha) >= 7:
            found = [k for full, k in index.items() if full.startswith(sha)]
            if len(found) == 1:
                return found[0]
        return None


@lru_cache(maxsize=8)
def main_line_of(name: str) -> tuple[Commit, ...]:
    """The main line of the default organisation's repository `name` (empty if unknown)."""
    spec = WorldSpec()
    for index, repo_spec in enumerate(spec.repos):
        if repo_spec.name == name:
            generator = RepoGenerator(repo_spec, seed=spec.seed, index=index, now=spec.now)
            return main_line(generator.contents()[0])
    return ()


#: The one repository whose main line the Argo CD sandbox deploys.
SHARED_REPO = "platform-deployments"


def shared_main_line_module() -> str:
    """The source of `sandbox.main_line_data`: this repository's main line, for the Argo CD
    sandbox, which may not import this package (the sandboxes stand alone). Rewrite it with
    `python -c "from pilothouse.sandbox.github.commits import write_shared_main_line as w; w()"`
    after changing the generator; tests/sandbox/test_sandbox_changes.py checks they agree."""
    rows = "\n".join(f"    ({c.sha!r}, {c.author!r}, {c.date}, {c.message!r}),"
                     for c in main_line_of(SHARED_REPO))
    return ("# ruff: noqa: E501\n"
            f'"""The main line of acme-corp/{SHARED_REPO} (generated; do not edit).\n\n'
            "Written by `sandbox.github.commits.write_shared_main_line` from the GitHub "
            "sandbox's\ngenerator; the Argo CD sandbox deploys these commits, so each deployed "
            'revision is a\ncommit, and a pull request, in the GitHub sandbox.\n"""\n\n'
            f'REPO = "{SHARED_REPO}"\n'
            "#: The people who commit (sandbox.github.vocabulary.HUMANS).\n"
            f"PEOPLE: tuple[str, ...] = {HUMANS!r}\n"
            "#: (sha, author, date as epoch seconds, message), oldest first.\n"
            "COMMITS: tuple[tuple[str, str, int, str], ...] = (\n" + rows + "\n)\n")


def write_shared_main_line() -> None:
    from pathlib import Path

    target = Path(__file__).resolve().parents[1] / "main_line_data.py"
    target.write_text(shared_main_line_module())
