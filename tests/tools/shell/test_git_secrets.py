"""A secret file git tracks is read by git as `cat` reads it: the policy judges git the same.

Every repository here is a real one made with git in a temporary folder; the commands are
judged by the real policy, and the repaired ones run for real (read-only git commands on that
folder) to show that what runs prints no secret.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pilothouse.tools.shell import check_command
from pilothouse.tools.shell.policy import ShellPolicy

ENV = {"HOME": "/root", "PATH": "/usr/local/bin:/usr/bin:/bin"}
SECRET = "canary-token-value-7f3a"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                           "-c", "commit.gpgsign=false", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def one_commit(root: Path) -> Path:
    """A repository at `root` whose one commit tracks `a.txt`, no secret."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    (root / "a.txt").write_text("x\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "a")
    return root


def decide(command: str, root: Path) -> str:
    return check_command(command, workspace=root, env=ENV).action


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose first commit tracked `.env`; the second removed it from git and
    from the working tree, so only git's history holds it."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".env").write_text(f"TOKEN={SECRET}\n")
    (root / "src" / "app.py").write_text("TOKEN = read_env('TOKEN')\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    git(root, "rm", "-q", ".env")
    git(root, "commit", "-q", "-m", "forget the env file")
    return root


def test_an_object_named_by_a_secret_path_is_refused_like_cat(repo: Path) -> None:
    blob = git(repo, "rev-parse", "HEAD~1:.env").strip()
    for command in ("git show HEAD~1:.env", "git show main~1:./.env",
                    "git cat-file -p HEAD~1:.env", f"git cat-file blob {blob[:10]}",
                    f"git show {blob}", "git log -L1,1:.env HEAD~1",
                    "git diff HEAD~1:.env HEAD:src/app.py"):
        decision = check_command(command, workspace=repo, env=ENV)
        assert decision.denied, command
        assert "secret" in decision.reason, command
    # What names no secret is read as before.
    assert decide("git show HEAD:src/app.py", repo) == "allow"
    assert decide("git cat-file -p HEAD", repo) == "allow"
    # Object names on the input cannot be checked: the refusal says how to name one.
    batch = check_command("git cat-file --batch", workspace=repo, env=ENV)
    assert batch.denied and "git cat-file -p" in (batch.suggestion or "")


def test_a_patch_or_grep_over_a_committed_secret_is_repaired_to_leave_it_out(
    repo: Path,
) -> None:
    for command in ("git log -p", "git show HEAD~1", "git log --all -S TOKEN",
                    "git grep TOKEN HEAD~1", "git diff HEAD~1 HEAD"):
        decision = check_command(command, workspace=repo, env=ENV)
        assert decision.denied, command
        assert decision.reason == (f"git {command.split()[1]} would read .env, which git "
                                   "tracks and which holds secrets"), command
        assert decision.repaired == f"{command} -- ':(top,exclude).env'", command
        assert decide(decision.repaired, repo) == "allow", decision.repaired
        # The repaired command runs, and prints no line of the secret.
        shown = git(repo, *decision.repaired.split()[1:-1], ":(top,exclude).env")
        assert SECRET not in shown, command
    # Without the repair, git would have printed it: the refusal is not for nothing.
    assert SECRET in git(repo, "log", "-p")


def test_what_does_not_read_a_secret_is_allowed(repo: Path, tmp_path: Path) -> None:
    # Names, counts and pathspecs that leave the secret out read none of it.
    for command in ("git log --oneline", "git show --stat HEAD~1", "git diff --name-only HEAD~1",
                    "git grep TOKEN HEAD~1 -- src", "git log -p -- src/app.py",
                    "git grep TOKEN -- . ':!.env'", "git status", "git ls-files"):
        assert decide(command, repo) == "allow", command
    # A path given without `--` narrows what git reads, as git itself decides.
    assert decide("git grep TOKEN src", repo) == "allow"
    # A repository that tracks no secret is not slowed by refusals.
    clean = one_commit(tmp_path / "clean")
    for command in ("git log -p", "git grep x", "git show HEAD"):
        assert decide(command, clean) == "allow", command
    # Outside any repository git has nothing to print.
    outside = tmp_path / "plain"
    outside.mkdir()
    assert decide("git grep x", outside) == "allow"


def test_a_path_given_without_a_separator_gets_the_exact_command_to_send(repo: Path) -> None:
    (repo / "config").mkdir()
    (repo / "config" / ".env").write_text(f"TOKEN={SECRET}\n")
    git(repo, "add", "-f", "config/.env")
    decision = check_command("git grep TOKEN config", workspace=repo, env=ENV)
    # `--` after a path would make git read the path as a revision: no repair, a command.
    assert decision.denied and decision.repaired is None
    assert "-- <paths> ':(top,exclude)config/.env'" in (decision.suggestion or "")
    # Untracked files are not git's to check: grep -r is, with its own secret walk.
    untracked = check_command("git grep --untracked TOKEN", workspace=repo, env=ENV)
    assert untracked.denied and "grep -rn" in (untracked.suggestion or "")


def test_a_new_commit_of_a_secret_is_seen_by_the_next_command(tmp_path: Path) -> None:
    root = one_commit(tmp_path / "ws")
    policy = ShellPolicy(root, env=ENV)
    assert policy.check("git log -p").action == "allow"
    assert policy.check("git log -p").action == "allow"  # the listing is kept

    (root / "deploy.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    git(root, "add", ".")
    assert policy.check("git diff --cached").denied  # staged: the index holds it
    git(root, "commit", "-q", "-m", "key")
    decision = policy.check("git log -p")
    assert decision.denied and "deploy.pem" in decision.reason


def test_git_run_elsewhere_than_its_folder_asks(repo: Path) -> None:
    assert decide("git -C src log -p", repo) == "deny"  # -C: that folder's repository
    assert decide("git --git-dir=.git log -p", repo) == "ask"


def test_git_lists_only_the_secret_files_however_large_the_history(tmp_path: Path) -> None:
    from pilothouse.tools.shell.git_secrets import list_tracked_secrets, secret_pathspecs

    # The policy's patterns as git pathspecs: anywhere in the tree, folders whole.
    assert secret_pathspecs(["*/.aws/credentials", "*/.ssh/*", ".env", "/etc/shadow"]) == [
        ":(glob,icase)**/.aws/credentials", ":(glob,icase)**/.ssh/**", ":(glob,icase)**/.env"]
    root = one_commit(tmp_path / "ws")
    (root / "ops" / ".aws").mkdir(parents=True)
    (root / "ops" / ".aws" / "credentials").write_text("aws_secret_access_key=x\n")
    (root / "ops" / "readme.txt").write_text("x\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "ops")
    policy = ShellPolicy(root, env=ENV)
    listing = list_tracked_secrets(root, policy.workspace.secret_patterns,
                                   lambda p: policy.workspace.is_secret(Path(p), p))
    assert listing.paths == ("ops/.aws/credentials",) and len(listing.blobs) == 1
