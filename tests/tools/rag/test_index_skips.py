"""`pilothouse index PATH` says what it left out and why, and never reports an empty index as
success: through the real CLI in its own process, stdout and stderr pipes, a real git checkout.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pilothouse.tools.rag.files import (
    BINARY,
    DEPENDENCY_DIR,
    EMPTY,
    EXCLUDED,
    OUTSIDE,
    TOO_LARGE,
    UNSUPPORTED,
    SkipTally,
    walk_sources,
)


def pilothouse_index(path: Path, home: Path,
                     columns: int = 200) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PILOTHOUSE_")}
    env["COLUMNS"] = str(columns)  # rows of the tables stay on one line for parsing
    return subprocess.run([sys.executable, "-m", "pilothouse", "index", str(path),
                           "--home", str(home)], env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def skipped_rows(stdout: str) -> dict[str, int]:
    """The "Skipped" table: reason -> count."""
    table = stdout[stdout.index("Skipped"):]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if len(cells) == 3 and cells[1].replace(",", "").isdigit():
            rows[cells[0]] = int(cells[1].replace(",", ""))
    return rows


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout with one thing of each kind the indexer leaves out."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "build").mkdir()
    (repo / "node_modules" / "left-pad").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("build/\n*.generated.py\n")
    (repo / "src" / "deploy.py").write_text("def deploy(app: str) -> None:\n    print(app)\n")
    (repo / "src" / "models.generated.py").write_text("X = 1\n")
    (repo / "build" / "out.py").write_text("Y = 2\n")
    (repo / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (repo / "yarn.lock").write_text("# lock\n")
    (repo / "src" / "dump.sql").write_text("-- data\n" + "INSERT INTO t VALUES (1);\n" * 30_000)
    (repo / "src" / "logo.dat").write_bytes(b"\x89PNG\x00\x01\x02" * 10)
    (repo / "src" / "__init__.py").write_text("")
    return repo


def test_the_cli_counts_what_it_skipped_by_reason(checkout: Path, tmp_path: Path) -> None:
    done = pilothouse_index(checkout, tmp_path / "home")

    assert done.returncode == 0, done.stderr
    assert skipped_rows(done.stdout) == {
        f"ignored by {checkout / '.gitignore'}": 2, DEPENDENCY_DIR: 1, UNSUPPORTED: 1,
        TOO_LARGE: 1, BINARY: 1, EMPTY: 1}
    assert "build/, src/models.generated.py" in done.stdout  # examples of each reason


def test_a_gitignored_folder_says_which_gitignore_and_exits_1(
        checkout: Path, tmp_path: Path) -> None:
    done = pilothouse_index(checkout / "build", tmp_path / "home", columns=80)

    error = " ".join(done.stderr.split())
    assert done.returncode == 1
    assert (f"Nothing was indexed: {checkout / 'build'} is itself ignored by "
            f"{checkout / '.gitignore'}") in error
    assert f"What to do: Index the checkout (`pilothouse index {checkout}`)" in error
    # The message is not hard-wrapped in a pipe: the error is one line, its fix another.
    assert [line.split(":")[0] for line in done.stderr.strip().splitlines()] == \
        ["Error", "What to do"], done.stderr


def test_an_empty_folder_and_a_folder_of_skipped_files_exit_1_with_why(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    (data / "image.png").write_bytes(b"\x89PNG")
    (data / "blob").write_bytes(b"\x00" * 100)

    nothing = pilothouse_index(empty, tmp_path / "home")
    skipped = pilothouse_index(data, tmp_path / "home")

    assert nothing.returncode == 1 and f"{empty} holds no files" in nothing.stderr
    assert skipped.returncode == 1
    error = " ".join(skipped.stderr.split())
    assert f"every entry of {data} was skipped (1 {UNSUPPORTED}; 1 {BINARY})" in error
    assert "What to do: Only UTF-8 text files up to 512 KiB" in error


def test_the_walk_names_the_gitignore_that_matched_and_the_callers_patterns(
        checkout: Path, tmp_path: Path) -> None:
    (checkout / "src" / ".gitignore").write_text("scratch_*.py\n")
    (checkout / "src" / "scratch_1.py").write_text("Z = 3\n")
    (checkout / "src" / "vendor.py").write_text("V = 4\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("canary\n")
    (checkout / "src" / "link.txt").symlink_to(outside)
    tally = SkipTally()

    kept = [s.rel for s in walk_sources(checkout, ["src/vendor.py"], tally)]

    assert f"ignored by {checkout / 'src' / '.gitignore'}" in tally.counts
    assert tally.examples[f"ignored by {checkout / 'src' / '.gitignore'}"] == ["src/scratch_1.py"]
    assert tally.counts[EXCLUDED] == 1 and tally.counts[OUTSIDE] == 1
    assert "src/vendor.py" not in kept and "src/link.txt" not in kept
    assert tally.root_ignored_by is None
