"""The run_command use case: policy, approval, execution, redaction and guidance in one place.

`ShellService.run` is what the MCP tool calls; it is plain synchronous code so it can be
tested without a server and run in a worker thread by one. Every answer is a JSON-able dict
with the same keys, whether the command ran, was refused or needs approval.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pilothouse.errors import ApprovalRequired
from pilothouse.redaction import Redactor
from pilothouse.tools.shell.approval import ApprovalVerifier, resolve_secret
from pilothouse.tools.shell.decision import PolicyDecision
from pilothouse.tools.shell.diagnosis import (
    diagnose,
    missing_programs,
    stderr_tail,
    suggest_install,
)
from pilothouse.tools.shell.environment import build_environment
from pilothouse.tools.shell.evidence import CommandEvidence, evidence_of
from pilothouse.tools.shell.executor import ExecutionLimits, ExecutionResult, execute
from pilothouse.tools.shell.near_paths import nearest_missing
from pilothouse.tools.shell.policy import ShellPolicy
from pilothouse.tools.shell.respell import grep_pattern, respelled, single_command

Status = Literal["ok", "refused", "needs_approval", "error", "timeout"]
#: Programs whose exit status 1, with nothing on stderr, is an answer, not a failure: a grep
#: that matched no line, files that differ. Reported as an error, its guidance told the model
#: to fix the arguments of a search that had simply found nothing.
ANSWERING_STATUS_1 = {"grep": "no lines matched", "egrep": "no lines matched",
                      "fgrep": "no lines matched", "diff": "the files differ",
                      "cmp": "the files differ"}


def _result(status: Status, decision: PolicyDecision | None, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "status": status,
        "exit_code": None,
        "stdout": "",
        "stderr": "",
        "reason": "",
        "guidance": "",
    }
    body.update(fields)
    if decision is not None:
        body["command"] = decision.command
        body["policy"] = decision.to_dict()
    return body


class ShellService:
    """Safe shell execution inside one workspace."""

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        policy_file: str | os.PathLike[str] | None = None,
        approval_secret: str | bytes | None = None,
        timeout_seconds: float = 30.0,
        max_timeout_seconds: float = 600.0,
        output_limit_bytes: int = 64_000,
        memory_limit_bytes: int | None = 2 * 1024**3,
        cpu_limit_seconds: int | None = 120,
        max_processes: int | None = 256,
        base_env: Mapping[str, str] | None = None,
        pass_env: Iterable[str] = (),
    ) -> None:
        root = Path(os.path.realpath(workspace))
        if not root.is_dir():
            raise NotADirectoryError(f"Shell workspace {root} is not a directory.")
        if root == Path(root.anchor):
            raise ValueError("The shell workspace cannot be the filesystem root.")
        source = dict(os.environ if base_env is None else base_env)
        self.environment = build_environment(source, workspace=root, pass_through=pass_env)
        self.policy = ShellPolicy(root, policy_file=policy_file, env=self.environment.variables)
        self.verifier = ApprovalVerifier(resolve_secret(approval_secret, source))
        self.redact: Redactor = self.environment.redactor()
        self.default_timeout = timeout_seconds
        self.max_timeout = max_timeout_seconds
        self.limits = ExecutionLimits(
            timeout_seconds=timeout_seconds,
            output_limit_bytes=output_limit_bytes,
            memory_bytes=memory_limit_bytes,
            cpu_seconds=cpu_limit_seconds,
            max_processes=max_processes,
        )

    @property
    def workspace(self) -> Path:
        return self.policy.workspace.root

    def run(
        self, command: str, timeout_seconds: float | None = None, approval_token: str | None = None
    ) -> dict[str, Any]:
        """Check `command`, and run it if allowed or validly approved."""
        decision = self.policy.check(command)
        refused: PolicyDecision | None = None  # the original, when its repair runs instead
        if decision.denied and decision.repaired:
            repaired = self.policy.check(decision.repaired)
            if repaired.allowed:
                refused, decision = decision, repaired
        if decision.denied:
            return _result(
                "refused", decision, reason=decision.reason, guidance=decision.suggestion or ""
            )
        missing = missing_programs(
            [c.argv for step in decision.plan for c in step.commands],
            self.policy.search_path,
            str(self.workspace),
        )
        if missing:
            return _result(
                "error",
                decision,
                exit_code=127,
                reason=f"command not found: {missing[0]}",
                guidance=suggest_install(missing[0], self.policy.search_path),
            )
        if decision.needs_approval:
            if not approval_token:
                return _result(
                    "needs_approval",
                    decision,
                    reason=decision.reason,
                    guidance="Ask the user to approve exactly this command: "
                    f"`{decision.command}`. If they approve, call run_command again with the "
                    "same command and the approval_token their approval produces. Do not "
                    "rephrase the command; a token covers one exact command, once.",
                )
            try:
                approved = self.verifier.verify(approval_token, command)
            except ApprovalRequired as exc:
                return _result(
                    "needs_approval", decision, reason=exc.message, guidance=exc.hint or ""
                )
            changed = self._evidence_changed(command, decision, approved)
            if changed is not None:
                return changed
        result = self._execute(decision, timeout_seconds, refused)
        argv = single_command(decision)
        pattern = grep_pattern(argv) if argv else None
        if argv is None or pattern is None or result["status"] != "ok" \
                or result["exit_code"] != 1:
            return result
        # A lone grep that matched no line: once more as code spells its words; when that
        # finds nothing either, the result names the pattern nothing holds, so a caller need
        # not parse the command again to learn what was searched for in vain.
        return (self._respelled(decision, argv, timeout_seconds, refused)
                or {**result, "unmatched_pattern": pattern})

    def _respelled(self, decision: PolicyDecision, argv: tuple[str, ...],
                   timeout_seconds: float | None,
                   refused: PolicyDecision | None) -> dict[str, Any] | None:
        """A grep (`argv`) for plain words that matched nothing, run again with the words
        spelled as identifiers (`respell`), when the policy allows that as it stands and it
        finds lines."""
        found = respelled(argv)
        if found is None:
            return None
        spelled, words = found
        again = self.policy.check(shlex.join(spelled))
        if not again.allowed:
            return None
        second = self._execute(again, timeout_seconds, None)
        if second["status"] != "ok" or second["exit_code"] != 0:
            return None
        why = [refused.reason] if refused is not None else []
        why.append(f"no line holds '{words}', so its words were searched as code spells "
                   "them, joined and in any case")
        return {**second, "retried_from": (refused or decision).command,
                "retried_because": "; ".join(why)}

    def evidence(self, command: str) -> CommandEvidence:
        """What a person approving `command` here is shown: see `evidence.py`."""
        return evidence_of(command, self.policy.check(command), self.policy.workspace)

    def _evidence_changed(
        self, command: str, decision: PolicyDecision, approved: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The refusal when the files the person approved are not the ones here now."""
        now = evidence_of(command, decision, self.policy.workspace)
        changes = now.changes_since(CommandEvidence.from_dict(approved, command))
        if not changes:
            return None
        return _result(
            "needs_approval",
            decision,
            kind="EvidenceChanged",
            reason="The evidence changed since it was approved: " + "; ".join(changes)
            + ". Nothing ran; you will be asked again.",
            guidance="Call run_command again with the same command (no approval_token): the "
            "user is asked again with the new evidence.",
            evidence=now.to_dict(),
        )

    def _execute(
        self, decision: PolicyDecision, timeout_seconds: float | None,
        refused: PolicyDecision | None,
    ) -> dict[str, Any]:
        requested = self.default_timeout if timeout_seconds is None else float(timeout_seconds)
        timeout = min(max(requested, 1.0), self.max_timeout)
        limits = dataclasses.replace(self.limits, timeout_seconds=timeout)
        outcome = execute(decision.plan, env=self.environment.variables, limits=limits)
        stdout = self._capped(outcome.stdout, outcome.stdout_omitted_bytes, "stdout")
        stderr = self._capped(outcome.stderr, outcome.stderr_omitted_bytes, "stderr")
        # What to do next, only: a repair that ran is said by `retried_from`/`retried_because`
        # (the view's "Ran instead of" line), and said again here it read as a task.
        notes = []
        if requested > self.max_timeout:
            notes.append(f"timeout_seconds was capped at {self.max_timeout:g}.")
        status, reason = self._status(outcome, timeout)
        extra: dict[str, Any] = {"duration_seconds": round(outcome.duration_seconds, 3)}
        if outcome.stdout and not outcome.stdout_omitted_bytes:
            # Counted by code: how many files, matches or commits a listing printed is the
            # answer to "how many", which the model must not count itself.
            extra["stdout_lines"] = len(outcome.stdout.splitlines())
        if status != "ok":
            near = nearest_missing(stderr_tail(outcome.stderr), self.workspace)
            if near is not None:
                extra |= {"missing_path": near.missing, "closest_paths": list(near.closest)}
            notes.append(diagnose(outcome, timeout_seconds=timeout, max_timeout=self.max_timeout,
                                  near=near))
        elif outcome.stdout_omitted_bytes:
            notes.append("Output was truncated; narrow the command (head, grep, a filter).")
        if refused is not None:
            extra["retried_from"] = refused.command
            extra["retried_because"] = refused.reason
        return _result(
            status,
            decision,
            exit_code=outcome.exit_code,
            stdout=stdout,
            stderr=stderr,
            reason=reason,
            guidance=" ".join(notes),
            **extra,
        )

    def _capped(self, text: str, omitted: int, stream: str) -> str:
        text = self.redact(text)
        if not omitted:
            return text
        marker = f"[... {omitted} more bytes of {stream} truncated ...]"
        return f"{text}\n{marker}" if stream == "stdout" else f"{marker}\n{text}"

    def _status(self, outcome: ExecutionResult, timeout: float) -> tuple[Status, str]:
        if outcome.timed_out:
            return "timeout", f"killed after the {timeout:g} s timeout"
        if outcome.exit_code == 0:
            return "ok", ""
        answer = ANSWERING_STATUS_1.get(os.path.basename(outcome.last_program or ""))
        if outcome.exit_code == 1 and answer and not outcome.stderr.strip():
            return "ok", answer
        tail = (
            self.redact(outcome.stderr.strip().splitlines()[-1]) if outcome.stderr.strip() else ""
        )
        return "error", f"exit status {outcome.exit_code}" + (f": {tail}" if tail else "")
