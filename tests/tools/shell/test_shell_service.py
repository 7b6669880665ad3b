"""ShellService.run: the use case behind the MCP tool, without the transport."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pilothouse.tools.shell import ShellService, sign_approval

SECRET = "service-secret"


@pytest.fixture
def service(tmp_path: Path) -> ShellService:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("it's here\n")
    policy = tmp_path / "policy.toml"
    policy.write_text('[[rules]]\ncommand = "frobnicate"\naction = "allow"\nreason = "test"\n')
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path),
           "FAKE_TOKEN": "sekrit-value"}
    return ShellService(workspace, policy_file=policy, approval_secret=SECRET, base_env=env,
                        max_timeout_seconds=5)


def test_allowed_command_runs(service: ShellService) -> None:
    result = service.run("echo hi | tr a-z A-Z")
    assert (result["status"], result["stdout"], result["exit_code"]) == ("ok", "HI\n", 0)
    assert result["policy"]["action"] == "allow"


def test_ask_command_needs_the_exact_approval(service: ShellService) -> None:
    result = service.run("rm README.md")
    assert result["status"] == "needs_approval"
    assert "`rm README.md`" in result["guidance"]
    assert (service.workspace / "README.md").exists()
    evidence = service.evidence("rm README.md").bound()
    token = sign_approval(SECRET, "rm README.md", evidence=evidence)
    done = service.run("rm README.md", approval_token=token)
    assert done["status"] == "ok"
    assert not (service.workspace / "README.md").exists()


def test_denied_command_is_refused_even_with_a_valid_token(service: ShellService) -> None:
    result = service.run("sudo ls", approval_token=sign_approval(SECRET, "sudo ls"))
    assert result["status"] == "refused"
    assert "privilege escalation" in result["reason"]
    assert "run it themselves" in result["guidance"]


def test_allowed_command_does_not_spend_a_token(service: ShellService) -> None:
    token = sign_approval(SECRET, "ls")
    assert service.run("ls", approval_token=token)["status"] == "ok"
    service.verifier.verify(token, "ls")  # still unspent


def test_missing_program_is_reported_with_install_hints(service: ShellService) -> None:
    result = service.run("frobnicate --all")
    assert result["status"] == "error" and result["exit_code"] == 127
    assert "apt-cache search frobnicate" in result["guidance"]


def test_quoting_mistake_is_retried_only_when_unambiguous(service: ShellService) -> None:
    fixed = service.run("grep it's README.md")
    assert fixed["status"] == "ok" and fixed["stdout"] == "it's here\n"
    assert fixed["retried_from"] == "grep it's README.md"
    assert "instead" not in fixed["guidance"]  # said once, by the view's note
    ambiguous = service.run('grep "it here README.md')
    assert ambiguous["status"] == "refused"
    assert "send one of" in ambiguous["guidance"]


def test_failure_carries_stderr_and_guidance(service: ShellService) -> None:
    result = service.run("ls missing-file")
    assert result["status"] == "error" and result["exit_code"] == 2
    assert result["reason"].startswith("exit status 2: ls: cannot access")
    assert "does not exist" in result["guidance"]


def test_a_search_that_found_nothing_is_an_answer_not_a_failure(service: ShellService) -> None:
    # grep's exit status 1 with nothing on stderr: no line matched. Its 2 is an error.
    result = service.run("grep -rn absent-word .")
    assert (result["status"], result["exit_code"], result["reason"]) == (
        "ok", 1, "no lines matched")
    assert "try again" not in result["guidance"]
    assert service.run("grep absent-word missing.txt")["status"] == "error"
    # Only the program whose status is the command's counts.
    assert service.run("grep -q here README.md && ls missing-file")["status"] == "error"


def test_not_a_git_repository_is_explained(service: ShellService) -> None:
    result = service.run("git status")
    assert result["status"] == "error"
    assert "not a git repository" in result["guidance"]


def test_secret_values_are_redacted_from_stderr_too(service: ShellService) -> None:
    result = service.run("ls sekrit-value")
    assert "sekrit-value" not in result["stderr"] + result["reason"]
    assert "[REDACTED]" in result["stderr"]


def test_timeout_is_capped_and_reported(service: ShellService) -> None:
    result = service.run("sleep 30", timeout_seconds=100)
    assert result["status"] == "timeout"
    assert 4.5 < result["duration_seconds"] < 8
    assert "capped at 5" in result["guidance"]


def test_workspace_must_exist_and_not_be_the_root(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        ShellService(tmp_path / "absent")
    with pytest.raises(ValueError, match="filesystem root"):
        ShellService("/")


def test_repository_config_cannot_make_git_status_run_a_program(service: ShellService) -> None:
    subprocess.run(["git", "init", "-q"], cwd=service.workspace, check=True)
    marker = service.workspace / "fsmonitor-ran"
    # A cloned repository may carry this; the agent itself could never write it (denied).
    subprocess.run(["git", "config", "core.fsmonitor", f"touch {marker}"],
                   cwd=service.workspace, check=True)
    assert service.run("git status")["status"] == "ok"
    assert not marker.exists()


def test_an_approval_is_bound_to_the_files_the_command_names(
    service: ShellService, tmp_path: Path
) -> None:
    canary = tmp_path / "canary.txt"
    script = service.workspace / "step.sh"
    script.write_text(f"echo ran >> {canary}\n")
    approved = service.evidence("bash step.sh")
    assert [f.path for f in approved.files] == ["step.sh"]
    token = sign_approval(SECRET, "bash step.sh", evidence=approved.bound())
    script.write_text(f"echo changed >> {canary}\n")

    refused = service.run("bash step.sh", approval_token=token)
    assert refused["status"] == "needs_approval" and refused["kind"] == "EvidenceChanged"
    assert "step.sh changed" in refused["reason"] and "Nothing ran" in refused["reason"]
    assert refused["evidence"]["evidence"] != approved.fingerprint
    assert not canary.exists()

    fresh = sign_approval(SECRET, "bash step.sh", evidence=refused["evidence"])
    assert service.run("bash step.sh", approval_token=fresh)["status"] == "ok"
    assert canary.read_text() == "changed\n"


def test_a_token_without_evidence_does_not_cover_a_named_file(service: ShellService) -> None:
    refused = service.run("rm README.md", approval_token=sign_approval(SECRET, "rm README.md"))
    assert refused["kind"] == "EvidenceChanged"
    assert "README.md (sha256 " in refused["reason"] and "not part of the approval" in \
        refused["reason"]
    assert (service.workspace / "README.md").exists()
