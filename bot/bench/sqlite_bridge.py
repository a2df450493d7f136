"""Per-call latency of the SQLite store's hot calls through its own worker thread against
aiosqlite's public API (docs/benchmarks.md, "The SQLite bridge").

``python -m bot.bench.sqlite_bridge [--calls 400] [--rounds 5] [--tasks 1 20]``

Needs ``aiosqlite`` (a development dependency only: the bot itself does not use it).

Three copies of one seeded database file (``--tasks`` private threads of one user each, 200
turns in each thread's open session, 100 facts each), one per side:

* **executor (store)**: the store's own port methods (:class:`memory.stores.sqlite.SQLiteStore`:
  a ``sqlite3`` connection on a one-thread executor, a whole turn's transaction one hand-off),
  with everything they do besides SQL (the hot cache, building the returned rows);
* **executor (same SQL)**: the statements of the aiosqlite side through the store's connection
  (:class:`~memory.stores.sqlite.connection.Database`: ``write`` for the turn, one hand-off;
  ``tx`` for the fact, one per statement; ``all`` for reads), so only the bridge differs;
* **aiosqlite (public API)**: an ``aiosqlite`` connection running those statements through
  its public API only (``execute``, ``execute_fetchall``; a transaction is ``BEGIN
  IMMEDIATE`` ... ``COMMIT``, each statement one hand-off to aiosqlite's thread, under one
  asyncio lock as the store's writes are; aiosqlite has no public way to run a function in
  its thread, so a turn's transaction cannot be one hand-off).

Three calls, as the reply path makes them:

* **append a turn**: ``conversations.add_turn`` of a user turn with a platform message id and
  fold bounds, the session known from the hot cache (duplicate check, session update, turn
  insert, fold check: four statements in one transaction);
* **recent turns**: ``conversations.session_turns(limit=20)``, read from SQLite (not the hot
  cache), rows built into turns;
* **fact upsert**: ``facts.add_fact`` (the insert in a transaction, then the fact read back).

Each round runs ``--calls`` of each call on each side, the sides' order rotating round by
round (so the machine's load drifts over all of them); with ``--tasks N`` above 1, N threads call at once
(N concurrent conversations, the calls of a round split among them). Printed per side, call
and task count: wall time per call p50 / p95 in milliseconds over all rounds, and the CPU of
the whole process (event loop and worker threads) per call in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from memory.records import ThreadRow
from memory.stores.sqlite import SQLiteStore
from memory.stores.sqlite.connection import WAL_CHECKPOINT_PAGES, WAL_SIZE_LIMIT_BYTES
from memory.stores.sqlite.rows import fact_of, ts, turn_of
from memory.types import ChatKind, Role, Scope, ThreadKey

FOLD_AFTER = (10**9, 10**9, 0)  # the fold check runs, no fold job is recorded
SEED_TURNS = 200
SEED_FACTS = 100
RECENT = 20
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
PRAGMAS = ("journal_mode=WAL", "foreign_keys=ON", "secure_delete=ON", "synchronous=NORMAL",
           "busy_timeout=5000", f"wal_autocheckpoint={WAL_CHECKPOINT_PAGES}",
           f"journal_size_limit={WAL_SIZE_LIMIT_BYTES}")  # as the store's connection sets


#: The statements of the timed calls, the same for both sides (one place, so the two sides
#: cannot drift apart and the comparison stays one of the hand-off alone).
SEEN_TURN = "SELECT * FROM turns WHERE thread_id = ? AND platform_message_id = ?"
TOUCH_SESSION = "UPDATE sessions SET last_turn_at = max(last_turn_at, ?) WHERE id = ?"
INSERT_TURN = ("INSERT INTO turns (thread_id, session_id, user_id, role, speaker, text, "
               "created_at, platform_message_id, generated_by, memory_off, tokens) "
               "VALUES (?,?,?,?,?,?,?,?,?,?,?)")
UNFOLDED = ("SELECT count(*), coalesce(sum(t.tokens), 0) FROM turns t "
            "JOIN sessions s ON s.id = t.session_id WHERE t.session_id = ? "
            "AND t.id > s.folded_through")
RECENT_TURNS = ("SELECT * FROM (SELECT * FROM turns WHERE session_id = ? ORDER BY id DESC LIMIT ?)"
                " ORDER BY id")
INSERT_FACT = ("INSERT INTO facts (user_id, kind, text, topic, status, created_at, valid_from,"
               " last_confirmed_at, origin_thread_id, origin_kind, origin_title, "
               "source_turn_ids, lang, scope, value, mode) "
               "VALUES (?,?,?,?,'active',?,?,?,?,?,?,?,?,?,?,?)")


def _turn_params(thread_id: int, session_id: int, user_id: int, n: int, stamp: str) -> tuple:
    return (thread_id, session_id, user_id, Role.USER.value, None, f"bench turn {n}", stamp,
            f"b{n}", None, 0, 8)


def _fact_params(user_id: int, thread: ThreadRow, n: int, at) -> tuple:
    return (user_id, "preference", f"bench fact {n}", None, ts(at), ts(at), ts(at), thread.id,
            thread.chat_kind.value, thread.title, "[]", "en", str(Scope.private(user_id)), None,
            "explicit")


class Seeded:
    """What the seeding made: per thread ``(user_id, ThreadRow, session_id)``."""

    def __init__(self, threads: list[tuple[int, ThreadRow, int]]) -> None:
        self.threads = threads


async def seed(path: Path, tasks: int) -> Seeded:
    """Create the database at ``path`` through the store: ``tasks`` users with a private thread
    each, :data:`SEED_TURNS` turns and :data:`SEED_FACTS` facts per thread."""
    store = await SQLiteStore.open(path)
    threads = []
    try:
        for n in range(tasks):
            user = await store.identities.user_for_account("bench", f"u{n}", f"user {n}", T0)
            thread = await store.identities.thread_for_key(
                ThreadKey("bench", f"c{n}"), ChatKind.PRIVATE, None, T0)
            turn = None
            for i in range(SEED_TURNS):
                turn, _ = await store.conversations.add_turn(
                    thread_id=thread.id, role=Role.USER if i % 2 == 0 else Role.ASSISTANT,
                    text=f"seed turn {i} of thread {n}", at=T0 + timedelta(seconds=i),
                    user_id=user.id, platform_message_id=f"seed{i}", tokens=8)
            for i in range(SEED_FACTS):
                await store.facts.add_fact(
                    user_id=user.id, kind="preference", text=f"seed fact {i} of user {n}",
                    topic=None, origin=thread, source_turn_ids=[turn.id], lang="en",
                    scope=Scope.private(user.id), now=T0)
            threads.append((user.id, thread, turn.session_id))
    finally:
        await store.close()
    return Seeded(threads)


class StoreSide:
    """The store's own calls (one-thread executor)."""

    name = "executor (store)"

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    async def append_turn(self, user_id, thread, session_id, n, at):
        await self.store.conversations.add_turn(
            thread_id=thread.id, role=Role.USER, text=f"bench turn {n}", at=at,
            user_id=user_id, platform_message_id=f"b{n}", tokens=8, fold_after=FOLD_AFTER)

    async def recent_turns(self, user_id, thread, session_id, n, at):
        return await self.store.conversations.session_turns(session_id, limit=RECENT)

    async def fact_upsert(self, user_id, thread, session_id, n, at):
        await self.store.facts.add_fact(
            user_id=user_id, kind="preference", text=f"bench fact {n}", topic=None,
            origin=thread, source_turn_ids=[], lang="en", scope=Scope.private(user_id), now=at)

    async def close(self) -> None:
        await self.store.close()


