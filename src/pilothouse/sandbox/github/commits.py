"""A repository's main line: one squash-merge commit per merged pull request, oldest first.

The commit of pull request #N is its `merge_commit_sha`, so `GET .../commits/{sha}` and
`GET .../pulls/{N}` describe the same change, and the Argo CD sandbox deploys these very SHAs
(`sandbox.argocd.deploys`): a deploy's revision leads to its commit and its pull request.
`main_line_of` rebuilds one repository of a world's organisation without the rest, for the
Argo CD sandbox, which has no GitHub world of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pilothouse.sandbox.company import ACME
from pilothouse.sandbox.github.generate import RepoGenerator
from pilothouse.sandbox.github.records import FileChange, Pull, Repo
from pilothouse.sandbox.github.world import WorldSpec
from pilothouse.sandbox.world_description import WorldDescription


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
def main_line_of(name: str, world: WorldDescription = ACME) -> tuple[Commit, ...]:
    """The main line of `world`'s repository `name` (empty if unknown)."""
    spec = WorldSpec.of(world)
    for index, repo_spec in enumerate(spec.repos):
        if repo_spec.name == name:
            generator = RepoGenerator(repo_spec, seed=spec.seed, index=index, now=spec.now,
                                      words=spec.words)
            return main_line(generator.contents()[0])
    return ()


#: The one repository of the default world whose main line the Argo CD sandbox deploys.
SHARED_REPO = ACME.main_line_repo


def shared_main_line_module(world: WorldDescription = ACME) -> str:
    """The source of `sandbox.<world.main_line_module>`: the main line of the world's
    `main_line_repo`, for the Argo CD sandbox, which may not import this package (the sandboxes
    stand alone). Rewrite them with `python -c "from pilothouse.sandbox.github.commits import
    write_shared_main_lines as w; w()"` after changing the generator;
    tests/sandbox/test_sandbox_changes.py checks they agree."""
    repo = world.main_line_repo
    rows = "\n".join(f"    ({c.sha!r}, {c.author!r}, {c.date}, {c.message!r}),"
                     for c in main_line_of(repo, world))
    return ("# ruff: noqa: E501\n"
            f'"""The main line of {world.org}/{repo} (generated; do not edit).\n\n'
            "Written by `sandbox.github.commits.write_shared_main_lines` from the GitHub "
            "sandbox's\ngenerator; the Argo CD sandbox deploys these commits, so each deployed "
            'revision is a\ncommit, and a pull request, in the GitHub sandbox.\n"""\n\n'
            f'REPO = "{repo}"\n'
            "#: The people who commit (sandbox.github.vocabulary.HUMANS).\n"
            f"PEOPLE: tuple[str, ...] = {world.humans!r}\n"
            "#: (sha, author, date as epoch seconds, message), oldest first.\n"
            "COMMITS: tuple[tuple[str, str, int, str], ...] = (\n" + rows + "\n)\n")


def write_shared_main_lines() -> None:
    """Write the main-line module of every world."""
    from pathlib import Path

    from pilothouse.sandbox.worlds import WORLDS

    for world in WORLDS.values():
        target = Path(__file__).resolve().parents[1] / f"{world.main_line_module}.py"
        target.write_text(shared_main_line_module(world))
