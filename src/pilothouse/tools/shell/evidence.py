"""What a person approves when they approve a command: its text, where it runs, the files it names.

A command such as `bash scripts/deploy.sh` or `kubectl apply -f k8s/app.yaml` is only as safe
as the files it reads, so its approval is bound to them: the evidence is the normalized
command, the working directory and a sha256 of each existing workspace file the command names
(arguments, `--opt=FILE` values and input redirections), capped in count and size. The agent
computes it before asking; the server computes it again just before running and, if any file
changed, runs nothing. Both sides call the same pure function on the same plan the policy
builds, so they agree on which words are files.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pilothouse.tools.shell.approval import normalize_command
from pilothouse.tools.shell.decision import PolicyDecision
from pilothouse.tools.shell.paths import Workspace, path_candidates
from pilothouse.tools.shell.policy import ShellPolicy

#: Files a command's evidence lists; more are counted (and change the fingerprint) but unnamed.
MAX_FILES = 16
#: Bytes of one file that are hashed; a larger file's digest covers this prefix and its size.
MAX_HASHED_BYTES = 8 * 1024 * 1024
SHORT_DIGEST = 12
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class FileDigest:
    """One workspace file as it was when the evidence was taken."""

    path: str  # relative to the workspace, symlinks resolved
    sha256: str  # hex; "unreadable" when the file could not be read
    size: int
    partial: bool = False  # only the first MAX_HASHED_BYTES were hashed

    @property
    def short(self) -> str:
        return self.sha256[:SHORT_DIGEST]

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"path": self.path, "sha256": self.sha256, "bytes": self.size}
        if self.partial:
            body["partial"] = True
        return body

    @classmethod
    def from_dict(cls, body: Mapping[str, Any]) -> FileDigest:
        return cls(str(body["path"]), str(body["sha256"]), int(body.get("bytes", 0)),
                   bool(body.get("partial", False)))


@dataclass(frozen=True)
class CommandEvidence:
    """The command, its working directory and the digests of the files it names."""

    command: str
    cwd: str
    files: tuple[FileDigest, ...] = ()
    omitted: int = 0  # files named beyond MAX_FILES

    @property
    def fingerprint(self) -> str:
        """A short hash of everything above: equal evidence, equal fingerprint."""
        canonical = json.dumps({"command": self.command, "cwd": self.cwd, "omitted": self.omitted,
                                "files": [f.to_dict() for f in self.files]}, sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def bound(self) -> dict[str, Any]:
        """What an approval token carries besides the command: the directory and the files."""
        return {"cwd": self.cwd, "files": [f.to_dict() for f in self.files],
                "omitted": self.omitted}

    def to_dict(self) -> dict[str, Any]:
        return {"command": self.command, **self.bound(), "evidence": self.fingerprint}

    @classmethod
    def from_dict(cls, body: Mapping[str, Any], command: str | None = None) -> CommandEvidence:
        """Read `to_dict()` or `bound()` back (`command` when the body has none)."""
        return cls(normalize_command(str(body.get("command") or command or "")),
                   str(body.get("cwd") or ""),
                   tuple(FileDigest.from_dict(f) for f in body.get("files") or ()),
                   int(body.get("omitted") or 0))

    def changes_since(self, approved: CommandEvidence) -> list[str]:
        """What differs from `approved`, one sentence per file (empty when nothing did)."""
        changes = []
        if approved.cwd and approved.cwd != self.cwd:
            changes.append(f"the working directory is now {self.cwd} (approved: {approved.cwd})")
        before = {f.path: f for f in approved.files}
        now = {f.path: f for f in self.files}
        for path in sorted(before.keys() | now.keys()):
            old, new = before.get(path), now.get(path)
            if old is None and new is not None:
                changes.append(f"{path} (sha256 {new.short}) was not part of the approval")
            elif new is None and old is not None:
                changes.append(f"{path} is gone or no longer named (approved sha256 {old.short})")
            elif old is not None and new is not None and old != new:
                changes.append(f"{path} changed (approved sha256 {old.short}, now {new.short})")
        if approved.omitted != self.omitted:
            changes.append(f"{self.omitted} more files are named beyond the first {MAX_FILES} "
                           f"(approved: {approved.omitted})")
        return changes


def digest_file(path: Path, limit: int = MAX_HASHED_BYTES) -> tuple[str, int, bool]:
    """(sha256 hex of the first `limit` bytes, size, whether it was cut) of one file."""
    digest = hashlib.sha256()
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            left = limit
            while left > 0 and (chunk := handle.read(min(_CHUNK, left))):
                digest.update(chunk)
                left -= len(chunk)
    except OSError:
        return "unreadable", 0, False
    if size > limit:
        digest.update(f"|size={size}".encode())
    return digest.hexdigest(), size, size > limit


def _named_paths(decision: PolicyDecision, workspace: Workspace) -> Iterator[Path]:
    """Every existing regular workspace file a word or an input redirection of the plan names."""
    for step in decision.plan:
        for planned in step.commands:
            words = [c for word in planned.argv for c in path_candidates(word)]
            paths = [workspace.resolve(word, step.cwd) for word in words]
            paths += [r.path for r in planned.redirects if r.mode == "read" and r.path]
            for path in paths:
                if (workspace.contains(path) and path != workspace.root and path.is_file()
                        and not workspace.is_secret(path)):
                    yield path


def evidence_of(command: str, decision: PolicyDecision, workspace: Workspace) -> CommandEvidence:
    """The evidence of `command`, from the plan the policy built for it."""
    unique = sorted({p.relative_to(workspace.root).as_posix(): p
                     for p in _named_paths(decision, workspace)}.items())
    files = []
    for relative, path in unique[:MAX_FILES]:
        sha, size, partial = digest_file(path)
        files.append(FileDigest(relative, sha, size, partial))
    return CommandEvidence(normalize_command(command), str(workspace.root), tuple(files),
                           max(0, len(unique) - MAX_FILES))


def command_evidence(
    command: str,
    *,
    workspace: str | os.PathLike[str],
    policy_file: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> CommandEvidence:
    """The evidence of `command` run in `workspace`: the pure function the agent side calls."""
    policy = ShellPolicy(workspace, policy_file=policy_file, env=env)
    return evidence_of(command, policy.check(command), policy.workspace)
