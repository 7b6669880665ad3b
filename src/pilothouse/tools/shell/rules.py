"""Allow / ask / deny rules keyed by command, subcommand and argument patterns.

Precedence, chosen so that a rule file can widen the defaults without undoing their floor:
a matching `deny` always wins; otherwise the most specific rule wins (argument patterns, then
subcommand, then command alone); at equal specificity a rule from a policy file beats a
default, and the stricter action breaks the remaining ties. A command no rule names is `ask`.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pilothouse.errors import ConfigurationError
from pilothouse.tools.shell.findings import SEVERITY
from pilothouse.tools.shell.paths import Action


@dataclass(frozen=True)
class Rule:
    """One policy line: which invocations it covers and what happens to them."""

    commands: tuple[str, ...]
    action: Action
    reason: str
    subcommands: tuple[str, ...] = ()
    args: tuple[re.Pattern[str], ...] = ()
    suggestion: str | None = None
    origin: int = 0  # 0 = embedded default, 1 = policy file

    @property
    def specificity(self) -> tuple[int, int, int, int]:
        return (bool(self.args), bool(self.subcommands), self.origin, SEVERITY[self.action])

    def matches(self, name: str, subcommand: str | None, args: Sequence[str]) -> bool:
        if not any(fnmatch.fnmatchcase(name, c) for c in self.commands):
            return False
        if self.subcommands and subcommand not in self.subcommands:
            return False
        return not self.args or any(p.fullmatch(a) for p in self.args for a in args)


@dataclass(frozen=True)
class RuleSet:
    """Rules plus the per-command knowledge needed to find a subcommand."""

    rules: tuple[Rule, ...]
    value_options: Mapping[str, frozenset[str]] = field(default_factory=dict)
    secret_patterns: tuple[str, ...] = ()

    def subcommand(self, name: str, args: Sequence[str]) -> str | None:
        """First argument that is neither an option nor an option's value (`git -C d log`)."""
        takes_value = self.value_options.get(name, frozenset())
        skip = False
        for arg in args:
            if skip:
                skip = False
            elif arg in takes_value:
                skip = True
            elif not arg.startswith("-"):
                return arg
        return None

    def decide(self, name: str, args: Sequence[str]) -> Rule | None:
        """The rule that governs `name args`, or None when no rule names the command."""
        sub = self.subcommand(name, args)
        matching = [r for r in self.rules if r.matches(name, sub, args)]
        if not matching:
            return None
        denies = [r for r in matching if r.action == "deny"]
        if denies:
            return max(denies, key=lambda r: r.specificity)
        return max(matching, key=lambda r: r.specificity)

    def merged(self, other: RuleSet, *, replace: bool = False) -> RuleSet:
        """This set extended (or replaced) by a file's rules and command knowledge."""
        options = dict(self.value_options)
        options.update(other.value_options)
        return RuleSet(
            other.rules if replace else self.rules + other.rules,
            options,
            other.secret_patterns if replace else self.secret_patterns + other.secret_patterns,
        )


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigurationError(f"{where} must be a string or a list of strings, not {value!r}.")


def rules_from_mapping(data: Mapping[str, Any], *, origin: int, source: str) -> RuleSet:
    """Build a RuleSet from parsed TOML/YAML; errors name the file and the rule."""
    rules: list[Rule] = []
    for index, raw in enumerate(data.get("rules", [])):
        where = f"{source}: rules[{index}]"
        if not isinstance(raw, Mapping):
            raise ConfigurationError(f"{where} must be a table.")
        unknown = set(raw) - {"command", "subcommand", "args", "action", "reason", "suggestion"}
        if unknown:
            raise ConfigurationError(f"{where} has unknown keys: {', '.join(sorted(unknown))}.")
        action = raw.get("action")
        if action not in SEVERITY:
            raise ConfigurationError(f"{where}: action must be allow, ask or deny.")
        if "command" not in raw:
            raise ConfigurationError(f"{where} needs a command.")
        try:
            patterns = tuple(re.compile(p) for p in _strings(raw.get("args", []), where))
        except re.error as exc:
            raise ConfigurationError(f"{where}: bad argument pattern: {exc}.") from None
        rules.append(
            Rule(
                commands=_strings(raw["command"], f"{where}.command"),
                action=action,
                reason=str(raw.get("reason") or f"policy rule {index} says {action}"),
                subcommands=_strings(raw.get("subcommand", []), f"{where}.subcommand"),
                args=patterns,
                suggestion=raw.get("suggestion"),
                origin=origin,
            )
        )
    options = {
        name: frozenset(_strings(spec.get("value_options", []), f"{source}: commands.{name}"))
        for name, spec in data.get("commands", {}).items()
    }
    secrets = _strings(data.get("paths", {}).get("secret_patterns", []), f"{source}: paths")
    return RuleSet(tuple(rules), options, secrets)


def load_rules_file(path: Path, base: RuleSet) -> RuleSet:
    """Read a TOML or YAML policy file and merge it over `base`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"Cannot read shell policy file {path}: {exc.strerror}.") from None
    try:
        if path.suffix in {".yaml", ".yml"}:
            import yaml  # only needed for YAML policies

            data = yaml.safe_load(text) or {}
        else:
            data = tomllib.loads(text)
    except Exception as exc:
        raise ConfigurationError(f"Shell policy file {path} is not valid: {exc}.") from None
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"Shell policy file {path} must contain a table at top level.")
    replace = bool(data.get("replace_defaults", False))
    return base.merged(rules_from_mapping(data, origin=1, source=str(path)), replace=replace)
