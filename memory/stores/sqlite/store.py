"""The SQLite store: one database file holding every port of :class:`memory.ports.Store`.

The source of truth for users, threads, turns, sessions, episodes, rounds, facts, pending
work, prompt records and the audit log. One connection (:mod:`memory.stores.sqlite.connection`),
WAL journal, foreign keys on, ``secure_delete`` on (deleted rows are zeroed, not left in free
pages), numbered migrations applied at open (:mod:`memory.stores.sqlite.migrations`). Writes run
in explicit ``BEGIN IMMEDIATE`` transactions under one lock, so a memory item is written in
the same transaction as the work record it completes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from memory.errors import StoreError
from memory.stores.sqlite.connection import Database
from memory.stores.sqlite.conversations import SQLiteConversations
from memory.stores.sqlite.deliveries import SQLiteDeliveries
from memory.stores.sqlite.episodes import SQLiteEpisodes
from memory.stores.sqlite.facts import SQLiteFacts
from memory.stores.sqlite.identities import SQLiteIdentities
from memory.stores.sqlite.privacy import SQLitePrivacy
from memory.stores.sqlite.questions import SQLiteQuestions
from memory.stores.sqlite.rows import ts
from memory.stores.sqlite.records import SQLiteRecords
from memory.stores.sqlite.work import SQLiteWorkQueue

#: What :meth:`SQLiteStore.count_rows` counts.
COUNTED = frozenset({"users", "threads", "sessions", "turns", "episodes", "rounds", "facts",
                     "work", "audit_log"})


class SQLiteStore:
    """:class:`memory.ports.Store` on one SQLite file. Create with :meth:`open`; close with
    :meth:`close`.

    Attributes:
        identities, conversations, deliveries, facts, episodes, work, privacy, records,
            questions: the ports, sharing one connection.
        db: the connection (:class:`~memory.stores.sqlite.connection.Database`).
        hot: the hot cache of open sessions and their newest turns (``db.hot``).
        path: the database file (``":memory:"`` for a private in-memory database).

    Raises:
        StoreError: the database cannot be opened or migrated.
    """

    #: Tables :meth:`insert_many` may load.
    BULK_TABLES = ("users", "accounts", "threads", "sessions", "turns", "episodes", "rounds",
                   "facts", "work")

    def __init__(self, db: Database) -> None:
        self.db = db
        self.path = db.path
        self.hot = db.hot
        self.identities = SQLiteIdentities(db)
        self.conversations = SQLiteConversations(db)
        self.deliveries = SQLiteDeliveries(db)
        self.facts = SQLiteFacts(db)
        self.episodes = SQLiteEpisodes(db)
        self.work = SQLiteWorkQueue(db)
        self.privacy = SQLitePrivacy(db)
        self.records = SQLiteRecords(db)
        self.questions = SQLiteQuestions(db)

    @classmethod
    async def open(cls, path: str | Path) -> SQLiteStore:
        """Open (creating if needed) the database at ``path`` (``":memory:"`` for tests),
        set the pragmas and apply pending migrations."""
        return cls(await Database.open(path))

    async def close(self) -> None:
        """Checkpoint the WAL and close the connection (a checkpoint that cannot run is
        logged and skipped: the WAL is folded in at the next open)."""
        await self.db.close()

    async def indexed_ids(self) -> dict[str, list[int]]:
        """The ids of every fact, episode and round, ascending, keyed ``fact`` / ``episode`` /
        ``round`` (the index key prefixes). Start-up reconcile compares them with the index
        keys without building a row object (at 100,000 facts building them all took ~4 s and
        ~130 MB: docs/benchmarks.md)."""
        out: dict[str, list[int]] = {}
        for kind, table in (("fact", "facts"), ("episode", "episodes"), ("round", "rounds")):
            out[kind] = [row[0] for row in await self.db.all(f"SELECT id FROM {table} ORDER BY id")]
        return out

    async def count_rows(self, table: str) -> int:
        """Number of rows in one of the store's tables (:data:`COUNTED`; checks and reports).

        Raises:
            StoreError: an unknown table.
        """
        if table not in COUNTED:
            raise StoreError(f"unknown table {table}")
        row = await self.db.one(f"SELECT count(*) AS n FROM {table}")
        return row["n"]

    async def optimize(self) -> None:
        """Let SQLite refresh its query-planner statistics (``PRAGMA optimize``), outside any
        other write transaction of this connection."""
        await self.db.pragma("optimize")

    async def claim_maintenance(self, day: str, now: datetime, *,
                                stale_before: datetime) -> bool:
        """Claim ``day``'s maintenance (:meth:`memory.ports.Store.claim_maintenance`)."""
        async with self.db.tx(hot=()) as tx:
            written = await tx.execute(
                "INSERT INTO maintenance_runs (day, started_at) VALUES (?, ?) "
                "ON CONFLICT (day) DO UPDATE SET started_at = excluded.started_at "
                "WHERE done_at IS NULL AND started_at < ?", (day, ts(now), ts(stale_before)))
        return written.rowcount == 1

    async def finish_maintenance(self, day: str, now: datetime, *, done: bool) -> None:
        """End the claim of ``day`` (:meth:`memory.ports.Store.finish_maintenance`)."""
        async with self.db.tx(hot=()) as tx:
            if done:
                await tx.execute("UPDATE maintenance_runs SET done_at = ? WHERE day = ?",
                                 (ts(now), day))
            else:
                await tx.execute("DELETE FROM maintenance_runs WHERE day = ? AND done_at IS NULL",
                                 (day,))

    async def purge_free_space(self) -> None:
        """Make deletions physical: checkpoint and truncate the WAL (pages are already zeroed
        by ``secure_delete``)."""
        await self.db.pragma("wal_checkpoint(TRUNCATE)")

    async def insert_many(self, table: str, columns: Sequence[str],
                          rows: Iterable[Sequence]) -> int:
        """Insert many rows into one table in one transaction (``executemany``): seeding
        benchmark stores. Values are stored as given (timestamps as UTC ISO-8601 text with
        microseconds, id lists as JSON); no policy runs. Not a port method: the rows are this
        backend's own.

        Returns:
            The number of rows inserted.

        Raises:
            StoreError: ``table`` or a column name is not allowed.
        """
        if table not in self.BULK_TABLES or not all(c.isidentifier() for c in columns):
            raise StoreError(f"bulk insert into {table}({', '.join(columns)}) is not allowed")
        rows = list(rows)
        sql = (f"INSERT INTO {table} ({', '.join(columns)}) "
               f"VALUES ({', '.join('?' * len(columns))})")
        async with self.db.tx() as tx:
            await tx.executemany(sql, rows)
        return len(rows)
