"""The memory service: one front door to working, episodic and semantic memory.

A façade over named collaborators, each given its ports: :class:`~memory.sessions.Sessions`
(identities, turns, the working-memory window, closing sessions),
:class:`~memory.remembering.Remembering` (what a turn and an edit do to semantic memory),
:class:`~memory.recaller.Recaller` (recall and packing under the token budget),
:class:`~memory.indexing.Indexer` (the search index's rows, the start-up reconcile),
:class:`~memory.work_runner.WorkRunner` (consolidation off the reply path),
:class:`~memory.forgetting.Forgetting` (deletion and purge), :class:`~memory.maintenance.
Maintenance` (archiving, retention, upkeep) and :class:`~memory.transfer.Transfer` (export and
import). The store (``memory.ports.Store``) is the source of truth; the search index is kept in
step by key after the store's commit and reconciled at start-up. It never calls a chat
platform or a language model; the conversation engine in ``bot/`` does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from memory.consolidation import LLMConsolidator
from memory.context import Context, MemoryConfig
from memory.forgetting import Forgetting
from memory.indexing import Indexer
from memory.lifecycle import IdleCheck, MaintenanceReport
from memory.maintenance import Maintenance
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
    PendingQuestion,
    PromptRecord,
    SessionRow,
    TurnWrites,
    UsageEntry,
    UsageRow,
    UserRow,
)
from memory.remembering import Remembering
from memory.semantic import FactOutcome, SemanticWriter
from memory.sessions import Sessions
from memory.stores.exports import ExportFiles
from memory.transfer import Transfer
from memory.types import (
    Episode,
    Fact,
    FactStatus,
    IncomingMessage,
    ModelReply,
    Scope,
    ThreadKey,
    Turn,
)
from memory.work_runner import WorkRunner

log = logging.getLogger(__name__)

__all__ = ["Context", "MemoryConfig", "MemoryService", "RecallResult"]


class MemoryService:
    """Front door of the memory core. Services are given their ports; none are built here.

    Collaborators (built here from the ports, each in its own module): :attr:`sessions`,
    :attr:`semantic` (the semantic write policy) and :attr:`remembering`,
    :attr:`consolidator` (the consolidation model, when there is one), :attr:`indexer`,
    :attr:`recaller`, :attr:`runner`, :attr:`forgetting`, :attr:`maintenance` and
    :attr:`transfer`; :attr:`policy` holds the recall knobs
    (:class:`memory.policy.RecallPolicy`), :attr:`config` the memory settings. The public
    methods below are the front door ``bot/`` uses; each delegates to one collaborator or
    one store port.
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
        self.sessions = Sessions(store=store, counter=counter, clock=clock, config=config,
                                 runner=self.runner)
        self.forgetting = Forgetting(store=store, index=index, indexer=self.indexer,
                                     runner=self.runner, clock=clock,
                                     exports=ExportFiles.beside(store.path))
        self.remembering = Remembering(store=store, index=index, indexer=self.indexer,
                                       semantic=self.semantic, forgetting=self.forgetting,
                                       clock=clock, default_timezone=config.default_timezone)
        self.maintenance = Maintenance(store=store, index=index, indexer=self.indexer,
                                       runner=self.runner, clock=clock)
        self.transfer = Transfer(store=store, indexer=self.indexer, forgetting=self.forgetting,
                                 clock=clock)

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
        that read it per call (sessions, recall, the time zone of semantic writes)."""
        return self._config

    @config.setter
    def config(self, value: MemoryConfig) -> None:
        self._config = value
        self.sessions.config = value
        self.recaller.config = value
        self.remembering.default_timezone = value.default_timezone

    # ----------------------------------------------------------------- identities and turns

    async def context(self, msg: IncomingMessage) -> Context:
        """Resolve (creating on first sight) the user and thread of an incoming message
        (:meth:`memory.sessions.Sessions.context`)."""
        return await self.sessions.context(msg)

    async def refresh(self, ctx: Context) -> Context:
        """Reload the user row (after ``/memory_on`` or ``/memory_off``)."""
        return await self.sessions.refresh(ctx)

    async def record_user_turn(
        self, ctx: Context, text: str, *, at: datetime, speaker: str,
        platform_message_id: str | None = None, writes: TurnWrites = NO_WRITES,
    ) -> tuple[Turn, bool]:
        """Store a user's (already redacted) turn, with ``writes`` (the delivery's handled
        mark, a reply due) in the same transaction; returns ``(turn, created)``."""
        return await self.sessions.record_user_turn(
            ctx, text, at=at, speaker=speaker, platform_message_id=platform_message_id,
            writes=writes)

    async def record_assistant_turn(
        self, ctx: Context, text: str, *, at: datetime, generated_by: str,
        writes: TurnWrites = NO_WRITES, answers: Turn | None = None,
    ) -> Turn:
        """Store the assistant's reply in the thread's open session, with ``writes`` (the
        reply's usage, ``/why`` record and recalled keys) in the same transaction; the reply to
        user turn ``answers`` is stored only when that turn has no stored answer yet, else that
        answer is returned (:meth:`memory.sessions.Sessions.record_assistant_turn`)."""
        return await self.sessions.record_assistant_turn(ctx, text, at=at,
                                                         generated_by=generated_by, writes=writes,
                                                         answers=answers)

    async def open_session(self, thread_id: int) -> SessionRow | None:
        """The thread's open session, or None."""
        return await self.sessions.open_session(thread_id)

    async def recent_turns(self, ctx: Context) -> list[Turn]:
        """The open session's newest turns, folded ones too, oldest first."""
        return await self.sessions.recent_turns(ctx)

    async def working_memory(self, ctx: Context) -> list[Turn]:
        """The prompt window of the thread (:meth:`memory.sessions.Sessions.working_memory`)."""
        return await self.sessions.working_memory(ctx)

    async def fold_due(self, thread_id: int) -> bool:
        """Whether a fold of the thread's open session is pending and due now."""
        return await self.sessions.fold_due(thread_id)

    async def close_conversation(self, ctx: Context, *, reason: str) -> str:
        """Close the thread's open session and say what became of it: ``saved``, ``later``,
        ``off`` or ``nothing`` (:meth:`memory.sessions.Sessions.close_conversation`)."""
        return await self.sessions.close_conversation(ctx, reason=reason)

    async def close_session(self, ctx_or_thread_id: Context | int, *, reason: str,
                            at: datetime | None = None) -> bool:
        """Close the thread's open session and consolidate it (episode + rounds); True when a
        session was open and is now closed."""
        return await self.sessions.close_session(ctx_or_thread_id, reason=reason, at=at)

    async def close_if_idle(self, thread_id: int, *, timeout_seconds: float) -> IdleCheck:
        """Close (and consolidate) the thread's open session if it is idle now; else its idle
        deadline (:meth:`memory.sessions.Sessions.close_if_idle`)."""
        return await self.sessions.close_if_idle(thread_id, timeout_seconds=timeout_seconds)

    async def close_idle_sessions(self, *, timeout_seconds: float
                                  ) -> tuple[int, list[tuple[int, datetime]]]:
        """Start-up: close the sessions that went idle while the process was down; returns
        ``(closed, [(thread_id, idle deadline), ...])`` of those still open."""
        return await self.sessions.close_idle_sessions(timeout_seconds=timeout_seconds)

    async def close_overdue_sessions(self, *, timeout_seconds: float) -> int:
        """Close the open sessions past their idle deadline, whichever process watched them;
        returns how many (:meth:`memory.sessions.Sessions.close_overdue_sessions`)."""
        return await self.sessions.close_overdue_sessions(timeout_seconds=timeout_seconds)

    # ----------------------------------------------------------------- semantic memory

    async def remember(self, ctx: Context, turn: Turn) -> list[FactOutcome]:
        """Apply the semantic write policy to a user's turn and bring the index in step; one
        outcome per decision (:meth:`memory.remembering.Remembering.remember`)."""
        return await self.remembering.remember(ctx, turn)

    async def edit_user_turn(self, ctx: Context, platform_message_id: str, new_text: str, *,
                             derive_facts: bool = True) -> tuple[Turn | None, list[FactOutcome]]:
        """Apply an edited message; returns the updated turn (None when no such turn is
        stored) and what happened to semantic memory
        (:meth:`memory.remembering.Remembering.edit_user_turn`)."""
        return await self.remembering.edit_user_turn(ctx, platform_message_id, new_text,
                                                     derive_facts=derive_facts)

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

    async def reconcile(self) -> tuple[int, int]:
        """Bring the index in line with the store: add missing rows, delete rows it lacks
        (:meth:`memory.indexing.Indexer.reconcile`).

        Returns:
            ``(added, removed)`` row counts.
        """
        return await self.indexer.reconcile()

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

    async def reply_delivered(self, key: ThreadKey, platform_message_id: str) -> None:
        """The answer to the user turn with this platform message id was delivered."""
        await self.store.deliveries.reply_delivered(key, platform_message_id)

    async def ask_question(self, question: PendingQuestion) -> None:
        """Keep a command's question for its author's answer (``memory.ports.QuestionStore``)."""
        await self.store.questions.ask(question)

    async def waiting_question(self, thread_id: int, user_id: int) -> PendingQuestion | None:
        """The unexpired question waiting for ``user_id`` in ``thread_id``, or None."""
        return await self.store.questions.peek(thread_id, user_id, self.clock.now())

    async def take_question(self, thread_id: int, user_id: int, *,
                            asked_at: datetime | None = None) -> PendingQuestion | None:
        """Take the unexpired question waiting for ``user_id`` in ``thread_id`` (the one asked
        at ``asked_at``, when given; one taker gets it), or None (then after one read only)."""
        if asked_at is None:
            waiting = await self.waiting_question(thread_id, user_id)
            if waiting is None:
                return None
            asked_at = waiting.asked_at
        return await self.store.questions.take(thread_id, user_id, self.clock.now(),
                                               asked_at=asked_at)

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

    # ----------------------------------------------------------------- maintenance

    async def archive_unused_facts(self, *, expire_days: int) -> int:
        """Archive the active facts unused for ``expire_days`` days; returns how many
        (:meth:`memory.maintenance.Maintenance.archive_unused_facts`)."""
        return await self.maintenance.archive_unused_facts(expire_days=expire_days)

    async def delete_old_turns(self, *, retention_days: int) -> ForgetResult:
        """Retention: delete consolidated turns older than ``retention_days`` days with the
        rounds that hold them (:meth:`memory.maintenance.Maintenance.delete_old_turns`)."""
        return await self.maintenance.delete_old_turns(retention_days=retention_days)

    async def run_daily_maintenance(self, *, expire_days: int, retention_days: int
                                    ) -> MaintenanceReport | None:
        """The daily maintenance, once per UTC day across processes on the store; None when
        another process claimed it (:meth:`memory.maintenance.Maintenance.run_daily_maintenance`)."""
        return await self.maintenance.run_daily_maintenance(expire_days=expire_days,
                                                            retention_days=retention_days)

    async def run_maintenance(self, *, expire_days: int, retention_days: int
                              ) -> MaintenanceReport:
        """The daily maintenance (:meth:`memory.maintenance.Maintenance.run_maintenance`)."""
        return await self.maintenance.run_maintenance(expire_days=expire_days,
                                                      retention_days=retention_days)

    # ----------------------------------------------------------------- export / import

    async def export_user(self, user_id: int) -> dict:
        """Everything stored about one user as the export document (``memory.portability``)."""
        return await self.transfer.export_user(user_id)

    async def import_user(self, doc: dict, *, replace: bool = False) -> int:
        """Load an export document as a user and index what it holds; returns the user id.

        Raises:
            ExportFormatError: the document is not a loadable export.
            UserExistsError: one of its accounts already has a user here and ``replace`` is
                False; with ``replace`` that user is first forgotten entirely and removed.
        """
        return await self.transfer.import_user(doc, replace=replace)
