"""Sessions: who is speaking where, the thread's turns and its working-memory window, and the
end of a session (``/new``, an end phrase, the idle timeout) with its consolidation started.

A turn is stored with its :class:`~memory.records.TurnWrites` in one transaction, and past the
fold bounds (``SUMMARY_TRIGGER_MESSAGES`` turns or ``MAX_WORKING_TOKENS`` tokens) with a
``fold`` job; closing a session runs its ``close`` job (:mod:`memory.work_runner`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memory.context import Context, MemoryConfig
from memory.lifecycle import IdleCheck, idle_cutoff, idle_deadline, is_idle
from memory.ports import Clock, Store, TokenCounter
from memory.records import NO_WRITES, SessionRow, ThreadRow, TurnWrites, UserRow, answer_key
from memory.types import ChatKind, IncomingMessage, Role, Turn
from memory.work_runner import KEEP_AFTER_FOLD, WorkRunner
from memory.working import select_window


class Sessions:
    """Identities, turns, the working-memory window and the closing of sessions.

    Args:
        store: users and threads (``identities``), sessions and turns (``conversations``),
            episodes and the work queue (what became of a closed session).
        counter: the tokens of every stored turn.
        clock: the time of a first sight, a close, an idle check.
        config: the working-memory bounds (``max_working_messages``, ``max_working_tokens``)
            and the fold trigger (``summary_trigger_messages``).
        runner: consolidates a closed session.
    """

    def __init__(self, *, store: Store, counter: TokenCounter, clock: Clock,
                 config: MemoryConfig, runner: WorkRunner) -> None:
        self.store = store
        self.counter = counter
        self.clock = clock
        self.config = config
        self.runner = runner

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
        writes: TurnWrites = NO_WRITES, answers: Turn | None = None,
    ) -> Turn:
        """Store the assistant's reply in the thread's open session, with ``writes`` (the
        reply's usage, ``/why`` record and recalled keys) in the same transaction
        (:meth:`memory.ports.ConversationStore.add_turn`).

        ``answers``: the user turn this reply answers. Its answer is stored under
        :func:`memory.records.answer_key` of its platform message id, so when that turn already
        has a stored answer (another process answered it first) nothing is stored and that
        answer is returned instead: at most one stored answer per user turn."""
        turn, _ = await self.store.conversations.add_turn(
            thread_id=ctx.thread.id, role=Role.ASSISTANT, text=text, at=at, speaker="Assistant",
            generated_by=generated_by, memory_off=not ctx.user.memory_enabled,
            tokens=self.counter.count(text), fold_after=self._fold_bounds, writes=writes,
            platform_message_id=answer_key(answers.platform_message_id) if answers else None,
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

    @property
    def _fold_bounds(self) -> tuple[int, int, int]:
        return (self.config.summary_trigger_messages, self.config.max_working_tokens,
                KEEP_AFTER_FOLD + KEEP_AFTER_FOLD // 2)

    async def fold_due(self, thread_id: int) -> bool:
        """Whether a fold of the thread's open session is pending and due now."""
        return any(w.kind == "fold" for w in await self.store.work.pending_work(
            thread_id=thread_id, due_at=self.clock.now()))

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
        await self.runner.consolidate_pending(thread_id=thread_id)
        return closed

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
                await self.runner.consolidate_pending(thread_id=thread_id)
                return IdleCheck(closed=True)
            session = await self.store.conversations.open_session(thread_id)  # a turn came in meanwhile
            if session is None:
                return IdleCheck(closed=False)
        return IdleCheck(closed=False,
                         deadline=idle_deadline(session.last_turn_at, timeout_seconds))

    async def close_overdue_sessions(self, *, timeout_seconds: float) -> int:
        """Close (and consolidate) every open session whose idle deadline has passed, whoever
        was watching it: the store's open sessions are the record of every deadline, so a
        deadline watched by a process that died is kept by the next one that looks. One read
        of the open sessions; only those past their deadline are closed (conditionally, as
        :meth:`close_if_idle`: a turn stored meanwhile keeps a session open, and of two
        processes closing one session one does).

        Returns:
            The number of sessions this call closed.
        """
        now = self.clock.now()
        closed = 0
        for session in await self.store.conversations.open_sessions():
            if is_idle(session.last_turn_at, timeout_seconds, now):
                check = await self.close_if_idle(session.thread_id,
                                                 timeout_seconds=timeout_seconds)
                closed += check.closed
        return closed

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
