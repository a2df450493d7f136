"""The in-process thread locks of the work runner beyond the lock contract
(``tests/contract/test_thread_locks.py``: one holder per thread, threads apart): no lock is
kept once nobody holds or waits for it, whether the block ended normally or with a failure."""

from __future__ import annotations

import asyncio

from memory.work_runner import LocalThreadLocks


async def test_a_threads_lock_is_kept_while_held_or_waited_for_and_then_forgotten():
    locks = LocalThreadLocks()
    inside, release = asyncio.Event(), asyncio.Event()

    async def holder():
        async with locks.hold(1):
            inside.set()
            await release.wait()

    async def contender():
        async with locks.hold(1):
            pass

    task = asyncio.ensure_future(holder())
    await inside.wait()
    waiting = asyncio.ensure_future(contender())
    async with locks.hold(2):
        assert len(locks) == 2
    assert len(locks) == 1  # thread 2's lock went with its holder; thread 1's is waited for
    release.set()
    await asyncio.gather(task, waiting)
    assert len(locks) == 0


async def test_a_failure_inside_releases_and_forgets_the_lock():
    locks = LocalThreadLocks()
    try:
        async with locks.hold(7):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert len(locks) == 0
    async with locks.hold(7):
        assert len(locks) == 1