def _append_turn_tx(conn: sqlite3.Connection, thread_id: int, session_id: int, user_id: int,
                    n: int, stamp: str) -> None:
    """:meth:`AiosqliteSide.append_turn`'s statements as one function in the worker thread."""
    if conn.execute(SEEN_TURN, (thread_id, f"b{n}")).fetchone() is not None:
        raise AssertionError("a bench turn was stored twice")
    conn.execute(TOUCH_SESSION, (stamp, session_id))
    conn.execute(INSERT_TURN, _turn_params(thread_id, session_id, user_id, n, stamp))
    conn.execute(UNFOLDED, (session_id,)).fetchone()


class ExecutorSide:
    """The SQL of :class:`AiosqliteSide` through the store's connection
    (:class:`~memory.stores.sqlite.connection.Database`): the bridge alone differs."""

    name = "executor (same SQL)"

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.db = store.db

    async def append_turn(self, user_id, thread, session_id, n, at):
        async with self.db.write(hot=()) as run:  # no hot cache, as on the aiosqlite side
            await run(_append_turn_tx, thread.id, session_id, user_id, n, ts(at))

    async def recent_turns(self, user_id, thread, session_id, n, at):
        rows = await self.db.all(RECENT_TURNS, (session_id, RECENT))
        return [turn_of(r) for r in rows]

    async def fact_upsert(self, user_id, thread, session_id, n, at):
        async with self.db.tx(hot=()) as tx:
            cur = await tx.execute(INSERT_FACT, _fact_params(user_id, thread, n, at))
        [row] = await self.db.all("SELECT * FROM facts WHERE id IN (?)", (cur.lastrowid,))
        return fact_of(row)

    async def close(self) -> None:
        await self.store.close()


