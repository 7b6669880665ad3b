"""Reading log archives: failing steps' tails, cleaned lines, and bounds on hostile archives."""

from __future__ import annotations

import io
import zipfile

import pytest

from pilothouse.errors import UpstreamError
from pilothouse.tools.github.runlogs import MAX_LINE_CHARS, failing_tails

STAMP = "2026-08-22T08:41:12.1234567Z "


def archive(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, text in files.items():
            zipped.writestr(name, text)
    return buffer.getvalue()


def lines(*texts: str) -> str:
    return "".join(f"{STAMP}{t}\n" for t in texts)


def test_failing_steps_keep_their_tail_and_errors_without_timestamps_or_colours() -> None:
    data = archive({
        "build/1_Set up job.txt": lines("runner 2.319"),
        "build/2_Run make test.txt": lines(*(f"ok {k}" for k in range(50)),
                                           "\x1b[31mFAIL\x1b[0m TestLedger",
                                           "##[error]Process completed with exit code 1."),
        "lint/1_Run golangci-lint.txt": lines("x.go:1: unused", "##[error]exit code 1"),
        "0_build.txt": lines("the whole job, ignored when step files exist"),
    })
    answer = failing_tails(data, tail_lines=10)
    build, lint = answer["failing_steps"]
    assert (build["job"], build["step"], build["lines_total"]) == ("build", "Run make test", 52)
    assert build["tail"][-2:] == ["FAIL TestLedger",
                                  "##[error]Process completed with exit code 1."]
    assert len(build["tail"]) == 10  # two failures share 10 lines, but each keeps at least 10
    assert lint["errors"] == ["##[error]exit code 1"]
    assert [s["step"] for s in answer["steps"]] == ["Set up job", "Run make test",
                                                   "Run golangci-lint"]


def test_job_files_alone_still_name_the_failing_step() -> None:
    data = archive({"0_deploy.txt": lines("##[group]Run docker build", "step one",
                                          "##[endgroup]", "##[group]Run argocd app sync",
                                          "rpc error: FailedPrecondition",
                                          "##[error]Process completed with exit code 20.")})
    (step,) = failing_tails(data, tail_lines=100)["failing_steps"]
    assert (step["job"], step["step"]) == ("deploy", "argocd app sync")
    assert step["tail"][-2] == "rpc error: FailedPrecondition"


def test_a_green_run_shows_the_end_of_its_last_step() -> None:
    data = archive({"ci/1_Run tests.txt": lines("all good"),
                    "ci/2_Complete job.txt": lines("Cleaning up orphan processes")})
    answer = failing_tails(data, tail_lines=5)
    assert answer["failing_steps"] == []
    assert answer["last_step"]["tail"] == ["Cleaning up orphan processes"]
    assert "No step reported an error" in answer["notes"][0]


def test_long_lines_and_newline_free_floods_are_bounded() -> None:
    flood = "A" * 300_000  # no newline at all: read in bounded pieces, not as one line
    data = archive({"job/1_Run flood.txt": flood + "\n##[error]boom\n"})
    (step,) = failing_tails(data, tail_lines=3)["failing_steps"]
    assert all(len(line) <= MAX_LINE_CHARS for line in step["tail"])
    assert step["tail"][-1] == "##[error]boom"
    assert step["lines_total"] >= 300_000 // (64 * 1024)


def test_the_unzip_cap_stops_a_zip_bomb() -> None:
    bomb = archive({"job/1_Run bomb.txt": "x" * 80 + "\n" * 1} | {
        f"job/{k}_Run more.txt": ("y" * 99 + "\n") * 20_000 for k in range(2, 6)})
    assert len(bomb) < 100_000  # 8 MB of text in a small archive
    answer = failing_tails(bomb, tail_lines=5, max_bytes=1024 * 1024)
    assert answer["unzipped_bytes_read"] <= 1024 * 1024 + 100
    assert "Stopped reading after 1 MiB" in answer["notes"][-1]


def test_a_broken_archive_is_an_upstream_error() -> None:
    with pytest.raises(UpstreamError, match="not a valid zip"):
        failing_tails(b"<html>oops</html>", tail_lines=10)
