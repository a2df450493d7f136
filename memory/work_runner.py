"""The work runner: pending consolidation jobs run per thread, one at a time, each written in
the transaction that marks it done (``memory.ports.WorkQueue.complete_work``), failures
retried with backoff, folds off the reply path.

A job of a session turns its new turns (memory-off ones dropped) into the session's episode
(the offline summary of ``memory.episodes``, or the consolidation model's when there is one:
``memory.consolidation``) and its rounds (:func:`round_drafts`), then indexes what it wrote
(:class:`memory.indexing.Indexer`). Jobs of one thread never run at once: they hold the
thread's lock of a :class:`memory.ports.ThreadLocks` (one process: :class:`LocalThreadLocks`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta

from memory.consolidation import LLMConsolidator
from memory.episodes import summarise_session
from memory.errors import ModelError, StoreError
from memory.indexing import Indexer, fact_scope, turn_line
from memory.ports import Clock, SearchIndex, Store, ThreadLocks, TokenCounter
from memory.records import EpisodeDraft, RoundDraft, ThreadRow, WorkOutcome
from memory.types import ChatKind, Episode, Role, Scope, Turn

log = logging.getLogger("memory.service")

#: A failed consolidation job waits ``RETRY_BASE_SECONDS * 2**(attempts - 1)`` seconds, at most
#: ``RETRY_MAX_SECONDS``, before it is tried again (exponential backoff without jitter: one
#: process retries its own jobs, so there is no herd to spread; Brooker, "Exponential Backoff
#: And Jitter", AWS Architecture Blog 2015). 30 s covers a rate limit's usual Retry-After.
RETRY_BASE_SECONDS = 30.0
RETRY_MAX_SECONDS = 3600.0
#: Turns left unfolded in working memory after a fold (every turn except the last 10 is folded).
KEEP_AFTER_FOLD = 10
OFFLINE_MODEL = "offline"


def _log_background_failure(task: asyncio.Task) -> None:
    """Done callback of background consolidation: retrieve and log its failure (else asyncio
    reports "Task exception was never retrieved" with a traceback at exit)."""
    if task.cancelled() or task.exception() is None:
        return
    exc = task.exception()
    if isinstance(exc, StoreError):
        log.warning("background consolidation stopped: %s", exc)
    else:
        log.error("background consolidation failed", exc_info=exc)


def retry_delay(attempts: int) -> float:
    """Seconds a consolidation job waits after its ``attempts + 1``-th failure (``attempts``
    failed before): 30, 60, 120, ... capped at 3,600 (``RETRY_BASE_SECONDS``,
    ``RETRY_MAX_SECONDS``)."""
    return min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2.0 ** min(max(attempts, 0), 20))


def _draft_of(episode: Episode) -> EpisodeDraft:
    """The stored running episode as the ``previous`` of the next fold."""
    return EpisodeDraft(
        summary=episode.summary, key_data=episode.key_data, turn_ids=episode.turn_ids,
        goal=episode.goal, decisions=episode.decisions, open_tasks=episode.open_tasks,
        state=episode.state, participants=episode.participants)


def round_drafts(turns: Sequence[Turn]) -> list[RoundDraft]:
    """Group turns into rounds: a user turn plus the assistant replies that follow it.
    Replies of the offline model are left out of the round text (they only echo memory)."""
    rounds: list[RoundDraft] = []
    current: list[Turn] = []

    def flush() -> None:
        if current:
            lines = [turn_line(t) for t in current if t.generated_by != OFFLINE_MODEL]
            rounds.append(RoundDraft(tuple(t.id for t in current), "\n".join(lines),
                                     current[0].created_at))

    for turn in turns:
        if turn.role is Role.USER:
            flush()
            current = [turn]
        elif turn.role is Role.ASSISTANT and current:
            current.append(turn)
    flush()
    return rounds


class LocalThreadLocks:
    """:class:`memory.ports.ThreadLocks` for one process: an ``asyncio.Lock`` per thread, kept
    only while someone holds or waits for it (so the table does not grow with every thread
    ever seen)."""

    def __init__(self) -> None:
        self._locks: dict[int, asyncio.Lock] = {}
        self._users: dict[int, int] = {}

    @contextlib.asynccontextmanager
    async def hold(self, thread_id: int) -> AsyncIterator[None]:
        """Hold the thread's lock for the block (waiting for whoever holds it)."""
        lock = self._locks.setdefault(thread_id, asyncio.Lock())
        self._users[thread_id] = self._users.get(thread_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[thread_id] -= 1
            if not self._users[thread_id]:
                del self._users[thread_id], self._locks[thread_id]

    def __len__(self) -> int:
        return len(self._locks)


class WorkRunner:
    """Runs pending consolidation (see the module docstring).

    Args:
        store, index, indexer: where jobs are read and written, and their index rows.
        counter, clock: token counts of summaries; the time jobs complete and retry at.
        episode_summary_tokens: tokens of an offline episode summary.
        consolidator: the consolidation model's planner, or None (rules only).
        locks: per-thread mutual exclusion of jobs (default: this process's).
    """

    def __init__(self, *, store: Store, index: SearchIndex, indexer: Indexer,
                 counter: TokenCounter, clock: Clock, episode_summary_tokens: int,
                 consolidator: LLMConsolidator | None = None,
                 locks: ThreadLocks | None = None) -> None:
        self.store = store
        self.index = index
        self.indexer = indexer
        self.counter = counter
        self.clock = clock
        self.episode_summary_tokens = episode_summary_tokens
        self.consolidator = consolidator
        self.locks = locks or LocalThreadLocks()
        self._background: set[asyncio.Future] = set()

    async def consolidate_pending(self, *, thread_id: int | None = None,
                                  waiting_too: bool = False) -> int:
        """Run every pending consolidation job that is due (optionally of one thread), oldest
        first.

        Jobs of one thread run one at a time under that thread's consolidation lock, and each
        is marked done in the transaction that writes its result, so a duplicate trigger, a
        retry or two runs racing leave one episode per session. A failing job is counted and left
        pending, not to be tried again for ``retry_delay(attempts)`` seconds (so a job that keeps
        failing is not retried, and logged, at every turn); others still run. ``waiting_too``
        runs the waiting ones as well (start-up: a restart tries everything once).

        Returns:
            The number of jobs completed by this call.
        """
        done = 0
        due_at = None if waiting_too else self.clock.now()
        for work in await self.store.work.pending_work(thread_id=thread_id, due_at=due_at):
            session = await self.store.conversations.get_session(work.session_id)
            async with self.locks.hold(session.thread_id):
                try:
                    if await self._run_work(work):
                        done += 1
                except Exception as exc:  # one job's failure must not stop the others
                    # a model error (429, 529, time-out) or a storage failure (a full disk) is
                    # expected: one line, retried later; anything else is a bug: a traceback
                    expected = isinstance(exc, (ModelError, StoreError))
                    delay = retry_delay(work.attempts)
                    log.log(logging.WARNING if expected else logging.ERROR,
                            "consolidation %s work=%s session=%s attempt=%d retry_in=%ds: %s",
                            "postponed" if expected else "failed", work.id, work.session_id,
                            work.attempts + 1, delay, exc, exc_info=not expected)
                    try:
                        await self.store.work.fail_work(
                            work.id, f"{type(exc).__name__}: {exc}",
                            retry_after=self.clock.now() + timedelta(seconds=delay))
                    except StoreError as failed:  # the job stays pending as it was
                        log.warning("consolidation work=%s: its failure could not be "
                                    "recorded: %s", work.id, failed)
        return done

    async def settle(self, thread_id: int, *, timeout: float = 5.0) -> bool:
        """Wait (at most ``timeout`` seconds) until the thread's closed sessions are
        consolidated, running the work here if nobody else is: the first turn of a new session
        then sees the previous session's episode. Folds of the open session are not waited for,
        nor is a job waiting to be retried after a failure (it runs when due).

        Returns:
            True when nothing of the thread's closing work is left pending.
        """
        pending = await self.store.work.pending_work(thread_id=thread_id)
        closing = [w for w in pending if w.kind == "close"]
        if not closing:
            return True
        if not any(w.retry_after is None or w.retry_after <= self.clock.now() for w in closing):
            return False
        task = asyncio.ensure_future(self.consolidate_pending(thread_id=thread_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_log_background_failure)  # also when the wait below times out
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout)
        except asyncio.TimeoutError:
            log.warning("thread %s: previous session still consolidating after %.1fs",
                        thread_id, timeout)
            return False
        return not any(w.kind == "close"
                       for w in await self.store.work.pending_work(thread_id=thread_id))

    def consolidate_in_background(self, thread_id: int) -> None:
        """Start the thread's pending work (a fold) off the reply path; shutdown awaits it.
        A failure of the task itself (the store unreadable) is logged here, once."""
        task = asyncio.ensure_future(self.consolidate_pending(thread_id=thread_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_log_background_failure)

    async def drain(self) -> None:
        """Wait for background consolidation started by this service."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    async def _run_work(self, work) -> bool:
        if await self.store.work.work_done(work.id):  # another run got here first
            return False
        session = await self.store.conversations.get_session(work.session_id)
        thread = await self.store.identities.get_thread(session.thread_id)
        turns = [t for t in await self.store.conversations.session_turns(work.session_id)
                 if t.id > session.folded_through]
        folding = work.kind == "fold"
        if folding:
            cut = max(0, len(turns) - KEEP_AFTER_FOLD)
            while 0 < cut < len(turns) and turns[cut].role is not Role.USER:
                cut -= 1  # never split a message from its reply
            turns = turns[:cut]
        dropped = [] if folding else [t.id for t in await self.store.conversations.session_turns(work.session_id)
                                      if t.memory_off]
        kept = [t for t in turns if not t.memory_off]
        scope = await self._session_scope(thread, work.session_id)
        running = await self.store.episodes.session_episode(work.session_id)
        previous = _draft_of(running) if running is not None else None
        carried = ()
        if previous is None:
            last = await self.store.episodes.last_episode(thread.id)
            carried = last.open_tasks if last is not None and last.session_id != work.session_id else ()
        draft = None
        if scope and (kept or previous is not None):
            draft = summarise_session(kept, counter=self.counter,
                                      max_tokens=self.episode_summary_tokens,
                                      previous=previous, carried_tasks=carried)
        plan = None
        if self.consolidator is not None and scope and kept and draft is not None:
            # one structured call before anything is written; ModelUnavailable/RateLimited
            # propagate and leave this work pending (retried later, never half applied)
            plan = await self.consolidator.plan(
                thread=thread, scope=scope, turns=kept, rules=draft, previous=previous,
                carried=carried, now=self.clock.now())
            draft = plan.draft
        rounds = round_drafts(kept) if scope else []
        now = self.clock.now()
        started = running.started_at if running else (kept[0].created_at if kept else session.started_at)
        ended = kept[-1].created_at if kept else (running.ended_at if running else session.last_turn_at)
        folded_through = (turns[-1].id if turns else session.folded_through) if folding else None
        if folding and not turns:
            folded_through = session.folded_through
        result = await self.store.work.complete_work(work.id, WorkOutcome(
            session_id=work.session_id, scope=scope, episode=draft, rounds=tuple(rounds),
            started_at=started, ended_at=ended, now=now, drop_turn_ids=tuple(dropped),
            folded_through=folded_through, fact_ops=plan.ops if plan is not None else (),
            episode_source=plan.source if plan is not None else None))
        episode, stored_rounds = result.episode, list(result.rounds)
        rows = []  # facts, episode and rounds, embedded in one call
        if result.changed_facts:  # before the rounds: their keys include facts drawn from them
            facts = await self.store.facts.get_facts(result.changed_facts)
            rows += self.indexer.fact_rows([(f, fact_scope(f)) for f in facts.values()])
        if episode is not None:
            rows += self.indexer.episode_rows([episode])
        rows += await self.indexer.round_rows(stored_rounds)
        await self.index.upsert(await self.indexer.embed(rows))
        log.info("session %s id=%s episode=%s rounds=%d dropped_turns=%d",
                 "folded" if folding else "consolidated", work.session_id,
                 episode.id if episode else None, len(stored_rounds), len(dropped))
        return True

    async def _session_scope(self, thread: ThreadRow, session_id: int) -> Scope | None:
        """The private scope of a private thread's user, the thread's scope for a group; None
        for a private thread without a user turn (nothing to keep)."""
        if thread.chat_kind is not ChatKind.PRIVATE:
            return Scope.group(thread.id)
        owner = next((t.user_id for t in await self.store.conversations.session_turns(session_id)
                      if t.role is Role.USER and t.user_id), None)
        return Scope.private(owner) if owner is not None else None

    async def resummarise(self, session_ids: Sequence[int]) -> int:
        """Summarise closed sessions again from the turns they still have (their episode cited
        turns that ``/forget N`` deleted and was deleted with them); a session with no turns
        left stays without an episode. Returns the number of episodes written."""
        if not session_ids:
            return 0
        written = []
        for session_id in session_ids:
            session = await self.store.conversations.get_session(session_id)
            if session is None or await self.store.episodes.session_episode(session_id) is not None:
                continue
            thread = await self.store.identities.get_thread(session.thread_id)
            kept = [t for t in await self.store.conversations.session_turns(session_id) if not t.memory_off]
            scope = await self._session_scope(thread, session_id)
            draft = summarise_session(kept, counter=self.counter,
                                      max_tokens=self.episode_summary_tokens
                                      ) if kept and scope else None
            if draft is None:
                continue
            written.append(await self.store.episodes.write_episode(
                session_id, scope, draft, started_at=kept[0].created_at,
                ended_at=kept[-1].created_at, now=self.clock.now()))
        if written:
            await self.index.upsert(await self.indexer.episode_items(written))
        log.info("episodes re-summarised after forget count=%d", len(written))
        return len(written)
