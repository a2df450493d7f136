"""A consolidation job that keeps failing waits before it is tried again (exponential back-off,
``memory.work_runner.retry_delay``) instead of running, and logging an error, at every turn; the
scheduler's retry job runs it when due, and a restart tries it at once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from apscheduler.triggers.interval import IntervalTrigger

from bot.inspection import inspect_lines
from bot.scheduler import RETRY_JOB_ID, MemoryScheduler, retry_job
from memory import work_runner as service_module
from memory.work_runner import RETRY_BASE_SECONDS, RETRY_MAX_SECONDS, retry_delay


def test_the_delay_doubles_from_30_seconds_up_to_an_hour():
    assert [retry_delay(n) for n in range(8)] == [30, 60, 120, 240, 480, 960, 1920, 3600]
    assert retry_delay(500) == RETRY_MAX_SECONDS == 3600
    assert RETRY_BASE_SECONDS == 30


@pytest.fixture
def broken_summariser(monkeypatch):
    """Episode summaries crash (a bug, or data the rules cannot handle) until repaired."""
    calls = []
    real = service_module.summarise_session

    def summarise(*args, **kwargs):
        calls.append(1)
        if state["broken"]:
            raise RuntimeError("summariser crashed")
        return real(*args, **kwargs)

    state = {"broken": True, "calls": calls}
    monkeypatch.setattr(service_module, "summarise_session", summarise)
    return state


async def _work(h):
    [work] = await h.store.work.pending_work()
    return work


async def test_a_failing_job_is_not_retried_at_every_turn(harness, broken_summariser, caplog,
                                                          monkeypatch):
    h = harness
    monkeypatch.setattr(service_module, "RETRY_BASE_SECONDS", 300.0)  # turns come 30 s apart
    await h.say("We planned the garden: tomatoes along the south wall")
    await h.say("/new")
    failed_at = h.clock.now()
    work = await _work(h)
    assert (work.kind, work.attempts) == ("close", 1)
    assert work.retry_after == failed_at + timedelta(seconds=300)
    assert len(broken_summariser["calls"]) == 1

    for text in ("hello again", "what did we plan?", "and the roses?"):
        await h.say(text)  # each turn settles the previous session: not tried again yet
    assert len(broken_summariser["calls"]) == 1
    assert await h.memory.consolidate_pending() == 0
    assert len([r for r in caplog.records if "consolidation failed" in r.getMessage()]) == 1

    h.clock.set(work.retry_after)  # due: tried again, fails again, waits twice as long
    assert await h.memory.consolidate_pending() == 0
    work = await _work(h)
    assert (work.attempts, work.retry_after) == (2, h.clock.now() + timedelta(seconds=600))
    assert len(broken_summariser["calls"]) == 2

    broken_summariser["broken"] = False  # repaired: the next due try writes the episode
    h.clock.advance(600)
    assert await h.memory.consolidate_pending() == 1
    assert await h.store.work.pending_work() == []
    user = await h.store.identities.find_user("console", "alice")
    [episode] = await h.memory.episodes_for(user.id)
    assert "tomatoes" in episode.summary


async def test_a_restart_tries_waiting_jobs_at_once(harness, broken_summariser):
    h = harness
    await h.say("I repaint the fence on Sunday")
    await h.say("/new")
    assert (await _work(h)).attempts == 1
    report = "\n".join(await inspect_lines(h.store, "1"))
    assert "close of session 1 (failed 1x, next try 2026-11-30 09:01)" in report
    broken_summariser["broken"] = False
    assert await h.memory.consolidate_pending() == 0  # still waiting
    assert await h.memory.consolidate_pending(waiting_too=True) == 1  # what start-up runs
    assert await h.store.work.pending_work() == []


async def test_the_scheduler_retries_due_jobs_every_minute(harness, broken_summariser):
    h = harness
    sched = MemoryScheduler(memory=h.memory, idle_timeout_seconds=1800.0)
    h.engine.on_turn = sched.on_turn
    await sched.start()
    try:
        job = sched.scheduler.get_job(RETRY_JOB_ID)
        assert job.func is retry_job and isinstance(job.trigger, IntervalTrigger)
        assert job.trigger.interval == timedelta(minutes=1)
        await h.say("The plumber comes on Tuesday")
        await h.say("/new")
        broken_summariser["broken"] = False
        await retry_job(sched)  # not due yet
        assert len(await h.store.work.pending_work()) == 1
        h.clock.advance(retry_delay(0))
        await retry_job(sched)
        assert await h.store.work.pending_work() == []
    finally:
        await sched.shutdown()
