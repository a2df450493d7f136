"""``memory-bot backup DEST`` and ``memory-bot restore SRC`` (docs/deploy.md "Backups").

A backup is a folder::

    DEST/manifest.json   format, UTC time, app version, embedder, schema version, checksum, counts
    DEST/memory.db       the SQLite database as of one commit (online backup API), one file
    DEST/lancedb/        the search index tables, each copied at one version

It is taken while the bot runs: it never takes the data folder's lock (``bot/datadir.py``) and
only reads the live files. Consistency, in order:

1. SQLite first, with the online backup API in one step: the copy is the database as of one
   commit, whatever the bot writes meanwhile (``memory/stores/snapshot.py``).
2. Then each LanceDB table pinned to its current version (later commits are not seen) and
   copied row by row, keeping only rows whose status and text equal what the SQLite copy says
   (``memory/backup.py``). The index lags SQLite by the time an embedding takes, so the copy
   may miss rows or carry a newer state of some; those rows are left out.
3. After a restore, start-up reconcile adds every item of SQLite the index copy lacks (and drops
   keys SQLite lacks), so the restored index equals SQLite: SQLite is the source of truth.

The manifest is written last: a folder without one is an incomplete backup and ``restore``
refuses it. Folders are created 0700 and files 0600, like the data folder.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from bot.app import open_store
from bot.datadir import ensure_data_dir, lock_data_dir
from memory.backup import index_expectations, matching_rows
from memory.errors import ConfigError
from memory.stores.lance_copy import copy_tables
from memory.stores.sqlite.migrations import MIGRATIONS
from memory.stores.snapshot import backup_sqlite, check_sqlite, file_sha256, seal_sqlite

log = logging.getLogger(__name__)

FORMAT = "memory-bot-backup/1"
MANIFEST = "manifest.json"
DB_FILE = "memory.db"
INDEX_DIR = "lancedb"
DATA_NAMES: tuple[str, ...] = (DB_FILE, f"{DB_FILE}-wal", f"{DB_FILE}-shm", INDEX_DIR)
"""Entries of a data folder that mean it already holds data (``logs/`` and the lock file do
not)."""


class BackupRefused(ConfigError):
    """A backup or restore that must not run as asked (exit code 2); the message says why."""


def app_version() -> str:
    """The installed ``memory-bot`` version, or ``"unknown"`` when not installed."""
    try:
        return metadata.version("memory-bot")
    except metadata.PackageNotFoundError:
        return "unknown"


def _secure(path: Path) -> None:
    """Owner-only permissions on ``path`` and everything under it (0700 folders, 0600 files)."""
    paths = [path, *path.rglob("*")] if path.is_dir() else [path]
    for p in paths:
        if p.is_symlink():
            continue
        p.chmod(0o700 if p.is_dir() else 0o600)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def data_in(folder: Path) -> list[str]:
    """Names in ``folder`` that mean it holds data: the database (with its WAL files) or a
    non-empty index folder. Empty for an absent folder."""
    found = []
    for name in DATA_NAMES:
        path = folder / name
        if path.is_dir():
            if any(path.iterdir()):
                found.append(name)
        elif path.exists():
            found.append(name)
    return found


def _check_destination(data_dir: Path, dest: Path) -> None:
    if dest == data_dir or data_dir in dest.parents:
        raise BackupRefused(f"the backup folder {dest} is inside the data folder {data_dir}; "
                            f"choose a folder outside it")
    if dest in data_dir.parents:
        raise BackupRefused(f"the backup folder {dest} contains the data folder {data_dir}; "
                            f"choose a new folder outside it")
    if dest.exists() and not dest.is_dir():
        raise BackupRefused(f"{dest} exists and is not a folder")
    if dest.is_dir() and any(dest.iterdir()):
        what = "a backup" if (dest / MANIFEST).exists() else "files"
        raise BackupRefused(f"the backup folder {dest} already holds {what}; choose a new or "
                            f"empty folder")


async def backup(data_dir: Path, dest: Path, *, embedder: str,
                 after_sqlite: Callable[[], Awaitable[object]] | None = None) -> dict[str, Any]:
    """Write a consistent backup of ``data_dir`` into ``dest`` while the bot may be running.

    Args:
        data_dir: the live data folder (``MEMORY_BOT_DATA_DIR``).
        dest: a new or empty folder outside ``data_dir`` (created 0700 when absent).
        embedder: the configured embedder, recorded in the manifest.
        after_sqlite: awaited between the SQLite copy and the index copy (a seam for tests,
            which let the bot write in exactly that window).

    Returns:
        The manifest written to ``dest/manifest.json`` (see the module docstring), plus
        ``elapsed_s`` (seconds, not stored).

    Raises:
        BackupRefused: ``dest`` is inside ``data_dir`` (or contains it), is not empty, or there
            is no database to back up.
        StoreError: a store cannot be read or the copy fails its integrity check; what was
            written to ``dest`` is removed.
    """
    started = time.perf_counter()
    data_dir = Path(data_dir).expanduser().resolve()
    dest = Path(dest).expanduser().resolve()
    _check_destination(data_dir, dest)
    db = data_dir / DB_FILE
    if not db.is_file():
        raise BackupRefused(f"no database at {db}: nothing to back up")
    created = not dest.exists()
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    dest.chmod(0o700)
    try:
        copy = dest / DB_FILE
        await asyncio.to_thread(backup_sqlite, db, copy)
        store = await open_store(copy)
        try:
            expected = await index_expectations(store)
        finally:
            await store.close()
        if after_sqlite is not None:
            await after_sqlite()
        tables: dict[str, dict[str, int]] = {}
        if (data_dir / INDEX_DIR).is_dir():
            tables = await copy_tables(data_dir / INDEX_DIR, dest / INDEX_DIR,
                                       keep=matching_rows(expected))
        snap = await asyncio.to_thread(seal_sqlite, copy)
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "app_version": app_version(),
            "embedder": embedder,
            "source": str(data_dir),
            "sqlite": {"file": DB_FILE, "schema_version": snap.schema_version,
                       "bytes": snap.bytes, "sha256": snap.sha256},
            "counts": snap.counts,
            "index": {"folder": INDEX_DIR, "tables": tables},
        }
        for leftover in (dest / f"{DB_FILE}-wal", dest / f"{DB_FILE}-shm"):
            leftover.unlink(missing_ok=True)
        tmp = dest / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        _fsync(copy)
        _fsync(tmp)
        os.replace(tmp, dest / MANIFEST)
        _secure(dest)
    except BaseException:
        if created:
            shutil.rmtree(dest, ignore_errors=True)
        else:
            for child in dest.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink(missing_ok=True)
        raise
    elapsed = time.perf_counter() - started
    log.info("backup written dest=%s users=%s facts=%s index_rows=%d s=%.2f", dest,
             snap.counts.get("users"), snap.counts.get("facts"),
             sum(t["rows"] for t in tables.values()), elapsed)
    return {**manifest, "elapsed_s": round(elapsed, 3)}


def read_manifest(src: Path) -> dict[str, Any]:
    """Read and check ``src/manifest.json`` and the database it describes.

    Checks: the manifest exists and has :data:`FORMAT`; ``memory.db`` exists with the recorded
    SHA-256; ``PRAGMA integrity_check`` passes; the schema is not newer than this version knows.

    Raises:
        BackupRefused: any check fails (the message names it).
        StoreError: the database cannot be opened at all.
    """
    src = Path(src).expanduser().resolve()
    if not src.is_dir():
        raise BackupRefused(f"{src} is not a backup folder")
    path = src / MANIFEST
    if not path.is_file():
        raise BackupRefused(f"{src} has no {MANIFEST}: not a backup, or an incomplete one")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackupRefused(f"cannot read {path}: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise BackupRefused(f"{path}: unknown backup format {got!r} (expected {FORMAT})")
    db = src / DB_FILE
    if not db.is_file():
        raise BackupRefused(f"{src} has no {DB_FILE}")
    want = manifest.get("sqlite", {}).get("sha256")
    if file_sha256(db) != want:
        raise BackupRefused(f"{db} does not match the checksum in {MANIFEST}: the backup is "
                            f"damaged or was changed")
    version, problems = check_sqlite(db)
    if problems:
        raise BackupRefused(f"{db} fails the integrity check: {'; '.join(problems[:5])}")
    if version > len(MIGRATIONS):
        raise BackupRefused(f"the backup's database schema is version {version} but this "
                            f"memory-bot knows up to {len(MIGRATIONS)}; upgrade memory-bot "
                            f"before restoring it")
    return manifest


async def restore(src: Path, data_dir: Path) -> dict[str, Any]:
    """Restore the backup folder ``src`` into ``data_dir``, which must be empty or absent.

    The manifest and the database are checked first (:func:`read_manifest`); the data folder's
    lock is held while copying, so a bot cannot start on the half-restored folder. The index
    folder is copied before the database, and the database is moved into place last (an atomic
    rename), so an interrupted restore leaves no ``memory.db`` and can be run again. The next
    start reconciles the index with the restored database.

    Returns:
        The backup's manifest.

    Raises:
        BackupRefused: ``src`` is not a sound backup, or ``data_dir`` already holds data.
        DataDirInUse: a memory-bot process holds the data folder.
    """
    src = Path(src).expanduser().resolve()
    data_dir = Path(data_dir).expanduser().resolve()
    manifest = read_manifest(src)
    if data_dir.exists() and not data_dir.is_dir():
        raise BackupRefused(f"the data folder {data_dir} is not a folder")

    def refuse_if_not_empty() -> None:
        found = data_in(data_dir)
        if found:
            raise BackupRefused(
                f"the data folder {data_dir} already holds data ({', '.join(found)}); restore "
                f"only into an empty or absent folder: stop the bot, move the folder away, "
                f"then restore")

    refuse_if_not_empty()
    ensure_data_dir(data_dir)
    lock = lock_data_dir(data_dir)
    try:
        refuse_if_not_empty()  # again, under the lock
        index_tmp = data_dir / (INDEX_DIR + ".restoring")
        db_tmp = data_dir / (DB_FILE + ".restoring")
        shutil.rmtree(index_tmp, ignore_errors=True)  # left by an interrupted restore
        db_tmp.unlink(missing_ok=True)
        if (src / INDEX_DIR).is_dir():
            await asyncio.to_thread(shutil.copytree, src / INDEX_DIR, index_tmp)
            _secure(index_tmp)
            if (data_dir / INDEX_DIR).is_dir():
                (data_dir / INDEX_DIR).rmdir()  # empty (checked above)
            os.replace(index_tmp, data_dir / INDEX_DIR)
        await asyncio.to_thread(shutil.copyfile, src / DB_FILE, db_tmp)
        _secure(db_tmp)
        _fsync(db_tmp)
        os.replace(db_tmp, data_dir / DB_FILE)
    finally:
        lock.release()
    log.info("backup restored src=%s data_dir=%s created_at=%s", src, data_dir,
             manifest.get("created_at"))
    return manifest


def describe(manifest: dict[str, Any]) -> str:
    """One line about a backup: when, which version, and what it holds."""
    counts = manifest.get("counts", {})
    tables = manifest.get("index", {}).get("tables", {})
    rows = sum(t.get("rows", 0) for t in tables.values())
    left = sum(t.get("dropped", 0) for t in tables.values())
    return (f"taken {manifest.get('created_at')} by memory-bot {manifest.get('app_version')} "
            f"(embedder {manifest.get('embedder')}): {counts.get('users', 0)} user(s), "
            f"{counts.get('facts', 0)} fact(s), {counts.get('episodes', 0)} episode(s), "
            f"{counts.get('turns', 0)} message(s); index {rows} row(s)"
            + (f", {left} left for start-up reconcile" if left else ""))
