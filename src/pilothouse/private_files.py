"""Owner-only state: folders 0700 and files 0600 under PILOTHOUSE_HOME, set and checked.

Conversations, task histories, the code index and the model's prefix cache are as private as
the questions asked: another local user must not read them. Three layers keep it so:
- every Pilothouse command starts with a umask of 0o077 (`restrict_umask`), so whatever it or a
  library creates (SQLite's -wal and -shm files, ChromaDB's segments, cached prefixes) is
  owner-only, and so are the tool servers it starts, which inherit the umask;
- the folders and databases Pilothouse creates itself get explicit modes (`private_dir`,
  `private_db`), which hold even in a process that kept a looser umask;
- at start-up, `secure_home` tightens what an older version, a copy or a hand-made folder left
  open, and logs a warning that says what it changed.
Symlinks are never followed: tightening must not chmod a file outside the home.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from pilothouse.errors import ConfigurationError

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
PRIVATE_UMASK = 0o077
#: The folders of PILOTHOUSE_HOME that hold state. `models/` holds public weights and is left
#: alone (the home itself is 0700, so nobody else reaches them anyway).
PRIVATE_FOLDERS = ("state", "rag", "cache", "logs")
#: Files SQLite keeps beside a database, which hold the same rows.
SQLITE_SIDECARS = ("-wal", "-shm", "-journal")
_SHOWN = 5  # changed paths named in the warning; the rest are counted

log = logging.getLogger("pilothouse.private_files")


def restrict_umask() -> int:
    """Make files and folders this process creates from now on owner-only; the old umask."""
    return os.umask(PRIVATE_UMASK)


def _tighten(path: Path, changed: list[str]) -> None:
    """Take group and other bits off `path` (never through a symlink); record the change."""
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            return
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            os.chmod(path, mode & 0o700)
            changed.append(f"{path} {mode:04o} -> {mode & 0o700:04o}")
    except FileNotFoundError:
        return
    except OSError as exc:  # another user's file: say so rather than stop the command
        changed.append(f"{path} left as it is ({exc.strerror or exc}: fix it by hand)")


def private_dir(path: Path) -> Path:
    """`path` as a folder, created (with any missing parents) 0700.

    An existing folder keeps its mode here: it may be one the operator chose (the folder of a
    database URL); `secure_home` tightens the home's own folders at start-up.
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    try:
        for folder in reversed(missing):
            folder.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)
            os.chmod(folder, PRIVATE_DIR_MODE)  # mkdir's mode is masked by the umask
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot create the data directory {path}: {exc.strerror or exc}.",
            hint="Set PILOTHOUSE_HOME to a writable directory.",
        ) from exc
    return path


def private_db(path: Path) -> Path:
    """A SQLite file `path` created 0600 before SQLite opens it, in a 0700 folder.

    SQLite gives a database's -wal and -shm files the database's own mode, so those are
    owner-only too; an existing, looser database and its sidecars are tightened.
    """
    private_dir(path.parent)
    changed: list[str] = []
    try:
        if not os.path.lexists(path):  # a link someone placed is theirs: left as it is
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))
    except FileExistsError:  # another process created it first; tightened below
        pass
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot create the database file {path}: {exc.strerror or exc}.",
            hint="Set PILOTHOUSE_HOME to a writable directory.",
        ) from exc
    for candidate in (path, *(path.with_name(path.name + s) for s in SQLITE_SIDECARS)):
        _tighten(candidate, changed)
    _warn(changed)
    return path


def secure_home(home: Path, files: Iterable[Path] = ()) -> list[str]:
    """Check the home at start-up: create it 0700, tighten its state folders and `files`.

    The home's state folders (PRIVATE_FOLDERS) and everything in them become 0700 / 0600, and
    so do `files` (databases kept elsewhere) with their SQLite sidecars. The home folder itself
    is tightened unless it is the user's own home directory (PILOTHOUSE_HOME=~), which is not
    Pilothouse's to change. Returns the changes, which are also logged as one warning.
    """
    home = home.expanduser()
    changed: list[str] = []
    if not home.exists():
        private_dir(home)
    elif home.resolve() != Path.home().resolve():
        _tighten(home, changed)
    for name in PRIVATE_FOLDERS:
        folder = home / name
        if folder.is_symlink() or not folder.is_dir():
            continue
        _tighten(folder, changed)
        for current, dirs, names in os.walk(folder):  # does not descend into linked folders
            for entry in (*dirs, *names):
                _tighten(Path(current) / entry, changed)
    for file in files:
        for candidate in (file, *(file.with_name(file.name + s) for s in SQLITE_SIDECARS)):
            _tighten(candidate, changed)
    _warn(changed)
    return changed


def _warn(changed: list[str]) -> None:
    if not changed:
        return
    shown = "; ".join(changed[:_SHOWN])
    more = f"; and {len(changed) - _SHOWN} more" if len(changed) > _SHOWN else ""
    log.warning("Made Pilothouse state owner-only (other local users could read it): %s%s. "
                "Keep PILOTHOUSE_HOME private; Pilothouse creates its files 0600 and folders "
                "0700.", shown, more)
