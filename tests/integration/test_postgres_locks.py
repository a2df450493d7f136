"""PostgreSQL's thread locks beyond the lock contract (``tests/contract/test_thread_locks.py``:
one holder per thread across two processes' lock sets, threads apart): a held thread shows in
``pg_locks``, a lock set of another name or schema never contends, one process holds any number
of threads on one connection, and a process killed while holding a thread's lock leaves it to
the next holder (the server ends its session). Real PostgreSQL (the server the tests start)."""

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


async def test_a_held_thread_shows_in_pg_locks_until_released(two):
    first, second = two
    async with first.hold(11):
        assert await second.held_elsewhere(11)
        assert not await second.held_elsewhere(12)
    assert not await first.held_elsewhere(11)


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
        all_in = asyncio.Barrier(21)

        async def turn(thread_id):
            async with locks.hold(thread_id):
                await all_in.wait()  # twenty threads held at once
                await all_in.wait()  # until the connections were counted

        turns = asyncio.gather(*(turn(100 + n) for n in range(20)))
        await all_in.wait()
        try:
            assert await _lock_connections(postgres_server, "many") == 1
        finally:
            await all_in.wait()
            await turns
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
