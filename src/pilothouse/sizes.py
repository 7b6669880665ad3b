"""Memory sizes as people write them (`4GiB`, `512M`) and read them (`3.4 GiB`).

At the bottom of the package: Settings parses PILOTHOUSE_MEMORY_LIMIT with it, and the memory
guard (observability) formats its messages with it.
"""

from __future__ import annotations

import re

from pilothouse.errors import ConfigurationError

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
_UNITS = {"": 1, "k": KIB, "m": MIB, "g": GIB, "t": 1024 * GIB}
# A number, then nothing, B, or a unit letter with an optional i and B: 4G, 4Gi, 4GB, 4GiB.
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:ib?|b)?|b)?\s*$", re.IGNORECASE)


def parse_memory_size(
    text: str, *, name: str = "PILOTHOUSE_MEMORY_LIMIT", minimum: int = 16 * MIB
) -> int:
    """Bytes in `text`: `1073741824`, `512M`, `512MiB`, `4G`, `4GiB`, `1.5 GB`.

    Units are binary (K = 1024, as Docker's `--memory` and systemd read them): a memory limit
    is rarely meant in powers of ten, and reading `4G` as 4 GiB errs by less than the guard's
    high-water margin. A value under `minimum` is refused, since it is almost always a unit left
    off (`4096` meant as MiB) and would refuse every request.
    """
    match = _SIZE.match(text)
    if match is None:
        raise ConfigurationError(
            f"{name}={text!r} is not a memory size.",
            hint=f"Use bytes or a number with a unit, e.g. `{name}=4GiB` or `{name}=512MiB`.",
        )
    unit = (match.group(2) or "").lower()
    value = int(float(match.group(1)) * _UNITS[unit])
    if value < minimum:
        raise ConfigurationError(
            f"{name}={text!r} is {value:,} bytes, below the minimum of {minimum // MIB} MiB.",
            hint=f"Add a unit: e.g. `{name}={max(float(match.group(1)), 16):g}MiB`.",
        )
    return value


def format_bytes(value: int) -> str:
    """`value` bytes for people: `512 MiB`, `3.4 GiB`."""
    if value >= GIB:
        return f"{value / GIB:.1f} GiB"
    return f"{value / MIB:.0f} MiB"
