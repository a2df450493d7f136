"""The thread locks contract (:class:`memory.ports.ThreadLocks`): every backend runs the same
tests. One thread is held by one holder at a time while other threads go on, different threads
are held at once, one lock set holds many threads at once and one thread's turns in turn, and a
failure inside the block releases the lock.

A backend is one entry of :data:`LOCK_BACKENDS`: how to open two contending lock sets and how
to see that a holder of the second one waits for a thread. In-process
(:class:`memory.work_runner.LocalThreadLocks`) the contenders are tasks of one process on one
lock set. PostgreSQL (:class:`memory.stores.postgres.locks.PgThreadLocks`, on the server the
test run starts) they are two processes' lock sets of one name and schema, each on its own
connection, in a schema of the test's own (the schema is part of the lock's key). What only
PostgreSQL has (lock sets of other names, the one connection, a killed holder) is tested in
``tests/integration/test_postgres_locks.py``; what only the in-process locks have (forgetting
a thread's lock once nobody holds or waits for it) in ``tests/unit/test_local_thread_locks.py``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

import pytest

from memory.ports import ThreadLocks
from memory.stores.postgres.locks import PgThreadLocks
from memory.work_runner import LocalThreadLocks

WAIT_S = 60.0  # guards against a hung test only; nothing is timed


@asynccontextmanager
async def _local(request: pytest.FixtureRequest) -> AsyncIterator[tuple[ThreadLocks, ...]]:
    locks = LocalThreadLocks()
    yield locks, locks


@asynccontextmanager
async def _postgres(request: pytest.FixtureRequest) -> AsyncIterator[tuple[ThreadLocks, ...]]:
    url = request.getfixturevalue("postgres_server")
    schema = f"locks_{uuid.uuid4().hex[:10]}"
    first = await PgThreadLocks.open(url, name="turns", schema=schema)
    second = await PgThreadLocks.open(url, name="turns", schema=schema)
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


@dataclass(frozen=True)
class LockBackend:
    """How to open two contending lock sets (an async context manager given the test's fixture
    request) and whether a holder of ``locks`` waits for ``thread_id`` (``waiting(locks,
    thread_id)``, white-box: each backend's own record of it)."""

    open: Callable[[pytest.FixtureRequest],
                   AbstractAsyncContextManager[tuple[ThreadLocks, ThreadLocks]]]
    waiting: Callable[[ThreadLocks, int], bool]


LOCK_BACKENDS: dict[str, LockBackend] = {
    # the thread's holder and at least one waiter
    "local": LockBackend(_local, lambda locks, thread_id: locks._users.get(thread_id, 0) >= 2),
    # tried at least twice and found the key held by the other process
    "postgres": LockBackend(_postgres, lambda locks, thread_id: locks.contended >= 2),
}


@pytest.fixture(params=[pytest.param(name, marks=[pytest.mark.postgres] if name == "postgres"
                                     else []) for name in sorted(LOCK_BACKENDS)])
def backend(request) -> LockBackend:
    """Each backend of :data:`LOCK_BACKENDS` in turn."""
    return LOCK_BACKENDS[request.param]


@pytest.fixture
async def two(backend, request) -> AsyncIterator[tuple[ThreadLocks, ThreadLocks]]:
    """Two contending lock sets of the backend (one and the same set in-process)."""
    async with backend.open(request) as pair:
        yield pair


async def _until(predicate) -> None:
    async def poll():
        while not predicate():
            await asyncio.sleep(0.01)
    await asyncio.wait_for(poll(), WAIT_S)


async def test_one_thread_is_held_by_one_holder_at_a_time_while_others_go_on(backend, two):
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
    await _until(lambda: backend.waiting(second, 11))  # the contender found it held
    async with second.hold(2):  # another thread is not held up
        order.append("other thread")
    assert order == ["first in", "other thread"]
    release.set()
    await asyncio.wait_for(asyncio.gather(task, waiting), WAIT_S)
    assert order == ["first in", "other thread", "first out", "second in"]


async def test_different_threads_are_held_at_once(two):
    first, second = two
    both = asyncio.Barrier(2)

    async def hold(locks, thread_id):
        async with locks.hold(thread_id):
            await both.wait()  # returns only when the other holder holds its thread too
            return thread_id

    assert await asyncio.wait_for(asyncio.gather(hold(first, 1), hold(second, 2)),
                                  WAIT_S) == [1, 2]


async def test_one_lock_set_holds_many_threads_at_once_and_one_threads_turns_in_turn(two):
    locks, _ = two
    order: list[int] = []
    inside: set[int] = set()
    overlapped: list[int] = []
    all_in = asyncio.Barrier(20)

    async def turn(thread_id, n):
        async with locks.hold(thread_id):
            if thread_id in inside:
                overlapped.append(n)
            inside.add(thread_id)
            order.append(n)
            if thread_id >= 100:  # twenty threads held at once
                await all_in.wait()
            else:
                await asyncio.sleep(0)  # let another turn of the thread try to get in
            inside.discard(thread_id)

    # ten turns of one thread, one at a time, and twenty threads held together
    await asyncio.wait_for(asyncio.gather(*(turn(3, n) for n in range(10)),
                                          *(turn(100 + n, 10 + n) for n in range(20))), WAIT_S)
    assert sorted(order) == list(range(30))
    assert not overlapped


async def test_a_failure_inside_releases_the_lock(two):
    first, second = two
    with pytest.raises(RuntimeError, match="boom"):
        async with first.hold(7):
            raise RuntimeError("boom")

    async def take():
        async with second.hold(7):
            return "taken"

    assert await asyncio.wait_for(take(), WAIT_S) == "taken"
