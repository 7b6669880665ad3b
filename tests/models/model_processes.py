"""The child processes of a process, read from /proc (Linux): to find the one to signal."""

from __future__ import annotations

from pathlib import Path


def children(parent: int) -> list[tuple[int, bytes]]:
    """(pid, command line) of every living child of `parent`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # it exited while we looked
        ppid = next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:"))
        if int(ppid) == parent:
            found.append((int(entry.name), cmdline))
    return found
