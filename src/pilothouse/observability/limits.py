"""How much memory this process may use and how much it uses: cgroups, /proc.

Read from the kernel's own files, not a library: the cgroup limit is what the OOM killer enforces
in a container (the seed's 4 GiB), and /proc/self/statm costs one small read per sample.
"""

from __future__ import annotations

import os
import resource
import sys
from dataclasses import dataclass
from pathlib import Path

from pilothouse.errors import ConfigurationError
from pilothouse.sizes import KIB

# cgroup v1 reports "no limit" as the largest page-aligned signed 64-bit value; any limit past
# an exbibyte is that marker, not a real budget.
_UNLIMITED = 1 << 60


@dataclass(frozen=True)
class MemoryLimit:
    """A memory limit in bytes and where it came from (shown by `doctor` and in refusals)."""

    bytes: int
    source: str


def _own_cgroups(proc_cgroup: Path) -> tuple[str | None, str | None]:
    """(v2 path, v1 memory-controller path) of this process, from /proc/self/cgroup."""
    v2 = v1 = None
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None, None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            v2 = path
        elif "memory" in controllers.split(","):
            v1 = path
    return v2, v1


def _read_limit(path: Path) -> int | None:
    try:
        raw = path.read_text().strip()
    except OSError:
        return None
    if not raw.isdigit():  # v2 writes "max" for no limit
        return None
    value = int(raw)
    return value if value < _UNLIMITED else None


def _tightest(mount: Path, own: str | None, filename: str) -> tuple[int, Path] | None:
    """The smallest limit on the way from our cgroup up to the mount's root.

    A container usually sees its own cgroup as the root of the mount (a cgroup namespace), and
    without a namespace our path may not exist under the mount, so every level is tried.
    """
    found: list[tuple[int, Path]] = []
    directory = mount / own.strip("/") if own else mount
    for level in [directory, *directory.parents]:
        value = _read_limit(level / filename)
        if value is not None:
            found.append((value, level / filename))
        if level == mount:
            break
    return min(found) if found else None


def total_ram(meminfo: Path = Path("/proc/meminfo")) -> int:
    """The machine's physical memory in bytes."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * KIB
    except (OSError, ValueError, IndexError):
        pass
    try:  # not Linux (a developer's Mac): ask the C library
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        raise ConfigurationError(
            "Cannot tell how much memory this machine has.",
            hint="Set PILOTHOUSE_MEMORY_LIMIT, e.g. PILOTHOUSE_MEMORY_LIMIT=4GiB.",
        ) from None


def detect_memory_limit(
    cgroup_root: Path = Path("/sys/fs/cgroup"),
    proc_cgroup: Path = Path("/proc/self/cgroup"),
    meminfo: Path = Path("/proc/meminfo"),
) -> MemoryLimit:
    """The memory this process may use: its cgroup's limit (v2, then v1), else total RAM."""
    ram = total_ram(meminfo)
    v2_path, v1_path = _own_cgroups(proc_cgroup)
    found = [hit for hit in (
        _tightest(cgroup_root, v2_path, "memory.max"),
        _tightest(cgroup_root / "memory", v1_path, "memory.limit_in_bytes"),
    ) if hit is not None]
    if not found:
        return MemoryLimit(ram, f"{meminfo} MemTotal (no cgroup memory limit)")
    value, path = min(found)
    # A cgroup limit above the physical memory cannot be reached before the machine's is.
    if value >= ram:
        return MemoryLimit(ram, f"{meminfo} MemTotal (below the cgroup limit in {path})")
    return MemoryLimit(value, f"cgroup limit {path}")


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def resident_bytes(statm: Path = Path("/proc/self/statm")) -> int:
    """This process's resident memory now (one small read of /proc/self/statm)."""
    try:
        return int(statm.read_text().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return peak_resident_bytes()  # no /proc: the peak is the closest honest upper bound


def peak_resident_bytes(status: Path = Path("/proc/self/status")) -> int:
    """The highest resident memory this process has reached (VmHWM)."""
    try:
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * KIB
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * KIB  # macOS reports bytes, Linux KiB
