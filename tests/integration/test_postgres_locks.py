"""PostgreSQL's thread locks across processes: two lock sets on their own connections (two bot
processes) hold one thread one at a time and different threads at once, a lock set of another
name never contends, one process holds any number of threads on one connection, and a process
killed while holding a thread's lock leaves it to the next holder (the server ends its
session). Real PostgreSQL (the server the tests start)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap

import asyncpg
import pytest

from memory.stores.postgres.locks import PgThreadLocks

pytestmark = pytest.mark.postgres


@pytest.fixture
async def two(postgres_server):
    first = await PgThreadLocks.open(postgres_server, name="turns", schema="locks_test")
    second = await PgThreadLocks.open(postgres_server, name="turns", schema="locks_test")
    yield first, second
    await first.close()
    await second.close()


async def _lock_connections(url: str, name: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetchval("SELECT count(*) FROM pg_stat_activity WHERE "
                                   "application_name = $1", f"memory-bot locks {name}")
    finally:
        await conn.close()


async def _until(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0.02)


async def test_one_thread_is_held_by_one_process_at_a_time(two, postgres_server):
    first, second = two
    order: list[str] = []
    inside, release = asyncio.Event(), asyncio.Event()

    async def holder():
        async with first.hold(11):
            order.append("first in")
            inside.set()
            await release.wait()
            order.append("first out")

    async def contender():
        async with second.hold(11):
            order.append("second in")

    task = asyncio.ensure_future(holder())
    await inside.wait()
    waiting = asyncio.ensure_future(contender())
    # the second process finds the thread held by the first one, and keeps trying
    await _until(lambda: second.contended >= 2)
    assert order == ["first in"] and await second.held_elsewhere(11)
    release.set()
    await asyncio.gather(task, waiting)
    assert order == ["first in", "first out", "second in"]
    assert not await first.held_elsewhere(11)


async def test_different_threads_are_held_at_once(two):
    first, second = two
    both = asyncio.Barrier(2)

    async def hold(locks, thread_id):
        async with locks.hold(thread_id):
            await both.wait()  # returns only when the other process holds its thread too
            return thread_id

    assert await asyncio.gather(hold(first, 1), hold(second, 2)) == [1, 2]


async def test_lock_sets_of_other_names_or_schemas_never_contend(postgres_server):
    turns = await PgThreadLocks.open(postgres_server, name="turns", schema="locks_test")
    work = await PgThreadLocks.open(postgres_server, name="work", schema="locks_test")
    other = await PgThreadLocks.open(postgres_server, name="turns", schema="locks_other")
    try:
        async with turns.hold(5):
            async with work.hold(5), other.hold(5):
                assert await turns.held_elsewhere(5) and await work.held_elsewhere(5)
    finally:
        for locks in (turns, work, other):
            await locks.close()


async def test_one_process_holds_many_threads_on_one_connection(postgres_server):
    locks = await PgThreadLocks.open(postgres_server, name="many", schema="locks_test")
    try:
        order: list[int] = []
        all_in = asyncio.Barrier(20)

        async def turn(thread_id, n):
            async with locks.hold(thread_id):
                order.append(n)
                if thread_id >= 100:  # twenty threads held at once
                    await all_in.wait()

        # ten turns of one thread, one at a time, and twenty threads held together
        await asyncio.gather(*(turn(3, n) for n in range(10)),
                             *(turn(100 + n, 10 + n) for n in range(20)))
        assert sorted(order) == list(range(30))
        assert await _lock_connections(postgres_server, "many") == 1
    finally:
        await locks.close()


async def test_a_killed_holder_leaves_the_thread_to_the_next_process(postgres_server):
    script = textwrap.dedent(f"""
        import asyncio, sys
        from memory.stores.postgres.locks import PgThreadLocks

        async def main():
            locks = await PgThreadLocks.open({postgres_server!r}, name="turns",
                                             schema="locks_test")
            async with locks.hold(42):
                print("held", flush=True)
                await asyncio.sleep(3600)

        asyncio.run(main())
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             cwd=os.getcwd(), text=True)
    try:
        assert child.stdout.readline().strip() == "held"
        locks = await PgThreadLocks.open(postgres_server, name="turns", schema="locks_test")
        try:
            assert await locks.held_elsewhere(42)
            taken = asyncio.ensure_future(_take(locks, 42))
            await _until(lambda: locks.contended >= 2)
            assert not taken.done()  # waiting for the child's lock
            child.send_signal(signal.SIGKILL)  # no unlock, no goodbye: the server ends it
            assert await taken == "taken over"
        finally:
            await locks.close()
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


async def _take(locks: PgThreadLocks, thread_id: int) -> str:
    async with locks.hold(thread_id):
        return "taken over"
