"""Files only their owner may read: the data directory, the databases, the exports.

Captures hold every prompt, and the pool's database names accounts: the data directory
is 0700 and what StreamScope writes there (and the exports a user asks for) is 0600,
whatever the umask.

SQLite creates a database's ``-wal`` and ``-shm`` files with the mode of the database
file itself (and sets that mode exactly, ignoring the umask). So the database file is
created 0600 before SQLite opens it, and files that already exist (from an older
version) are brought to 0600 before the connection and again once WAL is on.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "connect",
    "exposed",
    "private_dir",
    "private_file",
    "write_private",
]

DIR_MODE = 0o700
FILE_MODE = 0o600
SIDECARS = ("-wal", "-shm", "-journal")


def private_dir(path: Path) -> Path:
    """Create ``path`` (and its parents) if missing; ``path`` itself is made 0700."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    if stat.S_IMODE(path.stat().st_mode) != DIR_MODE:
        os.chmod(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty if missing; either way its mode is 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


def write_private(path: Path | str, data: bytes | str) -> Path:
    """Write ``data`` (text as UTF-8) to ``path``, replacing it, with mode 0600; an
    existing file of a wider mode is narrowed before a byte is written."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb", closefd=False) as f:
            f.write(raw)
    finally:
        os.close(fd)
    return path


def tighten_sidecars(path: Path) -> None:
    """Bring the database's ``-wal``/``-shm``/``-journal`` files that exist to 0600."""
    for suffix in SIDECARS:
        side = path.with_name(path.name + suffix)
        try:
            if stat.S_IMODE(side.stat().st_mode) != FILE_MODE:
                os.chmod(side, FILE_MODE)
        except FileNotFoundError:
            continue


class UnusableDatabase(sqlite3.DatabaseError):
    """A file that SQLite cannot read as a database (corrupt, or some other file): the
    message names it, so the user knows which file to move aside."""


def connect(path: Path, *, wal: bool = True) -> sqlite3.Connection:
    """A SQLite connection to ``path`` whose files are all 0600 (``wal``: in WAL mode,
    ``synchronous=NORMAL``). The parent directory is created if missing.
    :class:`UnusableDatabase` when the file is not a database SQLite can read."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    private_file(path)
    tighten_sidecars(path)
    db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    try:
        if wal:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # reads its header
    except sqlite3.DatabaseError as exc:
        db.close()
        raise UnusableDatabase(
            f"{path} is not a database StreamScope can read ({exc}); move it aside "
            "(StreamScope then starts a new one there) or restore it from a backup"
        ) from None
    tighten_sidecars(path)
    return db


def exposed(path: Path) -> str | None:
    """Why ``path`` is readable by users other than its owner ("mode 0644: readable by
    group and others"), or None when it is not (or does not exist)."""
    if os.name == "nt":  # no POSIX modes: ACLs decide, which this does not read
        return None
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None
    who = [name for bit, name in ((stat.S_IRGRP, "group"), (stat.S_IROTH, "others")) if mode & bit]
    if not who:
        return None
    return f"mode {mode:04o}: readable by {' and '.join(who)}"
