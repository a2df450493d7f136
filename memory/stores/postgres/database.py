"""The PostgreSQL store's connections: a pool in one schema, the transaction of the running
task, and the one place where the store's driver errors become
:class:`~memory.errors.StoreError` (every call below goes through :func:`mapped`).

A write transaction (:meth:`Database.tx`) holds one pooled connection for its block; the
reads and writes of that block, awaited in the same task, run on it (a context variable names
it), so they see the block's uncommitted writes as the SQLite store's one connection does.
Outside a transaction every call takes a connection from the pool for one statement.
Transactions run at PostgreSQL's default isolation (READ COMMITTED); the port methods that
read before they write lock the rows they decide on (``SELECT ... FOR UPDATE``: the thread of
a turn, the job being completed, the user being deleted), so several processes on one
database serialise exactly where one SQLite process serialised every write.

Rows come back as dicts in the column form of :mod:`memory.stores.columns`: ``timestamptz``
values as UTC ISO-8601 text with microseconds (:func:`~memory.stores.columns.ts`), so the row
builders, the export document and the other backends read them alike; parameters are given
as Python values (aware datetimes for timestamps).
"""

from __future__ import annotations

import contextvars
import logging
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from memory.errors import StoreError
from memory.stores.columns import ts
from memory.stores.postgres.connection import SESSION_SETTINGS, mapped, redacted
from memory.stores.postgres.migrations import ident

log = logging.getLogger("memory.stores.postgres")

Statement = tuple[str, Sequence]
"""One SQL statement and its parameters (inside this package only: the ports take data)."""


def row_dict(record: asyncpg.Record) -> dict:
    """A fetched row as a dict of the column form (timestamps as UTC ISO text)."""
    return {k: (ts(v) if isinstance(v, datetime) else v) for k, v in record.items()}


@dataclass(frozen=True, slots=True)
class Written:
    """What one statement did: the rows it changed (the count of its command tag)."""

    rowcount: int


def _rowcount(status: str) -> int:
    """The row count of a command tag (``UPDATE 3``, ``INSERT 0 1``); 0 for none."""
    last = status.rsplit(" ", 1)[-1] if status else ""
    return int(last) if last.isdigit() else 0


