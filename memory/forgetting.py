"""Forgetting: a deletion in the store (with what derives from what it deletes, in one
transaction with its purge record) and then its purge from disk, each step safe to repeat
after a crash (:meth:`Forgetting.finish_purges` at start-up).
"""

from __future__ import annotations

import logging

from memory.indexing import Indexer
from memory.ports import Clock, SearchIndex, Store
from memory.records import ForgetResult, PurgeRow
from memory.stores.exports import ExportFiles
from memory.text import has_cjk, search_tokens
from memory.types import Fact, FactStatus, Turn
from memory.work_runner import WorkRunner, round_drafts

log = logging.getLogger("memory.service")


class Forgetting:
    """Deletes on request and purges from disk.

    Args:
        store, index, indexer: what is deleted from, and the rows rewritten after an edit.
        runner: summarises again the sessions that lost their episode.
        clock: the deletion's time (audit, purge records).
        exports: the data folder's export files, deleted with the user's data (None: none).
    """

    def __init__(self, *, store: Store, index: SearchIndex, indexer: Indexer,
                 runner: WorkRunner, clock: Clock, exports: ExportFiles | None) -> None:
        self.store = store
        self.index = index
        self.indexer = indexer
        self.runner = runner
        self.clock = clock
        self.exports = exports

    async def forget_fact(self, user_id: int, fact_id: int) -> ForgetResult:
        """Delete one fact of the user (with history, source turns and their rounds) from
        the store and the index, and purge both from disk before returning (see
        :meth:`finish_purges` for a purge a crash interrupted)."""
        result = await self.store.privacy.delete_fact(user_id, fact_id, self.clock.now())
        await self.purge(result, user_id)
        return result

    async def forget_fact_messages(self, user_id: int, fact_id: int) -> list[str]:
        """The texts of the user's own messages :meth:`forget_fact` would delete now (so that
        copies kept outside the stores, the console's input history, can go first); deletes
        nothing."""
        return await self.store.privacy.fact_deletion_messages(user_id, fact_id)

    async def forget_fact_preview(self, user_id: int, fact_id: int) -> list[Fact]:
        """The facts :meth:`forget_fact` would delete now: the fact first, then the earlier
        values of its topic it replaced; deletes nothing."""
        return await self.store.privacy.fact_with_history(user_id, fact_id)

    async def forget_all_preview(self, user_id: int) -> ForgetResult:
        """What :meth:`forget_all` would delete now, as counts (facts of every status, private
        and group episodes, rounds, messages); deletes nothing."""
        return await self.store.privacy.forget_all_preview(user_id)

    async def forget_all(self, user_id: int) -> ForgetResult:
        """Delete everything of one user (``memory.ports.PrivacyStore.forget_all``) and purge
        it from disk (index rows deleted and old versions cleaned, the store's free space
        purged) before returning."""
        result = await self.store.privacy.forget_all(user_id, self.clock.now())
        await self.purge(result, user_id)
        log.info("forget_all user=%s facts=%d episodes=%d rounds=%d turns=%d", user_id,
                 result.facts, result.episodes, result.rounds, result.turns)
        return result

    async def purge(self, result: ForgetResult, user_id: int) -> None:
        """Finish a deletion: its purge from disk (nothing when nothing was deleted)."""
        if result.purge_id is None:  # nothing was deleted
            return
        await self.run_purge(PurgeRow(result.purge_id, user_id, result.index_keys,
                                       result.resummarise))

    async def run_purge(self, purge: PurgeRow) -> None:
        """The steps of a deletion's purge from disk, each safe to repeat: index rows deleted
        and the index's old versions removed, the user's export files deleted, episodes of
        the sessions that lost theirs summarised again from what remains (after the index
        delete: a new episode may reuse a deleted id), the store's free space purged; then the purge
        record goes."""
        if purge.index_keys:
            await self.index.delete(list(purge.index_keys))
            await self.index.compact()
        if self.exports is not None:
            self.exports.drop(purge.user_id)
        await self.runner.resummarise(purge.resummarise)
        await self.store.privacy.purge_done(purge.id)
        await self.store.purge_free_space()

    async def finish_purges(self) -> int:
        """Start-up: finish every purge a crash interrupted (its rows are already gone from
        the store: the record is written in the deletion's transaction), before any input is
        taken. Returns how many were finished."""
        purges = await self.store.privacy.pending_purges()
        for purge in purges:
            await self.run_purge(purge)
        if purges:
            log.info("interrupted purges finished count=%d", len(purges))
        return len(purges)

    async def drop_derived_from_edit(self, user_id: int, before: Turn, turn: Turn) -> None:
        """What was derived from an edited turn's old text is deleted or rebuilt from what
        remains (``memory.ports.PrivacyStore.drop_derived_from_edit``): replies that quoted it (they hold a
        word of the old text the new one lacks), episodes citing it (summarised again), its
        rounds (rewritten and indexed again), facts only it stated that are no longer current
        (the old value), ``/why`` records; then purged from disk like a deletion."""
        new = set(search_tokens(turn.text))
        old_terms = {t for t in search_tokens(before.text) if t not in new and (
            len(t) >= 3 or any(c.isdigit() for c in t) or (has_cjk(t) and len(t) >= 2))}
        stale = [f.id for f in await self.store.facts.list_facts(
                     user_id, [FactStatus.SUPERSEDED, FactStatus.ARCHIVED])
                 if set(f.source_turn_ids) == {turn.id}]
        cascade = await self.store.privacy.drop_derived_from_edit(
            user_id, turn.id, old_terms, self.clock.now(), fact_ids=stale,
            round_text=lambda turns: "\n".join(d.text for d in round_drafts(turns)))
        await self.run_purge(PurgeRow(cascade.purge_id, user_id, cascade.index_keys,
                                       cascade.resummarise))
        rounds = await self.store.episodes.get_rounds(cascade.rebuilt)
        if rounds:
            await self.index.upsert(await self.indexer.round_items([rounds[i] for i in sorted(rounds)]))
        log.info("edit cascade turn=%s replies_deleted=%d rounds_rebuilt=%d episodes_redone=%d "
                 "facts_deleted=%d", turn.id, cascade.replies, len(rounds),
                 len(cascade.resummarise), len(stale))
