"""The memory service: one front door to working, episodic and semantic memory.

It writes turns, explicit facts, episodes and rounds to the store (``memory.ports.Store``: the
source of truth), keeps the search index in step (written by key after the store's commit,
reconciled at start-up), recalls and packs memory for a prompt, and deletes on request. It
never calls a chat platform or a language model; the conversation engine in ``bot/`` does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime

from memory.consolidation import LLMConsolidator
from memory.context import Context, MemoryConfig
from memory.forgetting import Forgetting
from memory.indexing import Indexer, fact_scope
from memory.lifecycle import (
    IdleCheck,
    MaintenanceReport,
    expiry_cutoff,
    facts_to_archive,
    idle_cutoff,
    idle_deadline,
    is_idle,
    retention_cutoff,
)
from memory.policy import RecallPolicy
from memory.ports import (
    Clock,
    Embedder,
    SearchIndex,
    Store,
    StructuredModel,
    ThreadLocks,
    TokenCounter,
)
from memory.recaller import RecallResult, Recaller
from memory.records import (
    NO_WRITES,
    ForgetResult,
    PromptRecord,
    SessionRow,
    ThreadRow,
    TurnWrites,
    UsageEntry,
    UsageRow,
    UserRow,
)
from memory.semantic import FactOutcome, SemanticWriter
from memory.stores.exports import ExportFiles
from memory.types import (
    ChatKind,
    Episode,
    Fact,
    FactStatus,
    IncomingMessage,
    ModelReply,
    Role,
    Scope,
    ThreadKey,
    Turn,
)
from memory.work_runner import KEEP_AFTER_FOLD, WorkRunner
from memory.working import select_window

log = logging.getLogger(__name__)

__all__ = ["Context", "MemoryConfig", "MemoryService", "RecallResult"]


class MemoryService:
    """Front door of the memory core. Services are given their ports; none are built here.

    Collaborators: :attr:`semantic` (the semantic write policy), :attr:`consolidator` (the
    consolidation model, when there is one), :attr:`indexer` (the search index's rows),
    :attr:`recaller` (recall and packing, :mod:`memory.recaller`), :attr:`runner` (pending
    consolidation, :mod:`memory.work_runner`) and :attr:`forgetting` (deletion and purge,
    :mod:`memory.forgetting`); :attr:`policy` holds the recall knobs
    (:class:`memory.policy.RecallPolicy`), :attr:`config` the memory settings.
    """

    def __init__(
        self,
        *,
        store: Store,
        index: SearchIndex,
        embedder: Embedder,
        counter: TokenCounter,
        clock: Clock,
        config: MemoryConfig,
        consolidation_model: StructuredModel | None = None,
        on_model_usage: Callable[[int, ModelReply, datetime], Awaitable[None]] | None = None,
        policy: RecallPolicy | None = None,
        locks: ThreadLocks | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.counter = counter
        self.clock = clock
        self._config = config
        policy = policy or RecallPolicy()
        self.indexer = Indexer(store=store, index=index, embedder=embedder,
                               default_timezone=config.default_timezone, policy=policy)
        self.recaller = Recaller(store=store, index=index, embedder=embedder, counter=counter,
                                 clock=clock, config=config, policy=policy)
        self.semantic = SemanticWriter(facts=store.facts, conversations=store.conversations,
                                       embedder=embedder, index=index)
        # LLM consolidation on top of the rules; None = rules only (offline)
        self.consolidator = LLMConsolidator(
            model=consolidation_model, facts=store.facts, identities=store.identities,
            index=index, embedder=embedder,
            default_timezone=config.default_timezone, on_usage=on_model_usage,
        ) if consolidation_model is not None else None
        self.runner = WorkRunner(store=store, index=index, indexer=self.indexer,
                                 counter=counter, clock=clock,
                                 episode_summary_tokens=config.episode_summary_tokens,
                                 consolidator=self.consolidator, locks=locks)
        self.forgetting = Forgetting(store=store, index=index, indexer=self.indexer,
                                     runner=self.runner, clock=clock,
                                     exports=ExportFiles.beside(store.path))

    @property
    def exports(self) -> ExportFiles | None:
        """The data folder's export files (purged with what they hold), or None."""
        return self.forgetting.exports

    @property
    def policy(self) -> RecallPolicy:
        """The recall knobs in use (the indexer's round-vector knobs among them); setting it
        gives the new value to the recaller and the indexer."""
        return self.recaller.policy

    @policy.setter
    def policy(self, value: RecallPolicy) -> None:
        self.recaller.policy = value
        self.indexer.policy = value

    @property
    def config(self) -> MemoryConfig:
        """The memory settings in use; setting it gives the new value to the collaborators
        that read it per call."""
        return self._config

    @config.setter
    def config(self, value: MemoryConfig) -> None:
        self._config = value
        self.recaller.config = value

    # ----------------------------------------------------------------- identities and turns

    async def context(self, msg: IncomingMessage) -> Context:
        """Resolve (creating on first sight) the user and thread of an incoming message."""
        now = self.clock.now()
        user = await self.store.identities.user_for_account(
            msg.thread.platform, msg.platform_user_id, msg.display_name, now
        )
        thread = await self.store.identities.thread_for_key(msg.thread, msg.chat_kind, msg.chat_title, now)
        return Context(user=await self._chat_switch(user, thread), thread=thread)

    async def _chat_switch(self, user: UserRow, thread: ThreadRow) -> UserRow:
        """In a group whose admins ran ``/memory_off chat``, everyone there has memory off."""
        if user.memory_enabled and thread.chat_kind is ChatKind.GROUP and not (
                await self.store.identities.chat_memory_enabled(thread.key.platform, thread.key.chat_id)):
            return replace(user, memory_enabled=False)
        return user

    async def refresh(self, ctx: Context) -> Context:
        """Reload the user row (after ``/memory_on`` or ``/memory_off``)."""
        user = await self.store.identities.get_user(ctx.user.id)
        return Context(user=await self._chat_switch(user, ctx.thread), thread=ctx.thread)

    async def record_user_turn(
        self, ctx: Context, text: str, *, at: datetime, speaker: str,
        platform_message_id: str | None = None, writes: TurnWrites = NO_WRITES,
    ) -> tuple[Turn, bool]:
        """Store a user's (already redacted) turn, with ``writes`` (the delivery's handled
        mark, a reply due) in the same transaction; returns ``(turn, created)``."""
        return await self.store.conversations.add_turn(
            thread_id=ctx.thread.id, role=Role.USER, text=text, at=at, user_id=ctx.user.id,
            speaker=speaker, platform_message_id=platform_message_id,
            memory_off=not ctx.user.memory_enabled, tokens=self.counter.count(text),
            fold_after=self._fold_bounds, writes=writes,
        )

    async def record_assistant_turn(
        self, ctx: Context, text: str, *, at: datetime, generated_by: str,
        writes: TurnWrites = NO_WRITES,
    ) -> Turn:
        """Store the assistant's reply in the thread's open session, with ``writes`` (the
        reply's usage, ``/why`` record and recalled keys) in the same transaction
        (:meth:`memory.ports.ConversationStore.add_turn`)."""
        turn, _ = await self.store.conversations.add_turn(
            thread_id=ctx.thread.id, role=Role.ASSISTANT, text=text, at=at, speaker="Assistant",
            generated_by=generated_by, memory_off=not ctx.user.memory_enabled,
            tokens=self.counter.count(text), fold_after=self._fold_bounds, writes=writes,
        )
        return turn

    async def open_session(self, thread_id: int) -> SessionRow | None:
        """The thread's open session, or None."""
        return await self.store.conversations.open_session(thread_id)

    async def recent_turns(self, ctx: Context) -> list[Turn]:
        """The open session's newest turns (folded ones too; at most three windows' worth),
        oldest first: the read working memory makes, from the same cache."""
        _, recent = await self.store.conversations.working_turns(
            ctx.thread.id, self.config.max_working_messages * 3)
        return recent

    async def close_conversation(self, ctx: Context, *, reason: str) -> str:
        """Close the thread's open session and say what became of it: ``saved`` (its episode
        is written), ``later`` (its consolidation is still pending, e.g. the model failed and
        it is retried), ``off`` (memory was off: nothing kept) or ``nothing`` (no session, or
        nothing in it to summarise)."""
        session = await self.store.conversations.open_session(ctx.thread.id)
        if session is None or not await self.close_session(ctx, reason=reason):
            return "nothing"
        if await self.store.episodes.session_episode(session.id) is not None:
            return "saved"
        if any(w.session_id == session.id
               for w in await self.store.work.pending_work(thread_id=ctx.thread.id)):
            return "later"
        return "off" if not ctx.user.memory_enabled else "nothing"

    async def fold_due(self, thread_id: int) -> bool:
        """Whether a fold of the thread's open session is pending and due now."""
        return any(w.kind == "fold" for w in await self.store.work.pending_work(
            thread_id=thread_id, due_at=self.clock.now()))

    @property
    def _fold_bounds(self) -> tuple[int, int, int]:
        return (self.config.summary_trigger_messages, self.config.max_working_tokens,
                KEEP_AFTER_FOLD + KEEP_AFTER_FOLD // 2)

    async def working_memory(self, ctx: Context) -> list[Turn]:
        """The prompt window of the thread: its open session's turns not yet folded into the
        running episode, within the bounds (the running episode itself is pinned by recall)."""
        session, recent = await self.store.conversations.working_turns(  # cached: no store read
            ctx.thread.id, self.config.max_working_messages * 3)
        if session is None:
            return []
        turns = [t for t in recent if t.id > session.folded_through]
        return select_window(
            turns, max_turns=self.config.max_working_messages,
            max_tokens=self.config.max_working_tokens, counter=self.counter,
        )

    # ----------------------------------------------------------------- semantic memory

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
            tz=ctx.user.timezone or self.config.default_timezone, now=self.clock.now())
        changed = {o.fact.id for o in outcomes if o.fact and o.status in
                   ("written", "superseded", "ended")}
        changed |= {o.previous.id for o in outcomes if o.previous is not None}
        if changed:
            facts = await self.store.facts.get_facts(changed)
            await self.index.upsert(await self.indexer.fact_items(
                [(f, fact_scope(f)) for f in facts.values()]))
        return outcomes

    async def facts_in_scope(self, ctx: Context) -> list[Fact]:
        """The speaker's facts of the context's scope, every status, oldest first."""
        return await self.store.facts.facts_in_scope(ctx.user.id, ctx.scope)

    async def facts_for(self, user_id: int, *, history: bool = False) -> list[Fact]:
        """A user's active facts (oldest first); with ``history`` also superseded and archived."""
        statuses = [FactStatus.ACTIVE]
        if history:
            statuses += [FactStatus.SUPERSEDED, FactStatus.ARCHIVED]
        return await self.store.facts.list_facts(user_id, statuses)

    async def episodes_for(self, user_id: int) -> list[Episode]:
        """The episodes of a user's private conversations, newest first."""
        return await self.store.episodes.episodes_in_scope(Scope.private(user_id))

    # ----------------------------------------------------------------- sessions and episodes

    async def consolidate_pending(self, *, thread_id: int | None = None,
                                  waiting_too: bool = False) -> int:
        """Run every due consolidation job (of one thread; ``waiting_too``: those waiting
        for a retry as well), oldest first (:meth:`memory.work_runner.WorkRunner.
        consolidate_pending`). Returns the number of jobs completed."""
        return await self.runner.consolidate_pending(thread_id=thread_id, waiting_too=waiting_too)

    async def settle(self, thread_id: int, *, timeout: float = 5.0) -> bool:
        """Wait (at most ``timeout`` seconds) until the thread's closed sessions are
        consolidated (:meth:`memory.work_runner.WorkRunner.settle`); True when none is left."""
        return await self.runner.settle(thread_id, timeout=timeout)

    def consolidate_in_background(self, thread_id: int) -> None:
        """Start the thread's pending work (a fold) off the reply path; :meth:`drain` awaits
        it."""
        self.runner.consolidate_in_background(thread_id)

    async def drain(self) -> None:
        """Wait for background consolidation started by this service."""
        await self.runner.drain()

    async def close_session(self, ctx_or_thread_id: Context | int, *, reason: str,
                            at: datetime | None = None) -> bool:
        """Close the thread's open session and consolidate it (episode + rounds).

        Returns:
            True when a session was open and is now closed.
        """
        thread_id = (ctx_or_thread_id.thread.id if isinstance(ctx_or_thread_id, Context)
                     else ctx_or_thread_id)
        session = await self.store.conversations.open_session(thread_id)
        if session is None:
            return False
        closed = await self.store.conversations.close_session(session.id, at or self.clock.now(), reason)
        await self.consolidate_pending(thread_id=thread_id)
        return closed








    # ----------------------------------------------------------------- index rows

    async def reconcile(self) -> tuple[int, int]:
        """Bring the index in line with the store: add missing rows, delete rows it lacks
        (:meth:`memory.indexing.Indexer.reconcile`).

        Returns:
            ``(added, removed)`` row counts.
        """
        return await self.indexer.reconcile()

    # ----------------------------------------------------------------- recall

    async def recall(
        self,
        ctx: Context,
        query: str,
        *,
        budget_tokens: int | None = None,
        touch: bool = True,
        exclude_session_id: int | None = None,
    ) -> RecallResult:
        """Recall memory for ``query`` in ``ctx`` and pack it under ``budget_tokens`` (default
        ``MEMORY_TOKEN_BUDGET``); recalled facts get ``last_recalled_at`` unless ``touch`` is
        False; ``exclude_session_id`` (the current session) has its running episode pinned
        and is not recalled a second time (:meth:`memory.recaller.Recaller.recall`).

        Returns:
            The packed blocks, the number of candidates and the elapsed milliseconds.
        """
        return await self.recaller.recall(ctx, query, budget_tokens=budget_tokens, touch=touch,
                                          exclude_session_id=exclude_session_id)

    # ----------------------------------------------------------------- control

    async def set_memory(self, ctx: Context, enabled: bool) -> Context:
        """Persist ``/memory_on`` / ``/memory_off`` for the user; returns the refreshed context."""
        await self.store.identities.set_memory_enabled(ctx.user.id, enabled)
        log.info("memory %s user=%s", "on" if enabled else "off", ctx.user.id)
        return await self.refresh(ctx)

    async def set_chat_memory(self, ctx: Context, enabled: bool) -> None:
        """Persist ``/memory_off chat`` / ``/memory_on chat`` for the context's whole chat."""
        await self.store.identities.set_chat_memory(
            ctx.thread.key.platform, ctx.thread.key.chat_id, enabled, self.clock.now())

    async def set_timezone(self, ctx: Context, zone: str | None) -> None:
        """Persist the user's IANA time zone (``/timezone``); None returns to the default."""
        await self.store.identities.set_timezone(ctx.user.id, zone)

    async def set_language(self, ctx: Context, language: str | None) -> None:
        """Persist the language the user chose for replies (``/language``: ``en``, ``zh``);
        None returns to choosing by each message."""
        await self.store.identities.set_language(ctx.user.id, language)

    async def find_user(self, platform: str, platform_user_id: str) -> UserRow | None:
        """The user behind a platform account, or None (never creates one)."""
        return await self.store.identities.find_user(platform, platform_user_id)

    async def note_consent(self, ctx: Context) -> bool:
        """Record that the user was told facts are kept; True only the first time."""
        return await self.store.identities.mark_consent_noted(ctx.user.id, self.clock.now())

    # ----------------------------------------------------------------- usage and /why records

    async def record_usage(self, entry: UsageEntry) -> None:
        """Add one model call's usage to its user's totals (``/stats``)."""
        await self.store.records.add_model_usage(entry)

    async def record_reply(self, *, usage: UsageEntry | None,
                           prompt_record: PromptRecord | None) -> None:
        """The usage and ``/why`` record of a reply that stored no turn, in one write."""
        await self.store.records.record_reply(usage=usage, prompt_record=prompt_record)

    async def model_usage(self, user_id: int, *, since_day: str | None = None
                          ) -> list[UsageRow]:
        """A user's usage per UTC day and model, newest day first (from ``since_day``,
        ``YYYY-MM-DD``, inclusive)."""
        return await self.store.records.model_usage(user_id, since_day=since_day)

    async def last_prompt_record(self, ctx: Context) -> dict | None:
        """What the model saw for the user's last reply in this thread (``/why``), or None."""
        return await self.store.records.load_prompt_record(ctx.thread.id, ctx.user.id)

    # ----------------------------------------------------------------- replies due after a crash

    async def reply_delivered(self, key: ThreadKey, platform_message_id: str) -> None:
        """The answer to the user turn with this platform message id was delivered."""
        await self.store.deliveries.reply_delivered(key, platform_message_id)

    async def due_messages(self, platform: str) -> list[IncomingMessage]:
        """The stored messages of ``platform`` whose answer is still due, oldest first."""
        return await self.store.deliveries.due_messages(platform)

    async def due_turn(self, ctx: Context, platform_message_id: str | None
                       ) -> tuple[Turn | None, str | None]:
        """The due user turn with this platform message id in the context's thread and the
        answer stored after it (None when none was); ``(None, None)`` when none is due."""
        return await self.store.deliveries.due_turn(ctx.thread.id, platform_message_id)

    async def turn_has_memory(self, turn_id: int) -> bool:
        """Whether semantic memory saw this turn (a fact or a candidate was drawn from it)."""
        return await self.store.facts.turn_has_memory(turn_id)

    async def forget_fact(self, user_id: int, fact_id: int) -> ForgetResult:
        """Delete one fact of the user with what derives from it, and purge it from disk
        (:meth:`memory.forgetting.Forgetting.forget_fact`)."""
        return await self.forgetting.forget_fact(user_id, fact_id)

    async def forget_fact_messages(self, user_id: int, fact_id: int) -> list[str]:
        """The texts of the user's own messages :meth:`forget_fact` would delete now."""
        return await self.forgetting.forget_fact_messages(user_id, fact_id)

    async def forget_fact_preview(self, user_id: int, fact_id: int) -> list[Fact]:
        """The facts :meth:`forget_fact` would delete now, the fact first."""
        return await self.forgetting.forget_fact_preview(user_id, fact_id)

    async def forget_all_preview(self, user_id: int) -> ForgetResult:
        """What :meth:`forget_all` would delete now, as counts; deletes nothing."""
        return await self.forgetting.forget_all_preview(user_id)

    async def forget_all(self, user_id: int) -> ForgetResult:
        """Delete everything of one user and purge it from disk
        (:meth:`memory.forgetting.Forgetting.forget_all`)."""
        return await self.forgetting.forget_all(user_id)

    async def finish_purges(self) -> int:
        """Start-up: finish every purge a crash interrupted; returns how many."""
        return await self.forgetting.finish_purges()

    # ----------------------------------------------------------------- life cycle

    async def close_if_idle(self, thread_id: int, *, timeout_seconds: float) -> IdleCheck:
        """Close the thread's open session if it is idle now (``memory.lifecycle.is_idle`` on
        this service's clock) and consolidate it; the close is conditional in SQL, so a turn
        stored meanwhile keeps the session open.

        Args:
            thread_id: the thread's row id.
            timeout_seconds: ``IDLE_TIMEOUT_SECONDS``.

        Returns:
            Whether it closed the session, or the open session's idle deadline (aware UTC).
        """
        session = await self.store.conversations.open_session(thread_id)
        if session is None:
            return IdleCheck(closed=False)
        now = self.clock.now()
        if is_idle(session.last_turn_at, timeout_seconds, now):
            closed = await self.store.conversations.close_session_if_idle(
                session.id, last_turn_before=idle_cutoff(now, timeout_seconds), at=now)
            if closed:
                await self.consolidate_pending(thread_id=thread_id)
                return IdleCheck(closed=True)
            session = await self.store.conversations.open_session(thread_id)  # a turn came in meanwhile
            if session is None:
                return IdleCheck(closed=False)
        return IdleCheck(closed=False,
                         deadline=idle_deadline(session.last_turn_at, timeout_seconds))

    async def close_idle_sessions(self, *, timeout_seconds: float
                                  ) -> tuple[int, list[tuple[int, datetime]]]:
        """Start-up: close (and consolidate) every open session that went idle while the
        process was down.

        Returns:
            ``(closed, open)``: the number closed now, and ``(thread_id, idle deadline)`` of
            every session still open (aware UTC), for the scheduler to watch.
        """
        closed, still_open = 0, []
        for session in await self.store.conversations.open_sessions():
            check = await self.close_if_idle(session.thread_id, timeout_seconds=timeout_seconds)
            if check.closed:
                closed += 1
            elif check.deadline is not None:
                still_open.append((session.thread_id, check.deadline))
        return closed, still_open

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
        consolidated = await self.consolidate_pending()
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

    # ----------------------------------------------------------------- edited messages

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

    # ----------------------------------------------------------------- export / import

    async def export_user(self, user_id: int) -> dict:
        """Everything stored about one user as the export document (``memory.portability``)."""
        from memory.portability import build_document

        doc = build_document(await self.store.privacy.user_rows(user_id), self.clock.now())
        log.info("export user=%s facts=%d episodes=%d turns=%d", user_id, len(doc["facts"]),
                 len(doc["episodes"]), len(doc["turns"]))
        return doc

    async def import_user(self, doc: dict, *, replace: bool = False) -> int:
        """Load an export document as a user and index what it holds; returns the user id.

        Raises:
            ExportFormatError: the document is not a loadable export.
            UserExistsError: one of its accounts already has a user here and ``replace`` is
                False; with ``replace`` that user is first forgotten entirely and removed.
        """
        from memory.errors import StoreError
        from memory.portability import UserExistsError, parse_document

        rows = parse_document(doc)
        for acc in rows["accounts"]:
            existing = await self.store.identities.find_user(acc["platform"], acc["platform_user_id"])
            if existing is None:
                continue
            if not replace:
                raise UserExistsError(
                    f"user {acc['platform']}:{acc['platform_user_id']} exists (use --replace)")
            await self.forget_all(existing.id)
            await self.store.privacy.delete_user(existing.id, self.clock.now())
        try:
            user_id = await self.store.privacy.load_user_rows(rows, self.clock.now())
        except StoreError as exc:
            raise UserExistsError(str(exc)) from exc
        await self.reconcile()
        return user_id


