"""The SQLite store's one connection: a worker thread, the write lock, and the one place where
SQLite's errors become the core's :class:`~memory.errors.StoreError`.

``sqlite3`` blocks, so the connection lives in one worker thread of its own and every call is
one hand-off to it (``loop.run_in_executor`` on a one-thread executor): a read is one hand-off
(execute, fetch and close there), and a write transaction can be one hand-off as a whole
(:meth:`Database.write`), so the write lock is held for one event-loop wake-up instead of one
per statement (with 50 conversations at once, one per statement held it ~90% of the time and
replies queued 100-250 ms on it: docs/benchmarks.md, "Throughput"). The standard library's
``sqlite3`` and asyncio are all it needs, so no private API of an asyncio bridge is used.

Write transactions (``BEGIN IMMEDIATE`` ... ``COMMIT``, ``ROLLBACK`` on any error) run one at a
time under one lock and tell the hot cache (:mod:`memory.stores.sqlite.hot`) what they may
change, so the cache is never served stale.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from memory.errors import StoreError
from memory.stores.sqlite.hot import HotTurns
from memory.stores.sqlite.migrations import MIGRATIONS

log = logging.getLogger("memory.stores.sqlite")

#: SQLite's primary result codes (https://www.sqlite.org/rescode.html) and what they mean for
#: a user; any other failure is "failing".
_REASONS = {13: "full", 8: "read-only", 11: "damaged", 26: "damaged"}

#: Pages in the WAL that start an automatic checkpoint (SQLite's default is 1,000: 4 MB with
#: 4 KiB pages). With :data:`WAL_SIZE_LIMIT_BYTES` this keeps the WAL file near 256 KiB, so the
#: data folder of a young bot stays within a small multiple of its compacted size
#: (docs/benchmarks.md, "Disk growth").
WAL_CHECKPOINT_PAGES = 64
#: Size the WAL file is cut back to after a checkpoint (``PRAGMA journal_size_limit``).
WAL_SIZE_LIMIT_BYTES = 256 << 10

Statement = tuple[str, Sequence]
"""One SQL statement and its parameters (inside this package only: the ports take data)."""


def store_error(exc: sqlite3.Error, what: str) -> StoreError:
    """The core's :class:`StoreError` for a SQLite error, with its reason in words (disk or
    database full, read-only file or mount, damaged file; anything else is "failing")."""
    code = getattr(exc, "sqlite_errorcode", None)
    reason = _REASONS.get(code & 0xFF, "failing") if code is not None else "failing"
    return StoreError(f"{what}: {exc}", reason=reason)


@dataclass(frozen=True, slots=True)
class Written:
    """What one statement did: the row id it inserted and the rows it changed."""

    lastrowid: int | None
    rowcount: int


def _connect(path: str) -> sqlite3.Connection:
    """Open the connection (in the worker thread) with the store's pragmas."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.row_factory = sqlite3.Row
        for pragma in ("journal_mode=WAL", "foreign_keys=ON", "secure_delete=ON",
                       "synchronous=NORMAL", "busy_timeout=5000",
                       # the WAL file keeps the largest size it ever reached (4 MB at SQLite's
                       # default checkpoint of 1,000 pages), twenty times a young bot's
                       # database: checkpoint at WAL_CHECKPOINT_PAGES and cut the file back to
                       # WAL_SIZE_LIMIT_BYTES after each
                       f"wal_autocheckpoint={WAL_CHECKPOINT_PAGES}",
                       f"journal_size_limit={WAL_SIZE_LIMIT_BYTES}"):
            conn.execute(f"PRAGMA {pragma}")
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: sqlite3.Connection) -> list[int]:
    """Apply the pending numbered migrations, each in its own transaction; their numbers."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    applied = []
    for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
        conn.executescript(f"BEGIN; {script}; PRAGMA user_version={number}; COMMIT;")
        applied.append(number)
    return applied


def _in_transaction(conn: sqlite3.Connection, fn: Callable, args: Sequence):
    """``fn(conn, *args)`` between ``BEGIN IMMEDIATE`` and ``COMMIT`` (``ROLLBACK`` on any
    error, which is raised), in the worker thread: a whole write transaction is one
    hand-off."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(conn, *args)
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise
    return result


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:  # SQLite rolls back by itself after some errors (SQLITE_FULL)
        conn.execute("ROLLBACK")


def _fetch_one(conn: sqlite3.Connection, sql: str, args: Sequence):
    cur = conn.execute(sql, args)
    try:
        return cur.fetchone()
    finally:
        cur.close()


def _fetch_all(conn: sqlite3.Connection, sql: str, args: Sequence) -> list:
    return conn.execute(sql, args).fetchall()


def _execute(conn: sqlite3.Connection, sql: str, args: Sequence) -> Written:
    cur = conn.execute(sql, args)
    return Written(cur.lastrowid, cur.rowcount)


def _execute_many(conn: sqlite3.Connection, sql: str, rows: Iterable[Sequence]) -> Written:
    cur = conn.executemany(sql, rows)
    return Written(cur.lastrowid, cur.rowcount)


def execute_all(conn: sqlite3.Connection, statements: Sequence[Statement]) -> None:
    """Statements in order (inside :meth:`Database.write`)."""
    for sql, args in statements:
        conn.execute(sql, args)


