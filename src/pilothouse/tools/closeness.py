"""How close one name is to another: the one measure every "did you mean" of the tools uses.

Close means one of: the same name once case, spaces, dots and underscores are normalized; a
name that contains the other, or is contained in it, as whole hyphen-separated parts
("shop-api" in "shop-api-blue", "deploy" in "deploy_configs"); or a similarity ratio of 0.75
or more ("prodution" for "production").
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

_MIN_RATIO = 0.75
_SEPARATORS = re.compile(r"[\s_.]+")


def normal(name: str) -> str:
    """`name` as names are compared: lower case, separators as hyphens."""
    return _SEPARATORS.sub("-", name.strip().lower())


def closeness(wanted: str, name: str) -> float:
    """How close `name` is to `wanted`, 0 (not a candidate) to 2 (the same, normalized)."""
    a, b = normal(wanted), normal(name)
    if a == b:
        return 2.0
    parts_a, parts_b = a.split("-"), b.split("-")
    if _contains(parts_b, parts_a) or _contains(parts_a, parts_b):
        return 1.0 + min(len(a), len(b)) / max(len(a), len(b)) / 2
    ratio = SequenceMatcher(None, a, b).ratio()
    return ratio if ratio >= _MIN_RATIO else 0.0


def _contains(parts: list[str], run: list[str]) -> bool:
    """Whether `run` occurs in `parts` as consecutive whole parts."""
    return any(parts[i:i + len(run)] == run for i in range(len(parts) - len(run) + 1))
