"""Per-thread locks shared by every process on one database (:class:`memory.ports.ThreadLocks`):
PostgreSQL's session advisory locks.

``hold(n)`` takes a connection of the locks' own pool for the block and holds
``pg_advisory_lock(key)`` on it, ``key`` a 64-bit hash of the lock set's name, the store's
schema and ``n`` (``hashtextextended``, so a scratch schema never contends with the live one).
The lock ends with the block (``pg_advisory_unlock``) or, when the process dies, with its
connection: the server releases a session's advisory locks when the session ends
(PostgreSQL documentation, 13.3.5 "Advisory Locks"), so a killed worker never leaves a thread
locked. Holders of one process first queue on an in-process lock of the thread, so waiting
turns of one thread take no connection each; a connection is taken only by the process's
one contender for the thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import asyncpg

from memory.stores.postgres.connection import mapped, redacted
from memory.work_runner import LocalThreadLocks

#: Connections one lock set opens at most: threads held at once by this process (a holder
#: beyond it waits for a connection, never for another thread's lock).
POOL_SIZE = 8


class PgThreadLocks:
    """:class:`memory.ports.ThreadLocks` across processes on one PostgreSQL database. Create
    with :meth:`open`; :meth:`close` releases whatever is still held.

    Attributes:
        name: what the locks guard (``turns``, ``work``): two sets of one name and schema
            exclude each other, sets of different names never do.
        schema: the store's schema the locks belong to.
    """

    def __init__(self, pool: asyncpg.Pool, *, name: str, schema: str) -> None:
        self._pool = pool
        self.name = name
        self.schema = schema
        self._local = LocalThreadLocks()

    @classmethod
    async def open(cls, url: str, *, name: str, schema: str,
                   pool_size: int = POOL_SIZE) -> PgThreadLocks:
        """Connect to ``url`` (``postgresql://...``) with a pool of up to ``pool_size``
        connections for lock holders.

        Raises:
            StoreError: the server cannot be reached or refuses the login.
        """
        async with mapped(f"connection to {redacted(url)}"):
            pool = await asyncpg.create_pool(url, min_size=1, max_size=max(1, pool_size))
        return cls(pool, name=name, schema=schema)

    def _key_text(self, thread_id: int) -> str:
        return f"memory-bot {self.name} {self.schema} {thread_id}"

    @contextlib.asynccontextmanager
    async def hold(self, thread_id: int) -> AsyncIterator[None]:
        """Hold the lock of ``thread_id`` (any 64-bit integer) for the block, waiting for
        whoever holds it in this or another process.

        Raises:
            StoreError: the database cannot be reached (nothing is held).
        """
        async with self._local.hold(thread_id):
            async with mapped("taking a thread lock"):
                conn = await self._pool.acquire()
            try:
                async with mapped("taking a thread lock"):
                    await conn.execute("SELECT pg_advisory_lock(hashtextextended($1, 0))",
                                       self._key_text(thread_id))
                try:
                    yield
                finally:
                    with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError,
                                             OSError):  # a lost connection released it already
                        await conn.execute("SELECT pg_advisory_unlock(hashtextextended($1, 0))",
                                           self._key_text(thread_id))
            finally:
                # a connection back in the pool is reset, which ends any advisory lock left
                await self._pool.release(conn)

    async def held_elsewhere(self, thread_id: int) -> bool:
        """True when some session holds the lock of ``thread_id`` (tests and diagnostics:
        ``pg_locks`` of the advisory lock's key)."""
        async with mapped("reading thread locks"), self._pool.acquire() as conn:
            key = await conn.fetchval("SELECT hashtextextended($1, 0)", self._key_text(thread_id))
            return bool(await conn.fetchval(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND ((classid::bigint << 32) | objid::bigint) = $1", key))

    async def close(self) -> None:
        """Close the pool (a lock still held ends with its connection)."""
        await self._pool.close()
