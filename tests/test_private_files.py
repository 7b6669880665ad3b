"""State files are owner-only: created 0600 in 0700 folders, and tightened at start-up.

Runs in the test process, whose umask (usually 022) is looser than a Pilothouse command's:
what these tests see holds by the explicit modes alone. The whole-process run (umask 077 and
every file the server, its agents and tool servers create) is in
`tests/a2a/test_serve_workspace_jail.py`.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import text

from pilothouse.a2a.store import open_task_engine
from pilothouse.config import Settings
from pilothouse.private_files import private_db, restrict_umask, secure_home
from pilothouse.runtime.checkpoint import open_checkpointer


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def modes_under(root: Path) -> dict[str, int]:
    """Every folder and file under `root` (itself included), links left out."""
    found = {str(root): mode(root)}
    for current, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(current) / name
            if not path.is_symlink():
                found[str(path)] = mode(path)
    return found


def loose(found: dict[str, int]) -> dict[str, str]:
    return {path: f"{m:04o}" for path, m in found.items() if m & 0o077}


async def test_checkpoints_and_task_store_are_created_owner_only(
    make_settings: Callable[..., Settings], home: Path,
) -> None:
    assert os.umask(os.umask(0)) & 0o077 != 0o077  # the test's own, looser umask
    settings = make_settings()
    async with open_checkpointer(settings) as saver, open_task_engine(settings) as engine:
        await saver.aget_tuple({"configurable": {"thread_id": "t"}})  # creates the tables
        async with engine.begin() as connection:
            await connection.execute(text("CREATE TABLE IF NOT EXISTS t (x INTEGER)"))
            await connection.execute(text("INSERT INTO t VALUES (1)"))
        files = modes_under(home)
        # WAL mode is on while open: its sidecars exist now and take the database's mode.
        assert any(p.endswith("-wal") for p in files), sorted(files)
    state = home / "state"
    assert {Path(p).name for p in files} >= {"checkpoints.sqlite",
                                            "checkpoints-a2a-tasks.sqlite"}
    assert mode(home) == mode(state) == 0o700
    assert loose(files) == {}
    assert loose(modes_under(home)) == {}


def test_an_existing_loose_home_is_tightened_at_start_up_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    home = tmp_path / "home"
    (home / "state").mkdir(parents=True)
    (home / "rag" / "seg").mkdir(parents=True)
    (home / "models").mkdir()
    for path in (home, home / "state", home / "rag", home / "rag" / "seg"):
        path.chmod(0o755)
    db = home / "state" / "conversations.sqlite"
    db.write_text("")
    db.chmod(0o644)
    (home / "state" / "conversations.sqlite-wal").write_text("")
    (home / "state" / "conversations.sqlite-wal").chmod(0o664)
    (home / "rag" / "seg" / "data.bin").write_text("chunk")
    (home / "rag" / "seg" / "data.bin").chmod(0o644)
    weights = home / "models" / "model.gguf"
    weights.write_text("weights")
    weights.chmod(0o644)

    with caplog.at_level(logging.WARNING, logger="pilothouse.private_files"):
        changed = secure_home(home)

    assert len(changed) == 7
    assert loose(modes_under(home / "state")) == loose(modes_under(home / "rag")) == {}
    assert mode(home) == 0o700 and mode(db) == 0o600
    assert mode(weights) == 0o644  # public weights, not state: left alone
    warning = caplog.records[-1].getMessage()
    assert f"{db} 0644 -> 0600" in warning and "and 2 more" in warning
    assert secure_home(home) == []  # nothing left to change, nothing logged again


def test_tightening_never_follows_a_link_out_of_the_home(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's file")
    outside.chmod(0o644)
    state = tmp_path / "home" / "state"
    state.mkdir(parents=True)
    (state / "planted.sqlite").symlink_to(outside)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    (tmp_path / "home" / "cache").symlink_to(shared, target_is_directory=True)

    secure_home(tmp_path / "home")
    private_db(state / "planted.sqlite")

    assert mode(outside) == 0o644 and mode(shared) == 0o755


def test_the_users_own_home_directory_is_not_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    user_home = tmp_path / "me"
    (user_home / "state").mkdir(parents=True)
    user_home.chmod(0o755)
    (user_home / "state").chmod(0o755)
    monkeypatch.setenv("HOME", str(user_home))

    secure_home(user_home)  # PILOTHOUSE_HOME=~

    assert mode(user_home) == 0o755 and mode(user_home / "state") == 0o700


def test_the_umask_of_a_command_makes_new_files_owner_only(tmp_path: Path) -> None:
    before = restrict_umask()
    try:
        (tmp_path / "made").mkdir()
        (tmp_path / "made" / "file").write_text("x")
    finally:
        os.umask(before)
    assert mode(tmp_path / "made") == 0o700 and mode(tmp_path / "made" / "file") == 0o600
