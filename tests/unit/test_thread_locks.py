"""The in-process thread locks of the work runner: one holder per thread at a time, threads
independent, and no lock kept once nobody holds or waits for it."""

from __future__ import annotations

import asyncio

from memory.ports import ThreadLocks
from memory.work_runner import LocalThreadLocks


async def test_one_holder_per_thread_and_threads_apart():
    locks: ThreadLocks = LocalThreadLocks()
    order: list[str] = []
    inside = asyncio.Event()
    release = asyncio.Event()

    async def first():
        async with locks.hold(1):
            order.append("first in")
            inside.set()
            await release.wait()
            order.append("first out")

    async def second():
        async with locks.hold(1):
            order.append("second in")

    task = asyncio.ensure_future(first())
    await inside.wait()
    waiting = asyncio.ensure_future(second())
    async with locks.hold(2):  # another thread is not held up
        order.append("other thread")
    await asyncio.sleep(0)
    assert "second in" not in order
    release.set()
    await asyncio.gather(task, waiting)
    assert order == ["first in", "other thread", "first out", "second in"]
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
