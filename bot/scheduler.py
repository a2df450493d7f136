"""The app's scheduler (APScheduler 3 ``AsyncIOScheduler``): idle timeouts and maintenance.

The scheduler only triggers; SQLite records what must happen. An idle job asks the memory
service to close the thread's session if it is idle (``memory.lifecycle``), which records the
close and its consolidation job in one transaction and then runs it
(``MemoryService.consolidate_pending``), so a crash in between loses nothing: the next start-up
runs the pending work and closes every session that went idle while the process was down.

- One idle job per thread, id ``idle:<thread_id>``, replaced after every turn (a date trigger
  at the session's ``last_turn_at + IDLE_TIMEOUT_SECONDS``).
- One maintenance job (``maintenance``), every 24 hours, the first 10 minutes after start-up;
  it runs the maintenance only when no process on the store ran it that UTC day (a claim in
  the store), so several processes run it once a day between them.
- One retry job (``retry``), every minute: consolidation jobs that failed and whose back-off
  (``memory.work_runner.retry_delay``: 30 s doubling to 1 hour) is over run again, and jobs
  left pending by a process that died (any process on a shared database runs them: the
  thread's lock lets one at a time in, and a job is marked done in the transaction that writes
  it, so it runs once).
- With a store several processes share (``DATABASE_URL``), one sweep job (``sweep``) every
  ``sweep_seconds``: every session past its idle deadline is closed, whichever process's idle
  job watched it (the store's open sessions are the record of every deadline, the idle jobs
  only this process's wake-ups), so a deadline set by a process that died is kept by another.
- Job defaults ``misfire_grace_time=None`` and ``coalesce=True`` through ``job_defaults``, so a
  late job still runs, once (APScheduler's default grace of 1 s silently skipped late jobs:
  agronholm/apscheduler#292, #182; a top-level kwarg has no effect: #146), and
  ``max_instances=1``: a job never runs beside a run of itself.
- A thread's idle check that is still running does not need a second one beside it: a deadline
  set meanwhile (a turn of the thread's next session, while the last one is consolidated) is
  kept and watched once the running check ends, instead of a job due during it, which
  APScheduler would skip with a warning, and the catch-up below again every second while the
  check runs (measured 2026-12-02 at load 15-18 on 2 cores, the benchmark's throughput job
  with 50 conversations of 10 turns: 388 skips, each warned twice, before; none after). "Running"
  is what the executor counts: from the job's submission to its end, as APScheduler's
  ``EVENT_JOB_SUBMITTED`` and ``EVENT_JOB_EXECUTED``/``EVENT_JOB_ERROR`` events report it.
- Jobs are coroutine functions run by the ``AsyncIOExecutor`` on the app's own loop; start-up
  fails loudly otherwise (a thread-pool executor leaves "coroutine was never awaited",
  agronholm/apscheduler#490; ``start()`` needs the running loop in 3.11, #1029).

The scheduler runs on the system clock; the memory service may run on a hand-driven clock in
tests, so deadlines are turned into delays on the service's clock first.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone

from apscheduler.events import (
    EVENT_JOB_ERROR,
    EVENT_JOB_EXECUTED,
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
    EVENT_JOB_SUBMITTED,
    JobEvent,
)
from apscheduler.executors.asyncio import AsyncIOExecutor
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from memory.errors import ConfigError
from memory.lifecycle import idle_deadline
from memory.service import Context, MemoryService

log = logging.getLogger(__name__)

JOB_DEFAULTS = {"misfire_grace_time": None, "coalesce": True, "max_instances": 1}
MAINTENANCE_JOB_ID = "maintenance"
MAINTENANCE_INTERVAL_SECONDS = 24 * 3600
MAINTENANCE_FIRST_DELAY_SECONDS = 600
RETRY_JOB_ID = "retry"
RETRY_JOB_INTERVAL_SECONDS = 60
SWEEP_JOB_ID = "sweep"
SWEEP_JOB_INTERVAL_SECONDS = 60
"""How often (seconds) a process on a shared store closes overdue sessions: a deadline whose
watcher died is kept at most this late (the retry job's cadence, which takes over its work)."""
"""How often (seconds) failed consolidation jobs whose back-off is over are run again."""
CATCH_UP_SECONDS = 1.0
"""Delay (seconds) before an idle job APScheduler reports as missed or skipped runs again."""
RETRY_SECONDS = 60.0
"""Delay (seconds) before an idle check that failed is tried again."""


def idle_job_id(thread_id: int) -> str:
    """The id of a thread's idle job: ``idle:<thread_id>``."""
    return f"idle:{thread_id}"


def _idle_thread(job_id: str) -> int | None:
    """The thread id of an idle job's id (:func:`idle_job_id`); None for other jobs."""
    prefix, sep, rest = job_id.partition(":")
    return int(rest) if sep and prefix == "idle" and rest.isdigit() else None


def _system_now() -> datetime:
    return datetime.now(timezone.utc)


async def idle_job(sched: "MemoryScheduler", thread_id: int, deadline: datetime) -> None:
    """Job: close the thread's session if it is idle, else watch its new deadline.

    Args:
        sched: the owning scheduler.
        thread_id: the thread's row id.
        deadline: the idle deadline it was scheduled for (memory service's clock, aware UTC);
            the log gives the delay from it to the episode being recallable.
    """
    async with sched.tracked():
        try:
            check = await sched.memory.close_if_idle(
                thread_id, timeout_seconds=sched.idle_timeout_seconds)
        except Exception:
            log.exception("idle check failed thread=%s; retrying in %.0fs", thread_id,
                          RETRY_SECONDS)
            sched.watch_in(thread_id, RETRY_SECONDS)
            return
        if check.closed:
            lag = (sched.memory.clock.now() - deadline).total_seconds() * 1000
            log.info("idle session closed thread=%s recallable_after_deadline_ms=%.0f",
                     thread_id, lag)
        elif check.deadline is not None:
            sched.watch(thread_id, check.deadline)


async def maintenance_job(sched: "MemoryScheduler") -> None:
    """Job: the daily maintenance, once a day whichever processes share the store
    (``MemoryService.run_daily_maintenance``)."""
    async with sched.tracked():
        try:
            await sched.memory.run_daily_maintenance(expire_days=sched.expire_days,
                                                     retention_days=sched.retention_days)
        except Exception:
            log.exception("maintenance failed; it runs again at the next interval")


async def sweep_job(sched: "MemoryScheduler") -> None:
    """Job: close the sessions past their idle deadline that no idle job of this process
    watched (``MemoryService.close_overdue_sessions``)."""
    async with sched.tracked():
        try:
            closed = await sched.memory.close_overdue_sessions(
                timeout_seconds=sched.idle_timeout_seconds)
        except Exception:
            log.exception("closing overdue sessions failed; it runs again in %.0fs",
                          sched.sweep_seconds)
            return
        if closed:
            log.info("overdue idle sessions closed count=%d", closed)


async def retry_job(sched: "MemoryScheduler") -> None:
    """Job: run the consolidation jobs that are due again after a failure (one SQL query when
    there are none)."""
    async with sched.tracked():
        try:
            await sched.memory.consolidate_pending()
        except Exception:
            log.exception("retrying pending consolidation failed; it runs again in %ds",
                          RETRY_JOB_INTERVAL_SECONDS)


class MemoryScheduler:
    """Owns the ``AsyncIOScheduler`` and the memory life cycle's jobs.

    Args:
        memory: the memory service.
        idle_timeout_seconds: ``IDLE_TIMEOUT_SECONDS``.
        expire_days: ``MEMORY_EXPIRE_DAYS`` (0 = never).
        retention_days: ``RAW_TURN_RETENTION_DAYS`` (0 = keep).
        executor: the job executor (default ``AsyncIOExecutor``; anything else fails at start).
        sweep_seconds: seconds between sweeps of overdue sessions (a store shared by several
            processes); None: no sweep (one process watches every session itself).
    """

    def __init__(self, *, memory: MemoryService, idle_timeout_seconds: float,
                 expire_days: int = 30, retention_days: int = 0, executor=None,
                 sweep_seconds: float | None = None) -> None:
        self.memory = memory
        self.idle_timeout_seconds = idle_timeout_seconds
        self.expire_days = expire_days
        self.retention_days = retention_days
        self.sweep_seconds = sweep_seconds
        self._executor = executor if executor is not None else AsyncIOExecutor()
        self.scheduler = AsyncIOScheduler(executors={"default": self._executor},
                                          job_defaults=dict(JOB_DEFAULTS), timezone=timezone.utc)
        self._startup: asyncio.Task | None = None
        self._running: set[asyncio.Task] = set()
        self._checking: set[int] = set()  # threads whose idle job runs now
        self._deferred: dict[int, datetime] = {}  # their deadlines set meanwhile

    @property
    def running(self) -> bool:
        """True while the scheduler runs (started and not shut down)."""
        return self.scheduler.running

    @asynccontextmanager
    async def tracked(self) -> AsyncIterator[None]:
        """Register the current job task while it runs, so shutdown can wait for it."""
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        try:
            yield
        finally:
            self._running.discard(task)

    async def start(self) -> tuple[int, int]:
        """Start-up, once even if called twice (later calls wait for the first): start the
        scheduler on the running loop (checking that async jobs run there), close and
        consolidate every session that went idle while the process was down, watch the
        others, add the maintenance job. Input should be taken only after this returns.

        Returns:
            ``(closed, watched)``: sessions closed at start-up, idle jobs scheduled.

        Raises:
            ConfigError: the jobs would not run on this event loop.
        """
        if self._startup is None:
            self._startup = asyncio.ensure_future(self._start())
        return await self._startup

    async def _start(self) -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        self.scheduler.start(paused=True)
        if not isinstance(self._executor, AsyncIOExecutor) or getattr(
                self._executor, "_eventloop", None) is not loop:
            self.scheduler.shutdown(wait=False)
            await asyncio.sleep(0)
            raise ConfigError(
                f"the scheduler's executor is {type(self._executor).__name__}, not an "
                "AsyncIOExecutor on the app's event loop: async jobs would never run")
        for job in (idle_job, maintenance_job, retry_job, sweep_job):
            if not inspect.iscoroutinefunction(job):
                raise ConfigError(f"scheduler job {job.__name__} is not a coroutine function")
        self.scheduler.add_listener(self._on_skipped, EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES)
        self.scheduler.add_listener(self._on_idle_check,
                                    EVENT_JOB_SUBMITTED | EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)
        closed, still_open = await self.memory.close_idle_sessions(
            timeout_seconds=self.idle_timeout_seconds)
        for thread_id, deadline in still_open:
            self.watch(thread_id, deadline)
        self.scheduler.add_job(
            maintenance_job, "interval", args=(self,), seconds=MAINTENANCE_INTERVAL_SECONDS,
            next_run_time=_system_now() + timedelta(seconds=MAINTENANCE_FIRST_DELAY_SECONDS),
            id=MAINTENANCE_JOB_ID, replace_existing=True)
        self.scheduler.add_job(retry_job, "interval", args=(self,),
                               seconds=RETRY_JOB_INTERVAL_SECONDS, id=RETRY_JOB_ID,
                               replace_existing=True)
        if self.sweep_seconds is not None:
            self.scheduler.add_job(sweep_job, "interval", args=(self,),
                                   seconds=self.sweep_seconds, id=SWEEP_JOB_ID,
                                   replace_existing=True)
        self.scheduler.resume()
        log.info("scheduler started idle_timeout_s=%s closed_at_startup=%d watched=%d",
                 self.idle_timeout_seconds, closed, len(still_open))
        return closed, len(still_open)

    def _on_skipped(self, event: JobEvent) -> None:
        log.warning("scheduler skipped job %s (code %s); catching up", event.job_id, event.code)
        thread_id = _idle_thread(event.job_id)
        if thread_id is not None:
            self.watch_in(thread_id, CATCH_UP_SECONDS)

    def _on_idle_check(self, event: JobEvent) -> None:
        """An idle job was submitted (it runs from now) or ended: once it ended, watch the
        deadline set while it ran, if any."""
        thread_id = _idle_thread(event.job_id)
        if thread_id is None:
            return
        if event.code == EVENT_JOB_SUBMITTED:
            self._checking.add(thread_id)
            return
        self._checking.discard(thread_id)
        deadline = self._deferred.pop(thread_id, None)
        if deadline is not None and self.running:
            self.watch(thread_id, deadline)

    def checking(self, thread_id: int) -> bool:
        """True while the thread's idle job runs (submitted and not yet ended)."""
        return thread_id in self._checking

    def watch(self, thread_id: int, deadline: datetime) -> None:
        """Replace the thread's idle job with one due at ``deadline`` (on the memory service's
        clock, aware UTC; a deadline already past runs at once). While the thread's idle job
        runs, ``deadline`` is kept instead (the latest one set) and watched once it ends."""
        if thread_id in self._checking:
            self._deferred[thread_id] = deadline
            return
        remaining = max(0.0, (deadline - self.memory.clock.now()).total_seconds())
        self.scheduler.add_job(idle_job, "date", run_date=_system_now() + timedelta(
            seconds=remaining), args=(self, thread_id, deadline), id=idle_job_id(thread_id),
            replace_existing=True)

    def watch_in(self, thread_id: int, seconds: float) -> None:
        """Replace the thread's idle job with one due in ``seconds``."""
        self.watch(thread_id, self.memory.clock.now() + timedelta(seconds=seconds))

    def cancel(self, thread_id: int) -> None:
        """Remove the thread's idle job, if any (and a deadline kept while it runs)."""
        self._deferred.pop(thread_id, None)
        job = self.scheduler.get_job(idle_job_id(thread_id))
        if job is not None:
            job.remove()

    async def on_turn(self, ctx: Context) -> None:
        """Engine hook after every handled message: watch the open session's new idle deadline,
        or drop the idle job when no session is open (after ``/new`` or an end phrase). Does
        nothing before :meth:`start`; never raises (a failure is logged)."""
        if not self.running:
            return
        try:
            session = await self.memory.open_session(ctx.thread.id)
            if session is None:
                self.cancel(ctx.thread.id)
            else:
                self.watch(ctx.thread.id,
                           idle_deadline(session.last_turn_at, self.idle_timeout_seconds))
        except Exception:
            log.exception("rescheduling the idle job failed thread=%s", ctx.thread.id)

    async def shutdown(self) -> None:
        """Stop taking new jobs, wait for running ones, stop the scheduler."""
        if not self.running:
            return
        self.scheduler.pause()
        if self._running:
            await asyncio.gather(*list(self._running), return_exceptions=True)
        self.scheduler.shutdown(wait=False)
        await asyncio.sleep(0)  # AsyncIOScheduler.shutdown runs as a loop callback
