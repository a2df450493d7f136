"""Consistent copies of the SQLite database while another process writes to it.

SQLite's online backup API (``sqlite3.Connection.backup``, https://sqlite.org/backup.html) with
all pages in one step (``pages=-1``) copies the database inside one read transaction: with WAL,
readers do not block the writer and the writer does not disturb the reader, so the copy is the
database as of one commit. The copy is then switched to the rollback journal
(``journal_mode=DELETE``) so a backup is one self-contained file.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from memory.errors import StoreError

COUNTED_TABLES: tuple[str, ...] = ("users", "accounts", "threads", "sessions", "turns", "facts",
                                   "episodes", "rounds")
"""Tables whose row counts a backup manifest records."""


@dataclass(frozen=True, slots=True)
class SqliteSnapshot:
    """What :func:`backup_sqlite` wrote.

    Attributes:
        schema_version: ``PRAGMA user_version`` of the copy (the number of migrations applied).
        bytes: size of the copy in bytes.
        sha256: hex SHA-256 of the copy's bytes.
        counts: rows per table of :data:`COUNTED_TABLES` (tables that do not exist are left out).
    """

    schema_version: int
    bytes: int
    sha256: str
    counts: dict[str, int]


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def table_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows per table of :data:`COUNTED_TABLES` that exists in ``conn``."""
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in COUNTED_TABLES if t in present}


def backup_sqlite(src: Path, dest: Path, *, busy_timeout_s: float = 30.0) -> None:
    """Copy the live database ``src`` into the new file ``dest`` (one commit's state).

    Blocking (run it in a worker thread from async code). ``src`` is opened read-only, so this
    never writes to the live database; ``dest`` must not exist. Finish the copy with
    :func:`seal_sqlite`.

    Args:
        src: the live database (WAL mode; another process may be writing to it).
        dest: where to write the copy.
        busy_timeout_s: how long to wait for a lock held by the writer (a checkpoint), seconds.

    Raises:
        StoreError: ``src`` cannot be read or ``dest`` exists.
    """
    if dest.exists():
        raise StoreError(f"{dest} already exists")
    try:
        source = sqlite3.connect(f"{src.resolve().as_uri()}?mode=ro", uri=True,
                                 timeout=busy_timeout_s)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {src}: {exc}") from exc
    try:
        target = sqlite3.connect(dest)
        try:
            source.backup(target, pages=-1)
        finally:
            target.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot back up {src}: {exc}") from exc
    finally:
        source.close()


def seal_sqlite(path: Path) -> SqliteSnapshot:
    """Make the copy at ``path`` one self-contained file (``journal_mode=DELETE``), check it
    (``PRAGMA integrity_check``) and describe it. Blocking.

    Raises:
        StoreError: the copy cannot be opened or fails the integrity check.
    """
    try:
        conn = sqlite3.connect(path)
        try:
            conn.execute("PRAGMA journal_mode=DELETE")
            problems = integrity_problems(conn)
            if problems:
                raise StoreError(f"the copy {path} is damaged: {'; '.join(problems[:5])}")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            counts = table_counts(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot check the copy {path}: {exc}") from exc
    return SqliteSnapshot(schema_version=version, bytes=path.stat().st_size,
                          sha256=file_sha256(path), counts=counts)


def integrity_problems(conn: sqlite3.Connection) -> list[str]:
    """``PRAGMA integrity_check`` of ``conn``: an empty list when the database is sound."""
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
    return [] if rows == ["ok"] else rows


def check_sqlite(path: Path) -> tuple[int, list[str]]:
    """Open ``path`` read-only and return ``(schema version, integrity problems)``.

    Raises:
        StoreError: the file cannot be opened as a database.
    """
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return conn.execute("PRAGMA user_version").fetchone()[0], integrity_problems(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"{path} is not a readable SQLite database: {exc}") from exc