class Database:
    """A pool of connections to one schema of a PostgreSQL database. Create with
    :meth:`open`.

    Attributes:
        url: the database's URL (never logged but :func:`redacted`).
        schema: the schema holding the store's tables (every connection's ``search_path``).
        scratch: whether :meth:`close` drops the schema (a scratch schema :meth:`open`
            created).

    Raises:
        StoreError: from every call, for any driver or connection error (reason in words).
    """

    def __init__(self, url: str, schema: str, pool: asyncpg.Pool, *, scratch: bool) -> None:
        self.url = url
        self.schema = schema
        self.scratch = scratch
        self._pool = pool
        self._current: contextvars.ContextVar[asyncpg.Connection | None] = (
            contextvars.ContextVar(f"pg_tx_{id(self)}", default=None))

    @classmethod
    async def open(cls, url: str, *, schema: str | None = None, scratch: bool = False,
                   pool_size: int = 4) -> Database:
        """Connect to ``url`` with ``search_path`` set to ``schema``.

        Args:
            url: ``postgresql://user:password@host:port/database``.
            schema: the schema (created when missing); None: the URL's current schema
                (``public`` unless the URL sets ``?search_path=...``).
            scratch: create a new schema ``scratch_<hex>`` instead, dropped by :meth:`close`
                with everything in it (evaluation runs and tests, never the live tables).
            pool_size: most connections open at once.

        Raises:
            StoreError: the server cannot be reached or refuses the login, or the schema
                cannot be created.
        """
        async with mapped(f"connection to {redacted(url)}"):
            conn = await asyncpg.connect(url)
            try:
                if scratch:
                    schema = f"scratch_{uuid.uuid4().hex[:16]}"
                elif schema is None:
                    schema = await conn.fetchval("SELECT current_schema()")
                    if schema is None:
                        raise StoreError("the URL's search_path names no existing schema")
                await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {ident(schema)}")
            finally:
                await conn.close()
        try:
            async with mapped(f"connection to {redacted(url)}"):
                pool = await asyncpg.create_pool(
                    url, min_size=1, max_size=max(1, pool_size),
                    server_settings={**SESSION_SETTINGS, "search_path": schema})
        except BaseException:
            if scratch:
                await _drop_schema(url, schema)
            raise
        return cls(url, schema, pool, scratch=scratch)

    async def close(self) -> None:
        """Close the pool (dropping a scratch schema first)."""
        try:
            if self.scratch:
                async with mapped("dropping the scratch schema"), self._pool.acquire() as conn:
                    await conn.execute(f"DROP SCHEMA IF EXISTS {ident(self.schema)} CASCADE")
        finally:
            await self._pool.close()

    # ----------------------------------------------------------------- statements

    @asynccontextmanager
    async def _conn(self) -> AsyncIterator[asyncpg.Connection]:
        current = self._current.get()
        if current is not None:
            yield current
            return
        async with self._pool.acquire() as conn:
            yield conn

    async def one(self, sql: str, args: Sequence = ()) -> dict | None:
        """The first row of ``sql`` or None."""
        async with mapped("a database read"), self._conn() as conn:
            row = await conn.fetchrow(sql, *args)
        return row_dict(row) if row is not None else None

    async def all(self, sql: str, args: Sequence = ()) -> list[dict]:
        """Every row of ``sql``."""
        async with mapped("a database read"), self._conn() as conn:
            return [row_dict(r) for r in await conn.fetch(sql, *args)]

    async def value(self, sql: str, args: Sequence = ()):
        """The first column of the first row of ``sql`` (None when there is no row): an
        ``INSERT ... RETURNING id``'s id, a count."""
        async with mapped("a database statement"), self._conn() as conn:
            return await conn.fetchval(sql, *args)

    async def execute(self, sql: str, args: Sequence = ()) -> Written:
        """Run one statement (inside :meth:`tx`, on its connection)."""
        async with mapped("a database write"), self._conn() as conn:
            return Written(_rowcount(await conn.execute(sql, *args)))

    async def executemany(self, sql: str, rows: Iterable[Sequence]) -> None:
        """Run one statement for each of ``rows``."""
        rows = list(rows)
        if rows:
            async with mapped("a database write"), self._conn() as conn:
                await conn.executemany(sql, rows)

    @asynccontextmanager
    async def tx(self) -> AsyncIterator[Database]:
        """A transaction on one connection for the block (``COMMIT`` at its end, ``ROLLBACK``
        on any error, which is raised); calls of this object awaited in the block run on it.
        A block inside another block of the same task is a savepoint of it.

        Raises:
            StoreError: the transaction failed and was rolled back.
        """
        current = self._current.get()
        if current is not None:
            async with mapped("a database write"), current.transaction():
                yield self
            return
        async with mapped("a database write"), self._pool.acquire() as conn:
            token = self._current.set(conn)
            try:
                async with conn.transaction():
                    yield self
            finally:
                self._current.reset(token)

    async def run_statements(self, statements: Sequence[Statement]) -> None:
        """Statements in order, in one transaction."""
        if statements:
            async with self.tx() as tx:
                for sql, args in statements:
                    await tx.execute(sql, args)

    async def lock(self, key: str) -> None:
        """A transaction-level advisory lock on ``key`` (inside :meth:`tx`: released at its
        end), for decisions that have no row to lock yet (who creates a user's account)."""
        await self.execute("SELECT pg_advisory_xact_lock(hashtext($1))", (key,))


async def _drop_schema(url: str, schema: str) -> None:
    """Drop a scratch schema after a failed open (best effort: logged when it cannot)."""
    try:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(f"DROP SCHEMA IF EXISTS {ident(schema)} CASCADE")
        finally:
            await conn.close()
    except (asyncpg.PostgresError, OSError) as exc:
        log.warning("scratch schema %s not dropped: %s", schema, type(exc).__name__)
