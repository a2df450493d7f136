"""The PostgreSQL store: one schema of a PostgreSQL database holding every port of
:class:`memory.ports.Store`, for several bot processes on one database.

The source of truth as SQLite's file is for one process: users, threads, turns, sessions,
episodes, rounds, facts, pending work, deliveries, prompt records and the audit log, in the
tables of :mod:`memory.stores.postgres.store_migrations` (applied at open). A pool of asyncpg
connections (:mod:`memory.stores.postgres.database`) runs each port method's transaction on
one connection; no process-local cache of open sessions is kept, since another process may
write the same thread (the reply path reads the database: measured in docs/benchmarks.md).
"""

from __future__ import annotations

import logging
from datetime import datetime

from memory.errors import StoreError
from memory.stores.postgres.connection import mapped, redacted
from memory.stores.postgres.conversations import PgConversations
from memory.stores.postgres.database import Database
from memory.stores.postgres.deliveries import PgDeliveries
from memory.stores.postgres.episodes import PgEpisodes
from memory.stores.postgres.facts import PgFacts
from memory.stores.postgres.identities import PgIdentities
from memory.stores.postgres.privacy import PgPrivacy
from memory.stores.postgres.questions import PgQuestions
from memory.stores.postgres.records import PgRecords
from memory.stores.postgres.store_migrations import migrate
from memory.stores.postgres.work import PgWorkQueue

log = logging.getLogger("memory.stores.postgres")

#: What :meth:`PostgresStore.count_rows` counts.
COUNTED = frozenset({"users", "threads", "sessions", "turns", "episodes", "rounds", "facts",
                     "work", "audit_log"})

#: Connections one store opens at most (a turn's transaction holds one; reads take one each).
POOL_SIZE = 8


class PostgresStore:
    """:class:`memory.ports.Store` on one schema of a PostgreSQL database. Create with
    :meth:`open`; close with :meth:`close`.

    Attributes:
        identities, conversations, deliveries, facts, episodes, work, privacy, records,
            questions: the ports, sharing one pool.
        db: the pool (:class:`~memory.stores.postgres.database.Database`).
        path: ``postgresql:<schema>`` (export files are kept under the data folder instead,
            as a database has no folder).
        schema: the schema holding the tables.
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self.schema = db.schema
        self.path = f"postgresql:{db.schema}"
        self.identities = PgIdentities(db)
        self.conversations = PgConversations(db)
        self.deliveries = PgDeliveries(db)
        self.facts = PgFacts(db)
        self.episodes = PgEpisodes(db)
        self.work = PgWorkQueue(db)
        self.privacy = PgPrivacy(db)
        self.records = PgRecords(db)
        self.questions = PgQuestions(db)

    @classmethod
    async def open(cls, url: str, *, schema: str | None = None, scratch: bool = False,
                   pool_size: int = POOL_SIZE) -> PostgresStore:
        """Connect to ``url`` and migrate the store's tables in ``schema``.

        Args:
            url: ``postgresql://user:password@host:port/database``; its password never
                appears in logs or errors.
            schema: the schema (created when missing); None: the URL's current schema.
            scratch: a new schema ``scratch_<hex>`` instead, dropped with everything in it by
                :meth:`close` (evaluation runs and tests, never the live tables).
            pool_size: most connections open at once.

        Raises:
            StoreError: the database cannot be reached, refuses the login, or cannot be
                migrated (nothing is left open; a scratch schema is dropped).
        """
        db = await Database.open(url, schema=schema, scratch=scratch, pool_size=pool_size)
        try:
            async with mapped("store migration"), db._pool.acquire() as conn:
                applied = await migrate(conn, db.schema)
        except BaseException:
            await db.close()
            raise
        if applied:
            log.info("postgres store migrated schema=%s versions=%s url=%s", db.schema,
                     ",".join(map(str, applied)), redacted(url))
        return cls(db)

    async def close(self) -> None:
        """Close the pool (a scratch schema is dropped first)."""
        await self.db.close()

    async def indexed_ids(self) -> dict[str, list[int]]:
        """The ids of every fact, episode and round, ascending, keyed ``fact`` / ``episode`` /
        ``round`` (the index key prefixes)."""
        out: dict[str, list[int]] = {}
        for kind, table in (("fact", "facts"), ("episode", "episodes"), ("round", "rounds")):
            out[kind] = [r["id"] for r in await self.db.all(f"SELECT id FROM {table} ORDER BY id")]
        return out

    async def count_rows(self, table: str) -> int:
        """Number of rows in one of the store's tables (:data:`COUNTED`).

        Raises:
            StoreError: an unknown table.
        """
        if table not in COUNTED:
            raise StoreError(f"unknown table {table}")
        return await self.db.value(f"SELECT count(*) FROM {table}")

    async def optimize(self) -> None:
        """Refresh the query planner's statistics of the store's tables (``ANALYZE``)."""
        await self.db.execute("ANALYZE")

    async def claim_maintenance(self, day: str, now: datetime, *,
                                stale_before: datetime) -> bool:
        """Claim ``day``'s maintenance (:meth:`memory.ports.Store.claim_maintenance`): one
        statement, so of processes claiming at once the row lock lets one in."""
        return await self.db.one(
            "INSERT INTO maintenance_runs (day, started_at) VALUES ($1, $2) "
            "ON CONFLICT (day) DO UPDATE SET started_at = EXCLUDED.started_at "
            "WHERE maintenance_runs.done_at IS NULL AND maintenance_runs.started_at < $3 "
            "RETURNING day", (day, now, stale_before)) is not None

    async def finish_maintenance(self, day: str, now: datetime, *, done: bool) -> None:
        """End the claim of ``day`` (:meth:`memory.ports.Store.finish_maintenance`)."""
        if done:
            await self.db.execute("UPDATE maintenance_runs SET done_at = $1 WHERE day = $2",
                                  (now, day))
        else:
            await self.db.execute("DELETE FROM maintenance_runs WHERE day = $1 AND "
                                  "done_at IS NULL", (day,))

    async def purge_free_space(self) -> None:
        """Make deletions physical as far as PostgreSQL can from here: ``VACUUM`` the tables
        that deletions touch, so deleted rows' space is marked free and reused (their bytes
        are overwritten as pages are reused; ``VACUUM FULL`` would rewrite the tables under an
        exclusive lock, which a shared database should not take during service)."""
        for table in ("turns", "facts", "episodes", "rounds", "prompt_records",
                      "fact_candidates"):
            await self.db.execute(f"VACUUM {table}")
