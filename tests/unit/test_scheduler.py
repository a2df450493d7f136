"""Scheduler wiring (``bot/scheduler.py``) with a hand-driven memory clock.

APScheduler runs on the system clock, so these tests never wait for a job: they assert the
jobs' settings and triggers, and call the job functions directly. The real-time behaviour is
covered by ``tests/e2e/test_lifecycle_console.py``.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone

import pytest
from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.scheduler import (
    MAINTENANCE_JOB_ID,
    RETRY_JOB_ID,
    SWEEP_JOB_ID,
    MemoryScheduler,
    idle_job,
    idle_job_id,
    maintenance_job,
)
from memory.errors import ConfigError
from memory.lifecycle import idle_deadline
from tests.conftest import make_harness

TIMEOUT = 1800.0


@pytest.fixture
async def wired(harness):
    sched = MemoryScheduler(memory=harness.memory, idle_timeout_seconds=TIMEOUT)
    harness.engine.on_turn = sched.on_turn
    await sched.start()
    yield harness, sched
    await sched.shutdown()


async def _thread_id(h, user="alice") -> int:
    return (await h.memory.context(h.message("x", user=user))).thread.id


async def _episodes(h, user="alice") -> int:
    user_row = await h.store.identities.find_user("console", user)
    return len(await h.memory.episodes_for(user_row.id))


def _system_now() -> datetime:
    return datetime.now(timezone.utc)


async def test_job_settings_make_late_jobs_run_once_and_never_beside_themselves(harness):
    sched = MemoryScheduler(memory=harness.memory, idle_timeout_seconds=TIMEOUT,
                            sweep_seconds=60.0)
    harness.engine.on_turn = sched.on_turn
    await sched.start()
    try:
        await harness.say("I'm choosing a vector database")
        jobs = [sched.scheduler.get_job(job_id) for job_id in (
            idle_job_id(await _thread_id(harness)), MAINTENANCE_JOB_ID, RETRY_JOB_ID,
            SWEEP_JOB_ID)]
        for job in jobs:
            assert job.misfire_grace_time is None  # never skipped as "missed"
            assert job.coalesce is True  # late runs of one job run once
            assert job.max_instances == 1  # a job still running is not started beside itself
        executor = sched.scheduler._lookup_executor("default")
        assert type(executor).__name__ == "AsyncIOExecutor"
        maintenance = sched.scheduler.get_job(MAINTENANCE_JOB_ID)
        assert isinstance(maintenance.trigger, IntervalTrigger)
        assert maintenance.trigger.interval == timedelta(hours=24)
        assert maintenance.func is maintenance_job
    finally:
        await sched.shutdown()


async def test_a_deadline_set_while_the_threads_idle_job_runs_is_watched_once_it_ends(wired):
    """A turn of the thread's next session while its idle job still consolidates the last one
    schedules no second idle job beside it (which APScheduler would skip as "maximum number
    of running instances reached"); its deadline is watched once the running one ends."""
    h, sched = wired
    skipped = []
    sched.scheduler.add_listener(skipped.append, EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES)
    await h.say("We picked LanceDB for the vector database.")
    thread_id = await _thread_id(h)
    h.clock.advance(TIMEOUT + 1)
    release = asyncio.Event()

    async def hold_consolidation():
        async with h.memory.runner.locks.hold(thread_id):
            await release.wait()

    holder = asyncio.ensure_future(hold_consolidation())
    try:
        await asyncio.sleep(0)
        sched.watch_in(thread_id, 0)  # due now: runs, closes the session, waits for the lock
        for _ in range(500):
            if sched.checking(thread_id) and await h.store.conversations.open_session(
                    thread_id) is None:
                break
            await asyncio.sleep(0.02)
        assert sched.checking(thread_id)
        await h.say("a new session while the last one is consolidated")
        session = await h.store.conversations.open_session(thread_id)
        assert session is not None
        assert sched.scheduler.get_job(idle_job_id(thread_id)) is None  # none beside it
    finally:
        release.set()  # a failure above must not leave the idle job waiting at shutdown
        await holder
    for _ in range(500):
        if not sched.checking(thread_id):
            break
        await asyncio.sleep(0.02)
    assert not sched.checking(thread_id)
    assert await _episodes(h) == 1
    job = sched.scheduler.get_job(idle_job_id(thread_id))
    assert job is not None and job.func is idle_job  # the new session's deadline is watched
    assert job.args[1:] == (thread_id, idle_deadline(session.last_turn_at, TIMEOUT))
    assert not skipped


async def test_every_turn_replaces_the_threads_idle_job(wired):
    h, sched = wired
    await h.say("first message")
    thread_id = await _thread_id(h)
    job = sched.scheduler.get_job(idle_job_id(thread_id))
    assert isinstance(job.trigger, DateTrigger) and job.func is idle_job
    assert abs((job.next_run_time - _system_now()).total_seconds() - TIMEOUT) < 5
    session = await h.store.conversations.open_session(thread_id)
    assert job.args[1:] == (thread_id, idle_deadline(session.last_turn_at, TIMEOUT))
    first_deadline = job.args[2]
    h.clock.advance(600)
    await h.say("second message")
    jobs = [j for j in sched.scheduler.get_jobs() if j.id.startswith("idle:")]
    assert [j.id for j in jobs] == [idle_job_id(thread_id)]  # one job per thread
    assert (jobs[0].args[2] - first_deadline).total_seconds() >= 600  # postponed


async def test_idle_session_gets_exactly_one_episode(wired):
    h, sched = wired
    await h.say("We picked LanceDB for the vector database, budget $500.")
    thread_id = await _thread_id(h)
    watched = sched.scheduler.get_job(idle_job_id(thread_id))
    h.clock.advance(TIMEOUT + 1)
    await idle_job(sched, thread_id, watched.args[2])  # what the scheduler runs when due
    assert await _episodes(h) == 1
    assert await h.store.conversations.open_session(thread_id) is None
    after = sched.scheduler.get_job(idle_job_id(thread_id))
    assert after.args == watched.args  # nothing new to watch
    await idle_job(sched, thread_id, watched.args[2])  # fired twice: still one episode
    assert await _episodes(h) == 1
    session = await h.store.conversations.get_session(1)
    assert session.closed_at == h.clock.now()


async def test_a_turn_before_the_timeout_postpones_the_close(wired):
    h, sched = wired
    await h.say("talking about the vector database")
    thread_id = await _thread_id(h)
    h.clock.advance(TIMEOUT - 60)
    await h.say("still here")
    h.clock.advance(120)  # past the first deadline, not the second
    await idle_job(sched, thread_id, h.clock.now())
    assert await _episodes(h) == 0
    assert await h.store.conversations.open_session(thread_id) is not None
    job = sched.scheduler.get_job(idle_job_id(thread_id))
    session = await h.store.conversations.open_session(thread_id)
    assert job.args[2] == idle_deadline(session.last_turn_at, TIMEOUT)  # the new deadline
    remaining = (job.next_run_time - _system_now()).total_seconds()
    assert TIMEOUT - 200 < remaining < TIMEOUT
    h.clock.advance(TIMEOUT)
    await idle_job(sched, thread_id, job.args[2])
    assert await _episodes(h) == 1


async def test_new_closes_at_once_and_removes_the_idle_job(wired):
    h, sched = wired
    await h.say("a short conversation")
    thread_id = await _thread_id(h)
    assert sched.scheduler.get_job(idle_job_id(thread_id)) is not None
    await h.say("/new")
    assert await _episodes(h) == 1
    assert sched.scheduler.get_job(idle_job_id(thread_id)) is None
    h.clock.advance(TIMEOUT + 1)
    await idle_job(sched, thread_id, h.clock.now())  # a stale firing does nothing
    assert await _episodes(h) == 1


async def test_startup_closes_overdue_sessions_and_watches_the_rest(tmp_path, clock):
    h = await make_harness(tmp_path, clock)
    try:
        await h.say("an overdue conversation", user="alice")
        h.clock.advance(TIMEOUT + 60)
        await h.say("a fresh conversation", user="bob")
        sched = MemoryScheduler(memory=h.memory, idle_timeout_seconds=TIMEOUT)
        try:
            results = await asyncio.gather(sched.start(), sched.start())
            assert results == [(1, 1), (1, 1)]  # the start-up work ran once
            assert await sched.start() == (1, 1)
            assert await _episodes(h, "alice") == 1 and await _episodes(h, "bob") == 0
            bob_thread = await _thread_id(h, "bob")
            assert sched.scheduler.get_job(idle_job_id(bob_thread)) is not None
            assert sched.scheduler.get_job(idle_job_id(await _thread_id(h, "alice"))) is None
            closed = await h.store.conversations.get_session(1)
            assert closed.closed_at is not None
        finally:
            await sched.shutdown()
    finally:
        await h.store.close()


async def test_startup_fails_loudly_without_the_asyncio_executor(harness):
    sched = MemoryScheduler(memory=harness.memory, idle_timeout_seconds=TIMEOUT,
                            executor=ThreadPoolExecutor(1))
    with pytest.raises(ConfigError, match="AsyncIOExecutor"):
        await sched.start()
    assert not sched.running


async def test_on_turn_before_start_does_nothing(harness):
    sched = MemoryScheduler(memory=harness.memory, idle_timeout_seconds=TIMEOUT)
    harness.engine.on_turn = sched.on_turn
    await harness.say("hello")
    assert sched.scheduler.get_jobs() == []


async def test_a_job_woken_late_still_runs(wired):
    """A job due while the loop is blocked for longer than APScheduler's
    old 1 s grace time still runs after the block, once."""
    h, sched = wired
    await h.say("We picked LanceDB for the vector database.")
    thread_id = await _thread_id(h)
    h.clock.advance(TIMEOUT + 1)
    sched.watch_in(thread_id, 0.1)  # system time: due in 0.1 s
    await asyncio.sleep(0)
    time.sleep(1.6)  # the loop is blocked across the due time (0.1 s + the old 1 s grace)
    for _ in range(100):
        if await _episodes(h) == 1:
            break
        await asyncio.sleep(0.05)
    assert await _episodes(h) == 1
    assert sched.scheduler.get_job(idle_job_id(thread_id)) is None
