"""Remembering: what a user's turn, and an edit of it, does to semantic memory, with the
index brought in step (the write policy itself is :class:`memory.semantic.SemanticWriter`).
"""

from __future__ import annotations

import logging

from memory.context import Context
from memory.forgetting import Forgetting
from memory.indexing import Indexer, fact_scope
from memory.ports import Clock, SearchIndex, Store
from memory.semantic import FactOutcome, SemanticWriter
from memory.types import Fact, FactStatus, Role, Turn

log = logging.getLogger("memory.service")


class Remembering:
    """Applies the semantic write policy to new and edited user turns.

    Args:
        store, index: the facts and their index rows.
        indexer: builds the rows of changed facts.
        semantic: the write policy (explicit requests, corrections, topics, repetitions).
        forgetting: drops what an edited turn no longer supports (rounds, candidates).
        clock: the time of a decision.
        default_timezone: IANA zone for users who set none (relative dates in facts).
    """

    def __init__(self, *, store: Store, index: SearchIndex, indexer: Indexer,
                 semantic: SemanticWriter, forgetting: Forgetting, clock: Clock,
                 default_timezone: str) -> None:
        self.store = store
        self.index = index
        self.indexer = indexer
        self.semantic = semantic
        self.forgetting = forgetting
        self.clock = clock
        self.default_timezone = default_timezone

    async def remember(self, ctx: Context, turn: Turn) -> list[FactOutcome]:
        """Apply the semantic write policy (``memory.semantic``) to a user's turn, before the
        next input of the thread is handled, and bring the index in step.

        Returns:
            What happened, one outcome per decision (empty when memory is off, for assistant
            turns, and for turns that hold nothing to remember).
        """
        if turn.role is not Role.USER or not ctx.user.memory_enabled:
            return []
        outcomes = await self.semantic.on_user_turn(
            user_id=ctx.user.id, scope=ctx.scope, thread=ctx.thread, turn=turn,
            tz=ctx.user.timezone or self.default_timezone, now=self.clock.now())
        changed = {o.fact.id for o in outcomes if o.fact and o.status in
                   ("written", "superseded", "ended")}
        changed |= {o.previous.id for o in outcomes if o.previous is not None}
        if changed:
            facts = await self.store.facts.get_facts(changed)
            await self.index.upsert(await self.indexer.fact_items(
                [(f, fact_scope(f)) for f in facts.values()]))
        return outcomes

    async def edit_user_turn(self, ctx: Context, platform_message_id: str, new_text: str, *,
                             derive_facts: bool = True) -> tuple[Turn | None, list[FactOutcome]]:
        """Apply an edited message: the user turn with this platform message id in the
        context's thread gets ``new_text`` (already redacted) and, with ``derive_facts``, its
        facts are derived again. A new value on a topic supersedes the old fact (the write
        policy of ``memory.semantic``); an active fact that only this turn stated and that the
        new text no longer states is ended (kept as history). So the old and the new value are
        never both current.

        Returns:
            ``(turn, outcomes)``: the updated turn (None when no such turn is stored) and what
            happened to semantic memory (ended facts have status ``ended``).
        """
        found = await self.store.conversations.edit_user_turn(ctx.thread.id, platform_message_id, new_text,
                                                self.clock.now())
        if found is None:
            return None, []
        before, turn = found
        if before.text == turn.text:
            return turn, []
        if not derive_facts or not ctx.user.memory_enabled:
            await self.forgetting.drop_derived_from_edit(ctx.user.id, before, turn)
            return turn, []
        stated = [f for f in await self.store.facts.list_facts(ctx.user.id, [FactStatus.ACTIVE])
                  if turn.id in f.source_turn_ids]
        outcomes = await self.remember(ctx, turn)
        touched = {o.fact.id for o in outcomes if o.fact is not None}
        touched |= {o.previous.id for o in outcomes if o.previous is not None}
        ended: list[Fact] = []
        for fact in stated:
            if fact.id in touched or set(fact.source_turn_ids) != {turn.id}:
                continue
            if await self.store.facts.end_fact(fact.id, ctx.user.id, self.clock.now()):
                ended.append(fact)
                outcomes.append(FactOutcome("ended", fact, explicit=True))
        if ended:
            facts = await self.store.facts.get_facts([f.id for f in ended])
            await self.index.upsert(await self.indexer.fact_items(
                [(f, fact_scope(f)) for f in facts.values()]))
        await self.forgetting.drop_derived_from_edit(ctx.user.id, before, turn)
        log.info("turn edited id=%s thread=%s outcomes=%d ended=%d", turn.id, ctx.thread.id,
                 len(outcomes), len(ended))
        return turn, outcomes