class AiosqliteSide:
    """The same SQL through aiosqlite's public API."""

    name = "aiosqlite (public API)"

    def __init__(self, conn) -> None:
        self.conn = conn
        self.lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path) -> AiosqliteSide:
        import aiosqlite  # a development dependency only: see the module docstring

        conn = await aiosqlite.connect(str(path), isolation_level=None)
        conn.row_factory = sqlite3.Row
        for pragma in PRAGMAS:
            await conn.execute(f"PRAGMA {pragma}")
        return cls(conn)

    async def _transaction(self, body):
        async with self.lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                result = await body()
                await self.conn.execute("COMMIT")
            except BaseException:
                await self.conn.execute("ROLLBACK")
                raise
            return result

    async def append_turn(self, user_id, thread, session_id, n, at):
        conn, stamp, pmid = self.conn, ts(at), f"b{n}"

        async def body():
            if await conn.execute_fetchall(SEEN_TURN, (thread.id, pmid)):
                raise AssertionError("a bench turn was stored twice")
            await conn.execute(TOUCH_SESSION, (stamp, session_id))
            await conn.execute(INSERT_TURN, _turn_params(thread.id, session_id, user_id, n, stamp))
            await conn.execute_fetchall(UNFOLDED, (session_id,))

        await self._transaction(body)

    async def recent_turns(self, user_id, thread, session_id, n, at):
        rows = await self.conn.execute_fetchall(RECENT_TURNS, (session_id, RECENT))
        return [turn_of(r) for r in rows]

    async def fact_upsert(self, user_id, thread, session_id, n, at):
        conn = self.conn

        async def body():
            cur = await conn.execute(INSERT_FACT, _fact_params(user_id, thread, n, at))
            return cur.lastrowid

        fact_id = await self._transaction(body)
        [row] = await conn.execute_fetchall("SELECT * FROM facts WHERE id IN (?)", (fact_id,))
        return fact_of(row)

    async def close(self) -> None:
        await self.conn.close()


CALLS = ("append_turn", "recent_turns", "fact_upsert")


async def run_round(side, seeded: Seeded, call: str, calls: int, tasks: int, start: int,
                    walls: list[float]) -> float:
    """``calls`` calls of ``call`` split over ``tasks`` threads at once; appends each call's
    wall time (seconds) to ``walls``; returns the process CPU seconds the round used."""
    fn = getattr(side, call)

    async def worker(k: int) -> None:
        user_id, thread, session_id = seeded.threads[k]
        for i in range(k, calls, tasks):
            n = start + i
            at = T0 + timedelta(days=1, seconds=n)
            began = time.perf_counter()
            await fn(user_id, thread, session_id, n, at)
            walls.append(time.perf_counter() - began)

    cpu = time.process_time()
    await asyncio.gather(*(worker(k) for k in range(tasks)))
    return time.process_time() - cpu


async def measure(calls: int, rounds: int, tasks: int) -> list[dict]:
    folder = Path(tempfile.mkdtemp(prefix="bench-bridge-"))
    try:
        seeded = await seed(folder / "seed.db", tasks)
        for name in ("store.db", "executor.db", "aio.db"):
            shutil.copy(folder / "seed.db", folder / name)
        sides = [StoreSide(await SQLiteStore.open(folder / "store.db")),
                 ExecutorSide(await SQLiteStore.open(folder / "executor.db")),
                 await AiosqliteSide.open(folder / "aio.db")]
        results = {(s.name, c): ([], 0.0) for s in sides for c in CALLS}
        try:
            for r in range(rounds):
                for side in sides[r % len(sides):] + sides[:r % len(sides)]:
                    for call in CALLS:
                        walls, cpu = results[(side.name, call)]
                        cpu += await run_round(side, seeded, call, calls, tasks,
                                               start=r * calls, walls=walls)
                        results[(side.name, call)] = (walls, cpu)
            counts = {}
            for side, name in zip(sides, ("store.db", "executor.db", "aio.db")):
                await side.close()
                with sqlite3.connect(folder / name) as check:
                    counts[side.name] = tuple(check.execute(f"SELECT count(*) FROM {t}")
                                              .fetchone()[0] for t in ("turns", "facts"))
            if len(set(counts.values())) != 1:
                raise AssertionError(f"the sides wrote different rows: {counts}")
        except BaseException:
            for side in sides:
                try:
                    await side.close()
                except Exception:  # noqa: BLE001 - closing twice after a failure
                    pass
            raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    out = []
    for (side, call), (walls, cpu) in results.items():
        walls.sort()
        out.append({"side": side, "call": call, "tasks": tasks, "calls": len(walls),
                    "p50_ms": statistics.median(walls) * 1e3,
                    "p95_ms": walls[int(0.95 * (len(walls) - 1))] * 1e3,
                    "cpu_ms_per_call": cpu / len(walls) * 1e3})
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="calls of each kind per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 20],
                        help="threads calling at once")
    args = parser.parse_args(argv)
    print(f"# {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, sqlite {sqlite3.sqlite_version}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'side':24} {'call':13} {'tasks':>5} {'calls':>6} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'CPU ms/call':>11}")
    for tasks in args.tasks:
        for row in asyncio.run(measure(args.calls, args.rounds, tasks)):
            print(f"{row['side']:24} {row['call']:13} {row['tasks']:5d} {row['calls']:6d} "
                  f"{row['p50_ms']:8.3f} {row['p95_ms']:8.3f} {row['cpu_ms_per_call']:11.3f}")
    print(f"# load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