class Database:
    """One SQLite connection in its own worker thread. Create with :meth:`open`.

    Attributes:
        path: the database file (``":memory:"`` for a private in-memory database).
        hot: the hot cache of open sessions and their newest turns, kept exact by every
            write transaction.

    Raises:
        StoreError: from every call, for any SQLite error (reason in words).
    """

    def __init__(self, path: str, executor: ThreadPoolExecutor,
                 conn: sqlite3.Connection) -> None:
        self.path = path
        self.hot = HotTurns()
        self._executor = executor
        self._conn = conn
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: str | Path) -> Database:
        """Open (creating if needed) the database at ``path``, set the pragmas and apply
        pending migrations.

        Raises:
            StoreError: it cannot be opened or migrated (nothing is left open).
        """
        path = str(path)
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        loop = asyncio.get_running_loop()
        conn = None
        try:
            if path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            conn = await loop.run_in_executor(executor, _connect, path)
            for number in await loop.run_in_executor(executor, _migrate, conn):
                log.info("sqlite migration %d applied", number)
        except BaseException as exc:
            if conn is not None:
                with contextlib.suppress(Exception):
                    await loop.run_in_executor(executor, conn.close)
            executor.shutdown(wait=False)
            if isinstance(exc, sqlite3.Error):
                raise store_error(exc, f"cannot open the database at {path}") from exc
            if isinstance(exc, OSError):
                raise StoreError(f"cannot open the database at {path}: {exc}") from exc
            raise
        return cls(path, executor, conn)

    async def close(self) -> None:
        """Checkpoint the WAL and close the connection and its thread. A checkpoint that
        cannot run (a full disk, a read-only mount) is logged and skipped: the WAL is folded
        in at the next open, and the connection is closed either way."""
        async with self._lock:
            try:
                await self._call(_execute, self._conn, "PRAGMA optimize", ())
                await self._call(_execute, self._conn, "PRAGMA wal_checkpoint(TRUNCATE)", ())
            except StoreError as exc:
                log.warning("sqlite checkpoint at close skipped: %s", exc)
            finally:
                with contextlib.suppress(sqlite3.Error):
                    await asyncio.get_running_loop().run_in_executor(self._executor,
                                                                     self._conn.close)
                self._executor.shutdown(wait=False)

    async def _call(self, fn: Callable, *args, what: str = "a database read failed"):
        """``fn(*args)`` in the worker thread; SQLite's errors become :class:`StoreError`."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
        except sqlite3.Error as exc:
            raise store_error(exc, what) from exc

    # ----------------------------------------------------------------- reads

    async def one(self, sql: str, args: Sequence = ()) -> sqlite3.Row | None:
        """The first row of ``sql`` or None (one hand-off: execute, fetch and close)."""
        return await self._call(_fetch_one, self._conn, sql, args)

    async def all(self, sql: str, args: Sequence = ()) -> list[sqlite3.Row]:
        """Every row of ``sql`` (one hand-off)."""
        return await self._call(_fetch_all, self._conn, sql, args)

    # ----------------------------------------------------------------- writes

    async def execute(self, sql: str, args: Sequence = ()) -> Written:
        """Run one statement (inside :meth:`tx`: the caller holds the transaction)."""
        return await self._call(_execute, self._conn, sql, args,
                                what="a database write failed")

    async def executemany(self, sql: str, rows: Iterable[Sequence]) -> Written:
        """Run one statement for each of ``rows`` (inside :meth:`tx`)."""
        return await self._call(_execute_many, self._conn, sql, list(rows),
                                what="a database write failed")

    @asynccontextmanager
    async def tx(self, hot: Sequence[int] | None = None) -> AsyncIterator[Database]:
        """A write transaction whose statements are awaited one by one (``await
        db.execute(...)``; reads see its uncommitted writes). ``hot`` says what it may change
        of the hot cache's data: None (the default) = any turn or session, so the whole cache
        is dropped; session ids = only those sessions' turns and rows; ``()`` = no turn and no
        session.

        Raises:
            StoreError: the transaction failed and was rolled back.
        """
        async with self._lock:
            self.hot.begin_write(hot)
            failed = True
            try:
                await self._call(_execute, self._conn, "BEGIN IMMEDIATE", (),
                                 what="a database write failed")
                try:
                    yield self
                    await self._call(_execute, self._conn, "COMMIT", (),
                                     what="a database write failed")
                except BaseException:
                    with contextlib.suppress(sqlite3.Error, StoreError):
                        await self._call(_rollback, self._conn)
                    raise
                failed = False
            finally:
                self.hot.end_write(hot, failed=failed)

    @asynccontextmanager
    async def write(self, hot: Sequence[int] | None = None
                    ) -> AsyncIterator[Callable[..., Awaitable]]:
        """A write transaction run as one function in the worker thread: yields ``run``;
        ``await run(fn, *args)`` executes ``fn(conn, *args)`` (``conn``: the
        ``sqlite3.Connection``) between ``BEGIN IMMEDIATE`` and ``COMMIT`` and returns its
        result. ``hot`` as in :meth:`tx`; the caller updates the hot cache inside the block.

        Raises:
            StoreError: the transaction failed and was rolled back (its ``reason`` says why).
        """
        async with self._lock:
            self.hot.begin_write(hot)
            failed = True
            try:
                yield self._run_in_transaction
                failed = False
            finally:
                self.hot.end_write(hot, failed=failed)

    async def _run_in_transaction(self, fn: Callable, *args):
        return await self._call(_in_transaction, self._conn, fn, args,
                                what="a database write failed")

    async def run_statements(self, statements: Sequence[Statement]) -> None:
        """Statements that touch no turn and no session, in one write transaction."""
        if statements:
            async with self.write(hot=()) as run:
                await run(execute_all, tuple(statements))

    async def pragma(self, statement: str) -> None:
        """Run a ``PRAGMA`` (``optimize``, ``wal_checkpoint(TRUNCATE)``) outside any write
        transaction of this connection."""
        async with self._lock:
            await self._call(_execute, self._conn, f"PRAGMA {statement}", (),
                             what="a database maintenance step failed")
