"""The daily maintenance: pending consolidation caught up, unused facts archived, turns past
their retention deleted, the index compacted and the store's upkeep (which facts and turns
are due: the pure functions of :mod:`memory.lifecycle`).
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from memory.indexing import Indexer
from memory.lifecycle import (
    MaintenanceReport,
    expiry_cutoff,
    facts_to_archive,
    retention_cutoff,
)
from memory.ports import Clock, SearchIndex, Store
from memory.records import ForgetResult
from memory.work_runner import WorkRunner

log = logging.getLogger("memory.service")


STALE_CLAIM = timedelta(hours=1)
"""How long a claimed daily maintenance may stay unfinished before another process takes it
over (its process died): a maintenance takes seconds to minutes (docs/benchmarks.md)."""


class Maintenance:
    """Archives, applies retention and keeps the store and the index in shape.

    Args:
        store, index: what is archived, deleted and compacted.
        indexer: rewrites the index rows of archived facts.
        runner: catches up pending consolidation first.
        clock: today (the cutoffs of expiry and retention).
    """

    def __init__(self, *, store: Store, index: SearchIndex, indexer: Indexer,
                 runner: WorkRunner, clock: Clock) -> None:
        self.store = store
        self.index = index
        self.indexer = indexer
        self.runner = runner
        self.clock = clock

    async def archive_unused_facts(self, *, expire_days: int) -> int:
        """Archive the active facts neither recalled nor confirmed for ``expire_days`` days
        (``memory.lifecycle.facts_to_archive``) and rewrite their index rows with status
        ``archived``, so recall (which asks for active facts) no longer finds them. They stay
        listed by ``/memories all`` and deletable.

        Returns:
            The number of facts archived (0 when ``expire_days`` is 0).
        """
        now = self.clock.now()
        cutoff = expiry_cutoff(now, expire_days)
        if cutoff is None:
            return 0
        due = facts_to_archive(await self.store.facts.stale_facts(cutoff), now=now,
                               expire_days=expire_days)
        archived = await self.store.facts.archive_facts([f.id for f in due], cutoff=cutoff, now=now)
        for start in range(0, len(archived), 256):
            await self.index.upsert(await self.indexer.fact_items(archived[start:start + 256]))
        return len(archived)

    async def delete_old_turns(self, *, retention_days: int) -> ForgetResult:
        """Retention: delete consolidated turns older than ``retention_days`` days with the
        rounds that hold them, from the store and the index (such rounds are no longer
        recallable; episodes stay).

        Returns:
            What was removed (zero counts when ``retention_days`` is 0).
        """
        cutoff = retention_cutoff(self.clock.now(), retention_days)
        if cutoff is None:
            return ForgetResult(0, 0, 0, 0, ())
        result = await self.store.privacy.delete_consolidated_turns(cutoff, self.clock.now())
        await self.index.delete(list(result.index_keys))
        return result

    async def run_daily_maintenance(self, *, expire_days: int, retention_days: int
                                    ) -> MaintenanceReport | None:
        """:meth:`run_maintenance` once per UTC day across every process on the store: the
        first caller of the day claims it (``Store.claim_maintenance``) and runs it; the others
        get None. A claim left unfinished for :data:`STALE_CLAIM` (its process died) is taken
        over; one that failed is released, so a later call of that day runs it again."""
        now = self.clock.now()
        day = now.date().isoformat()
        if not await self.store.claim_maintenance(day, now, stale_before=now - STALE_CLAIM):
            log.info("maintenance of %s already claimed by another process; skipped", day)
            return None
        try:
            report = await self.run_maintenance(expire_days=expire_days,
                                                retention_days=retention_days)
        except BaseException:
            await self.store.finish_maintenance(day, self.clock.now(), done=False)
            raise
        await self.store.finish_maintenance(day, self.clock.now(), done=True)
        return report

    async def run_maintenance(self, *, expire_days: int, retention_days: int
                              ) -> MaintenanceReport:
        """The daily maintenance: catch up pending consolidation, archive unused facts, apply
        turn retention, compact the index (old versions removed), purge the store's free space when
        something was deleted, the store's routine upkeep. Logs the counts.

        Args:
            expire_days: ``MEMORY_EXPIRE_DAYS`` (days; 0 = never archive).
            retention_days: ``RAW_TURN_RETENTION_DAYS`` (days; 0 = keep turns).
        """
        started = time.perf_counter()
        consolidated = await self.runner.consolidate_pending()
        archived = await self.archive_unused_facts(expire_days=expire_days)
        removed = await self.delete_old_turns(retention_days=retention_days)
        await self.index.compact()
        if removed.turns:
            await self.store.purge_free_space()
        await self.store.optimize()
        report = MaintenanceReport(consolidated=consolidated, archived_facts=archived,
                                   deleted_turns=removed.turns, deleted_rounds=removed.rounds,
                                   elapsed_s=time.perf_counter() - started)
        log.info("maintenance done consolidated=%d archived_facts=%d deleted_turns=%d "
                 "deleted_rounds=%d s=%.2f", report.consolidated, report.archived_facts,
                 report.deleted_turns, report.deleted_rounds, report.elapsed_s)
        return report
