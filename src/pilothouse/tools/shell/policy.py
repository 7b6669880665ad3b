"""Decide allow / ask / deny for a command line, part by part, and build its run plan.

`check_command` is the pure entry point the agent side uses to decide whether to interrupt
for approval: it has no side effects (it reads the filesystem only to resolve paths, symlinks
and globs, and asks git which secret files it tracks) and gives the same answer the MCP
server will.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from pilothouse.tools.shell import guards
from pilothouse.tools.shell.arguments import path_roles
from pilothouse.tools.shell.decision import (
    PartDecision,
    PlannedCommand,
    PlannedRedirect,
    PlannedStep,
    PolicyDecision,
    RedirectMode,
)
from pilothouse.tools.shell.default_policy import default_rules
from pilothouse.tools.shell.expansion import (
    ExpansionError,
    expand_target,
    expand_words,
    expansion_variables,
)
from pilothouse.tools.shell.findings import Finding, combine
from pilothouse.tools.shell.git_secrets import TrackedSecrets, git_state, list_tracked_secrets
from pilothouse.tools.shell.paths import Access, Workspace
from pilothouse.tools.shell.repair import describe_repairs, quoting_repairs
from pilothouse.tools.shell.rules import RuleSet, load_rules_file
from pilothouse.tools.shell.syntax import Redirect, ShellSyntaxError, SimpleCommand, parse
from pilothouse.tools.shell.tree_walk import Skips, TreeWalk, walk_tree

DOWNLOADERS = frozenset({
    "curl", "wget", "fetch", "aria2c", "nc", "ncat", "socat", "ftp", "tftp", "http", "https",
    "GET",
})
INTERPRETERS = (
    "bash", "sh", "zsh", "dash", "ksh", "fish", "python", "python3*", "perl", "ruby", "node",
    "php", "lua", "deno", "bun", "pwsh", "source", ".",
)
WRAPPERS = frozenset({"xargs", "env", "timeout", "nice", "nohup", "stdbuf", "ionice"})
_FORK_BOMB = re.compile(r"(\S+)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1")
_MAX_DEPTH = 4
#: Repository folders whose secret listing a long-running server keeps.
_KEPT_LISTINGS = 32
ASK_SUGGESTION = (
    "Ask the user to approve this exact command, then call run_command again with the "
    "approval_token they sign."
)
DENY_SUGGESTION = "This never runs here. Ask the user to run it themselves if it is needed."


def _is_interpreter(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in INTERPRETERS)


class ShellPolicy:
    """Rules + workspace: turns command strings into decisions with run plans."""

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        rules: RuleSet | None = None,
        policy_file: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        base = rules or default_rules()
        self.rules = load_rules_file(Path(policy_file), base) if policy_file else base
        self.env = dict(os.environ if env is None else env)
        self.workspace = Workspace.create(
            workspace, self.rules.secret_patterns, home=self.env.get("HOME")
        )
        self.search_path = self.env.get("PATH", os.defpath)
        #: The secrets git tracks, per repository folder, with the state they were listed at.
        self._tracked: dict[Path, tuple[tuple[str, ...], TrackedSecrets]] = {}

    def git_tracked(self, directory: Path) -> TrackedSecrets:
        """The secret files git tracks for the repository at `directory`, listed again only
        when its refs or index changed (a listing reads every ref's history); the listings of
        the newest `_KEPT_LISTINGS` folders are kept."""
        state = git_state(directory)
        if not state:  # not a repository, or git did not answer in time
            return TrackedSecrets(too_large=state is None)
        kept = self._tracked.get(directory)
        if kept is not None and kept[0] == state:
            return kept[1]
        listing = list_tracked_secrets(Path(state[0]), self.workspace.secret_patterns,
                                       lambda p: self.workspace.is_secret(Path(p), p))
        if not listing.too_large:
            self._tracked.pop(directory, None)
            self._tracked[directory] = (state, listing)
            while len(self._tracked) > _KEPT_LISTINGS:
                del self._tracked[next(iter(self._tracked))]
        return listing

    def check(self, command: str) -> PolicyDecision:
        """Decide on `command` as if it ran in the workspace root."""
        return self._check(command, self.workspace.root, depth=0)

    def command_name(self, program: str, cwd: Path) -> str:
        """The name rules match: the basename, unless a path points at some other binary."""
        if "/" not in program:
            return program
        base = os.path.basename(program)
        found = shutil.which(base, path=self.search_path)
        same = found is not None and os.path.realpath(found) == str(
            self.workspace.resolve(program, cwd)
        )
        return base if same else program

    def _check(self, command: str, cwd: Path, depth: int) -> PolicyDecision:
        if _FORK_BOMB.search(command):
            return PolicyDecision(
                "deny", "this is a fork bomb", command.strip(), suggestion=DENY_SUGGESTION
            )
        try:
            parsed = parse(command)
        except ShellSyntaxError as exc:
            repairs = quoting_repairs(command, exc)
            return PolicyDecision(
                "deny",
                f"cannot parse the command: {exc}",
                " ".join(command.split()),
                suggestion=describe_repairs(repairs) or f"Rewrite it: {exc.reason}.",
                repaired=repairs[0] if len(repairs) == 1 else None,
            )
        parts: list[PartDecision] = []
        steps: list[PlannedStep] = []
        findings: list[Finding] = []
        #: Where each repairable part's options go: the end of its program's word (or of
        #: its last word: git's pathspecs).
        part_repairs: list[tuple[int, tuple[str, ...]]] = []
        for connector, pipeline in parsed.items:
            step_cwd = cwd
            planned: list[PlannedCommand] = []
            stages: list[tuple[str, Sequence[str]]] = []
            for simple in pipeline.commands:
                finding, argv, redirects = self._command(
                    simple, cwd, depth, alone=len(pipeline.commands) == 1
                )
                parts.append(
                    PartDecision(
                        tuple(argv),
                        finding.action,
                        tuple(finding.reason.split("; ")) if finding.reason else (),
                    )
                )
                findings.append(finding)
                if finding.repair:
                    word = simple.words[-1 if finding.repair_at_end else 0]
                    part_repairs.append((word.position + len(word.raw), finding.repair))
                planned.append(PlannedCommand(tuple(argv), tuple(redirects)))
                stages.append((self.command_name(argv[0], cwd) if argv else "", argv))
            findings.extend(self._pipeline_findings(stages))
            if planned[0].argv[:1] == ("cd",) and len(planned) == 1:
                target = self._cd_target(planned[0].argv, cwd)
                steps.append(PlannedStep(connector, step_cwd, chdir=target))
                cwd = target
            else:
                steps.append(PlannedStep(connector, step_cwd, tuple(planned)))
        verdict = combine(findings)
        default = {"allow": None, "ask": ASK_SUGGESTION, "deny": DENY_SUGGESTION}[verdict.action]
        repaired = command
        for end, options in sorted(part_repairs, reverse=True):  # from the end: positions hold
            repaired = f"{repaired[:end]} {shlex.join(options)}{repaired[end:]}"
        return PolicyDecision(
            verdict.action,
            verdict.reason or "every part is allowed",
            parsed.normalized,
            tuple(parts),
            suggestion=verdict.suggestion or default,
            repaired=repaired if verdict.action == "deny" and part_repairs else None,
            plan=tuple(steps),
        )

    def _command(
        self, simple: SimpleCommand, cwd: Path, depth: int, *, alone: bool
    ) -> tuple[Finding, list[str], list[PlannedRedirect]]:
        variables = expansion_variables(self.workspace.root, cwd, self.env)
        try:
            argv = expand_words(simple.words, variables, cwd)
            redirects = [self._redirect(r, variables, cwd) for r in simple.redirects]
        except ExpansionError as exc:
            return Finding("deny", exc.reason), [w.raw for w in simple.words], []
        if not argv:
            return Finding("deny", "the command expands to nothing"), argv, []
        evaluator = _Evaluator(self, cwd, depth)
        if argv[0] == "cd":
            found = [self._cd_finding(argv, cwd, alone and not redirects)]
        else:
            found = evaluator.evaluate(argv)
        for redirect in redirects:
            if redirect.path is not None:
                access: Access = "read" if redirect.mode == "read" else "write"
                label = "the input redirection" if access == "read" else "the redirection"
                found.append(evaluator.path(str(redirect.path), access, label))
        return combine(found), argv, redirects

    def _redirect(
        self, redirect: Redirect, variables: Mapping[str, str], cwd: Path
    ) -> PlannedRedirect:
        if redirect.op == ">&":
            assert isinstance(redirect.target, int)
            return PlannedRedirect(redirect.fd, "dup", source_fd=redirect.target)
        assert not isinstance(redirect.target, int)
        value = expand_target(redirect.target, variables, cwd)
        mode: RedirectMode = (
            "read" if redirect.op == "<" else "append" if redirect.op == ">>" else "write"
        )
        return PlannedRedirect(redirect.fd, mode, self.workspace.resolve(value, cwd))

    def _cd_target(self, argv: Sequence[str], cwd: Path) -> Path:
        return self.workspace.resolve(argv[1], cwd) if len(argv) > 1 else self.workspace.root

    def _cd_finding(self, argv: Sequence[str], cwd: Path, alone: bool) -> Finding:
        if not alone:
            return Finding("deny", "cd in a pipeline or with a redirection has no effect",
                           "Write cd DIR && cmd.")
        if len(argv) > 2 or argv[1:] == ["-"]:
            return Finding("deny", "cd takes exactly one directory", "Write cd DIR.")
        target = self._cd_target(argv, cwd)
        if not self.workspace.contains(target):
            return Finding(
                "deny",
                f"cd {argv[1]} would leave the workspace",
                "Stay inside the workspace; use paths relative to it.",
            )
        return Finding("allow", "")

    def _pipeline_findings(self, stages: Sequence[tuple[str, Sequence[str]]]) -> list[Finding]:
        """`curl ... | sh`: a download piped into an interpreter (directly or via a wrapper)."""
        found: list[Finding] = []
        for i, (name, _) in enumerate(stages):
            if name not in DOWNLOADERS:
                continue
            for later, argv in stages[i + 1 :]:
                runs = [later] if later not in WRAPPERS else [os.path.basename(a) for a in argv]
                target = next((r for r in runs if _is_interpreter(r)), None)
                if target:
                    found.append(
                        Finding(
                            "deny",
                            f"{name} output piped into {target} runs downloaded code unreviewed",
                            "Download to a file, read it, and ask the user before running it.",
                        )
                    )
        return found


class _Evaluator:
    """Judges one argv in one directory; also the GuardContext guards call back into."""

    def __init__(self, policy: ShellPolicy, cwd: Path, depth: int,
                 walks: dict[tuple[Path, Skips, bool], TreeWalk] | None = None) -> None:
        self.policy = policy
        self.cwd = cwd
        self.depth = depth
        # Shared by the checks of this command and those it runs; the next command walks anew.
        self.walks = {} if walks is None else walks

    def evaluate(self, argv: Sequence[str]) -> list[Finding]:
        name = self.policy.command_name(argv[0], self.cwd)
        args = list(argv[1:])
        rule = self.policy.rules.decide(name, args)
        found = [
            Finding(rule.action, rule.reason, rule.suggestion)
            if rule
            else Finding("ask", f"{name} is not on the allow list")
        ]
        found.extend(guards.inspect(name, args, self))
        roles = path_roles(name, args)
        found.extend(self.path(value, "read", name) for value in roles.reads)
        found.extend(self.path(value, "write", name) for value in roles.writes)
        return found

    def check_argv(self, argv: Sequence[str]) -> Finding:
        if self.depth >= _MAX_DEPTH:
            return Finding("deny", "commands nested too deeply to check")
        return combine(_Evaluator(self.policy, self.cwd, self.depth + 1, self.walks).evaluate(argv))

    def check_script(self, script: str) -> Finding:
        if self.depth >= _MAX_DEPTH:
            return Finding("deny", "commands nested too deeply to check")
        decision = self.policy._check(script, self.cwd, self.depth + 1)
        if decision.denied and not decision.plan and decision.reason.startswith("cannot parse"):
            # A script beyond our subset cannot be checked, but a person can read it.
            return Finding("ask", f"the script is beyond what the policy can check "
                           f"({decision.reason.removeprefix('cannot parse the command: ')})")
        return Finding(decision.action, decision.reason, decision.suggestion)

    def path(self, value: str, access: Access, command: str) -> Finding:
        verdict = self.policy.workspace.verdict(value, self.cwd, access, command=command)
        return Finding(verdict.action, verdict.reason, verdict.suggestion)

    def tree(self, value: str, skips: Skips, follows_links: bool) -> TreeWalk:
        start = self.policy.workspace.resolve(value, self.cwd)
        key = (start, skips, follows_links)
        if key not in self.walks:
            self.walks[key] = walk_tree(start, self.policy.workspace, skips, follows_links)
        return self.walks[key]

    def directory(self, value: str | None) -> Path:
        return self.cwd if value is None else self.policy.workspace.resolve(value, self.cwd)

    def git_tracked(self, directory: Path) -> TrackedSecrets:
        return self.policy.git_tracked(directory)

    def is_secret(self, value: str) -> bool:
        return self.policy.workspace.is_secret(Path(value), value)


def check_command(
    command: str,
    *,
    workspace: str | os.PathLike[str] | None = None,
    policy_file: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> PolicyDecision:
    """Decide allow / ask / deny for `command` run in `workspace` (default: the current dir)."""
    policy = ShellPolicy(workspace or Path.cwd(), policy_file=policy_file, env=env)
    return policy.check(command)
