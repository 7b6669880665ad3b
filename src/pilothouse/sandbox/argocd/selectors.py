"""Kubernetes label selectors, as the Argo CD list endpoint's `selector=` parameter takes them.

Supports equality (`k=v`, `k==v`, `k!=v`), sets (`k in (a,b)`, `k notin (a,b)`) and existence
(`k`, `!k`), joined by commas. An unparsable selector raises `ValueError` with the message the
real server wraps in its HTTP 500 ("error parsing the selector: ...").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

Requirement = Callable[[Mapping[str, str]], bool]

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_SET = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s+\(([^()]*)\)\s*$")
_EQ = re.compile(rf"^\s*({_KEY})\s*(==|!=|=)\s*({_VALUE})\s*$")
_EXISTS = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


def _split(selector: str) -> list[str]:
    """Split on commas that are not inside a parenthesised value set."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in selector:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _requirement(text: str) -> Requirement:
    if match := _SET.match(text):
        key, op = match.group(1), match.group(3)
        values = {x.strip() for x in match.group(4).split(",") if x.strip()}
        if not values:
            raise ValueError(f"unable to parse requirement: {text.strip()!r}: empty value set")
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if match := _EQ.match(text):
        key, op, value = match.group(1), match.group(3), match.group(4)
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if match := _EXISTS.match(text):
        negate, key = match.group(1) == "!", match.group(2)
        return lambda labels: (key in labels) != negate
    raise ValueError(f"unable to parse requirement: {text.strip()!r}")


def parse_selector(selector: str) -> Requirement:
    """Compile `selector` into a predicate over a label mapping; empty matches everything."""
    if not selector.strip():
        return lambda labels: True
    requirements = [_requirement(part) for part in _split(selector)]
    return lambda labels: all(req(labels) for req in requirements)
