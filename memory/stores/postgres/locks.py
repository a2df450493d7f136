"""Per-thread locks shared by every process on one database (:class:`memory.ports.ThreadLocks`):
PostgreSQL's session advisory locks.

Each lock set holds one connection of its own for its whole life, and every lock this process
holds of that set is a session advisory lock of that connection: ``hold(n)`` takes
``pg_try_advisory_lock(key)`` on it, ``key`` a 64-bit hash of the set's name, the store's
schema and ``n`` (``hashtextextended``, so a scratch schema never contends with the live one),
and while another process holds the key it tries again after :data:`RETRY_SECONDS` (doubling
to :data:`RETRY_MAX_SECONDS`). One connection per set and process, however many threads are
held at once, so a busy worker never runs out of connections to lock with, and no waiting
statement ties the connection up. The lock ends with the block (``pg_advisory_unlock``) or,
when the process dies, with its session: the server releases a session's advisory locks when
it ends (PostgreSQL documentation, 13.3.5 "Advisory Locks"), so a killed worker never leaves
a thread locked. Holders in one process first queue on an in-process lock of the thread
(first come, first served), so only the process's first contender polls the database.

If the lock connection is lost (the server restarted), the locks it held are gone with it; a
new connection is opened for the next ``hold`` and the loss is logged. A process whose machine
vanished without closing its connection keeps its locks until the server notices: within about
a minute (TCP keepalive and user timeout of the connection,
:data:`memory.stores.postgres.connection.SESSION_SETTINGS`), not the system's two hours.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import asyncpg

from memory.errors import StoreError
from memory.stores.postgres.connection import SESSION_SETTINGS, mapped, redacted
from memory.work_runner import LocalThreadLocks

log = logging.getLogger("memory.stores.postgres")

#: First wait (seconds) before trying a key another process holds again; doubles per try up
#: to :data:`RETRY_MAX_SECONDS`. A turn takes tens of milliseconds without a language model
#: and seconds with one, so the holder's release is noticed within about a tenth of a turn.
RETRY_SECONDS = 0.01
RETRY_MAX_SECONDS = 0.2


class PgThreadLocks:
    """:class:`memory.ports.ThreadLocks` across processes on one PostgreSQL database. Create
    with :meth:`open`; :meth:`close` releases whatever is still held.

    Attributes:
        name: what the locks guard (``turns``, ``work``, ``updates``): two sets of one name and
            schema exclude each other, sets of different names never do.
        schema: the store's schema the locks belong to.
        contended: tries that found the key held by another process (diagnostics, tests).
    """

    def __init__(self, url: str, conn: asyncpg.Connection, *, name: str, schema: str) -> None:
        self._url = url
        self._conn: asyncpg.Connection | None = conn
        self._statement = asyncio.Lock()  # one statement at a time on the connection
        self.name = name
        self.schema = schema
        self.contended = 0
        self._local = LocalThreadLocks()

    @classmethod
    async def open(cls, url: str, *, name: str, schema: str) -> PgThreadLocks:
        """Connect to ``url`` (``postgresql://...``): the set's one connection.

        Raises:
            StoreError: the server cannot be reached or refuses the login.
        """
        return cls(url, await _connect(url, name), name=name, schema=schema)

    def _key_text(self, thread_id: int) -> str:
        return f"memory-bot {self.name} {self.schema} {thread_id}"

    async def _run(self, sql: str, thread_id: int):
        async with self._statement:
            if self._conn is None or self._conn.is_closed():
                if self._conn is not None:
                    log.warning("thread locks %s: connection lost, reconnecting (locks held "
                                "on it are gone)", self.name)
                self._conn = await _connect(self._url, self.name)
            async with mapped("a thread lock"):
                return await self._conn.fetchval(sql, self._key_text(thread_id))

    @contextlib.asynccontextmanager
    async def hold(self, thread_id: int) -> AsyncIterator[None]:
        """Hold the lock of ``thread_id`` (any 64-bit integer) for the block, waiting for
        whoever holds it in this or another process.

        Raises:
            StoreError: the database cannot be reached (nothing is held).
        """
        async with self._local.hold(thread_id):
            delay = RETRY_SECONDS
            while not await self._run("SELECT pg_try_advisory_lock(hashtextextended($1, 0))",
                                      thread_id):
                self.contended += 1
                await asyncio.sleep(delay)
                delay = min(RETRY_MAX_SECONDS, delay * 2)
            try:
                yield
            finally:
                try:
                    await asyncio.shield(self._run(
                        "SELECT pg_advisory_unlock(hashtextextended($1, 0))", thread_id))
                except StoreError as exc:  # a lost connection released it already
                    log.warning("thread locks %s: unlock failed: %s", self.name, exc)

    async def held_elsewhere(self, thread_id: int) -> bool:
        """True when some session holds the lock of ``thread_id`` (tests and diagnostics:
        ``pg_locks`` of the advisory lock's key)."""
        async with self._statement:
            async with mapped("reading thread locks"):
                assert self._conn is not None
                key = await self._conn.fetchval("SELECT hashtextextended($1, 0)",
                                                self._key_text(thread_id))
                return bool(await self._conn.fetchval(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND ((classid::bigint << 32) | objid::bigint) = $1", key))

    async def close(self) -> None:
        """Close the connection (a lock still held ends with its session)."""
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                await conn.close()


async def _connect(url: str, name: str) -> asyncpg.Connection:
    async with mapped(f"connection to {redacted(url)}"):
        return await asyncpg.connect(url, server_settings={
            **SESSION_SETTINGS, "application_name": f"memory-bot locks {name}"})
