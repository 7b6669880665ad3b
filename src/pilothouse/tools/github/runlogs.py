"""Read a workflow run's log archive in memory and keep the tails of the steps that failed.

GitHub zips one file per step (`job/3_Run make test.txt`) and one per job (`0_test.txt`). The
archive is read entry by entry as a stream of lines: each step keeps only its last N lines (a
deque) and its `##[error]` lines, and reading stops at a byte cap however large the logs
unzip to (a small archive can inflate to gigabytes). Timestamps and ANSI colours are removed:
they cost tokens and say nothing.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from pilothouse.errors import UpstreamError

MiB = 1024 * 1024
MAX_LINE_CHARS = 300
MAX_ENTRIES = 1000
MAX_ERRORS = 5
_MAX_RAW_LINE = 64 * 1024
_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_STEP_FILE = re.compile(r"^(\d+)_(.*)\.txt$")
_GROUP = "##[group]Run "


def clean(line: str) -> str:
    """A log line without its timestamp, colours and trailing newline, capped in length."""
    text = _ANSI.sub("", _STAMP.sub("", line.rstrip("\r\n")))
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"


@dataclass
class StepLog:
    """What one log file left behind: its tail, its error lines and its size."""

    job: str
    step: str
    order: int
    tail: deque[str]
    errors: list[str] = field(default_factory=list)
    lines: int = 0
    complete: bool = True

    @property
    def failed(self) -> bool:
        return bool(self.errors)


def _entries(archive: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, str, str, int]]:
    """(entry, job, step, order): step files when present, else whole-job files."""
    steps, jobs = [], []
    for info in archive.infolist()[:MAX_ENTRIES]:
        if info.is_dir():
            continue
        folder, _, name = info.filename.rpartition("/")
        match = _STEP_FILE.match(name)
        order, label = (int(match.group(1)), match.group(2)) if match else (0, name)
        if folder:
            steps.append((info, folder, label, order))
        else:
            jobs.append((info, label, "", order))
    chosen = steps or jobs
    return sorted(chosen, key=lambda e: (e[1], e[3]))


def read_archive(data: bytes, *, tail_lines: int, max_bytes: int = 64 * MiB,
                 ) -> tuple[list[StepLog], int, bool]:
    """Every step's tail; returns (steps, unzipped bytes read, stopped at the cap)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise UpstreamError("GitHub sent a log archive that is not a valid zip file.",
                            hint="Ask again; if it repeats, open the run's logs on github.com.",
                            retryable=True) from None
    logs: list[StepLog] = []
    read, capped = 0, False
    with archive:
        for info, job, step, order in _entries(archive):
            log = StepLog(job, step, order, deque(maxlen=tail_lines))
            logs.append(log)
            with archive.open(info) as raw:
                while chunk := raw.readline(_MAX_RAW_LINE):  # bounded, even without newlines
                    read += len(chunk)
                    if read > max_bytes:
                        log.complete, capped = False, True
                        break
                    text = clean(chunk.decode("utf-8", "replace"))
                    log.lines += 1
                    if not step and text.startswith(_GROUP):
                        log.step = text[len(_GROUP):][:80]  # a job file: track its step
                    if "##[error]" in text and len(log.errors) < MAX_ERRORS:
                        log.errors.append(text)
                    log.tail.append(text)
            if capped:
                break
    return logs, read, capped


def failing_tails(data: bytes, *, tail_lines: int, max_bytes: int = 64 * MiB) -> dict[str, Any]:
    """The answer of `get_workflow_run_logs`: failing steps with their last lines."""
    logs, read, capped = read_archive(data, tail_lines=tail_lines, max_bytes=max_bytes)
    failing = [log for log in logs if log.failed]
    notes: list[str] = []
    shown = failing
    if not failing and logs:
        shown = [logs[-1]]
        notes.append("No step reported an error; showing the end of the last step.")
    share = max(10, tail_lines // max(1, len(shown)))  # several failures split the budget
    steps = []
    for log in shown:
        tail = list(log.tail)[-share:]
        steps.append({"job": log.job, "step": log.step, "lines_total": log.lines,
                      "errors": log.errors, "tail": tail})
    if capped:
        notes.append(f"Stopped reading after {max_bytes // MiB} MiB of unzipped logs; the last "
                     "step read may not show its real end.")
    return {
        "archive_bytes": len(data), "unzipped_bytes_read": read,
        "steps": [{"job": log.job, "step": log.step, "lines": log.lines,
                   "failed": log.failed} for log in logs][:40],
        "failing_steps": steps if failing else [],
        **({"last_step": steps[0]} if not failing and steps else {}),
        **({"notes": notes} if notes else {}),
    }
