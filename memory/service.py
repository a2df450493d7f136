"""The memory service: one front door to working, episodic and semantic memory.

It writes turns, explicit facts, episodes and rounds to the store (``memory.ports.Store``: the
source of truth), keeps the search index in step (written by key after the store's commit,
reconciled at start-up), recalls and packs memory for a prompt, and deletes on request. It
never calls a chat platform or a language model; the conversation engine in ``bot/`` does.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from memory.consolidation import LLMConsolidator
from memory.excerpt import TurnLine, excerpt, terms
from memory.focus import (
    asks_about_the_user,
    focus_question,
    question_parts,
    without_recall_words,
)
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
from memory.ports import (
    Clock,
    Embedder,
    ScopeFilter,
    SearchIndex,
    Store,
    StructuredModel,
    ThreadLocks,
    TokenCounter,
)
from memory.profile import PROFILE_TOKENS, as_of_session_start, profile_line, select_profile
from memory.indexing import Indexer, episode_text, fact_scope
from memory.policy import SPEAKER_WEIGHT, RecallPolicy
from memory.forgetting import Forgetting
from memory.work_runner import KEEP_AFTER_FOLD, OFFLINE_MODEL, WorkRunner
from memory.recall import (
    SEMANTIC_HEADER,
    MemoryBlocks,
    asks_about_the_past,
    merge_parts,
    pack,
    rank_hits,
)
from memory.semantic import FactOutcome, SemanticWriter
from memory.stores.exports import ExportFiles
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
from memory.text import language_of, search_text
from memory.types import (
    ChatKind,
    Episode,
    Fact,
    FactStatus,
    IncomingMessage,
    ItemKind,
    ModelReply,
    RecalledItem,
    Role,
    Round,
    Scope,
    ThreadKey,
    Turn,
)
from memory.working import select_window

log = logging.getLogger(__name__)



@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """The memory settings the core needs (built by ``bot/`` from the product settings).

    Attributes:
        max_working_messages: turns in the prompt window.
        max_working_tokens: tokens in the prompt window.
        top_k: facts recalled per prompt (1-5).
        threshold: minimum recall score in [0, 1] (``memory.recall``).
        budget_tokens: tokens for all memory blocks of one prompt.
        episode_summary_tokens: tokens of an offline episode summary.
        default_timezone: IANA zone for users who set none (relative dates in facts).
        summary_trigger_messages: unfolded turns of a session that trigger a fold.
        profile_tokens: most tokens of the profile block (``memory.profile``), counted in
            ``budget_tokens``; 0 = no profile block.
    """

    max_working_messages: int = 30
    max_working_tokens: int = 4000
    top_k: int = 3
    threshold: float = 0.30
    budget_tokens: int = 1000
    episode_summary_tokens: int = 60
    default_timezone: str = "UTC"
    summary_trigger_messages: int = 40
    profile_tokens: int = PROFILE_TOKENS




@dataclass(frozen=True, slots=True)
class Context:
    """Who is speaking where: the user, the thread and the scope their memory lives in."""

    user: UserRow
    thread: ThreadRow

    @property
    def scope(self) -> Scope:
        """The user's private scope in private chats, the thread's in groups."""
        return Scope.of_chat(self.thread.chat_kind, user_id=self.user.id,
                             thread_id=self.thread.id)


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Recalled memory for one prompt.

    Attributes:
        blocks: the packed items and rendered blocks.
        candidates: number of index candidates considered.
        elapsed_ms: wall time of the recall, embedding included (milliseconds).
    """

    blocks: MemoryBlocks
    candidates: int
    elapsed_ms: float
    ranked: tuple[RecalledItem, ...] = field(default=())






def _date(value: datetime) -> str:
    return value.strftime("%Y-%m-%d")


def _fact_line(fact: Fact) -> str:
    """A fact as rendered in the memory block, with the dates it was true."""
    if fact.status is FactStatus.ACTIVE:
        return f"- {fact.text} (since {_date(fact.valid_from)})"
    until = _date(fact.valid_to) if fact.valid_to else "?"
    return f"- {fact.text} (from {_date(fact.valid_from)} until {until}; no longer current)"


_ROUND_SPEAKER = re.compile(r"^- \([^)]*\) ([^:/]{1,60}): ")


def _named_speaker_first(candidates: list[RecalledItem], query: str,
                         weight: float = SPEAKER_WEIGHT) -> list[RecalledItem]:
    """Weigh the rounds of other speakers by ``weight`` (``RecallPolicy.speaker_weight``) when ``query`` names exactly one
    speaker of the recalled rounds (by the first word of the name, whole word, any case), and
    re-sort by score (stable). Returns ``candidates`` unchanged otherwise."""
    if weight >= 1 or not candidates:
        return candidates
    speaker_of = {c.key: m.group(1).strip() for c in candidates
                  if c.kind is ItemKind.ROUND and (m := _ROUND_SPEAKER.match(c.text))}
    speakers = set(speaker_of.values())
    if len(speakers) < 2:
        return candidates
    named = [name for name in speakers if name.split()
             and re.search(rf"\b{re.escape(name.split()[0])}\b", query, re.IGNORECASE)]
    if len(named) != 1:
        return candidates
    out = [replace(c, score=c.score * weight)
           if speaker_of.get(c.key, named[0]) != named[0] else c for c in candidates]
    out.sort(key=lambda c: -c.score)
    return out


class MemoryService:
    """Front door of the memory core. Services are given their ports; none are built here.

    Collaborators: :attr:`semantic` (the semantic write policy), :attr:`consolidator` (the
    consolidation model, when there is one), :attr:`indexer` (the search index's rows),
    :attr:`runner` (pending consolidation, :mod:`memory.work_runner`) and :attr:`forgetting`
    (deletion and purge, :mod:`memory.forgetting`);
    :attr:`policy` holds the recall knobs (:class:`memory.policy.RecallPolicy`).
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
        self.config = config
        self.indexer = Indexer(store=store, index=index, embedder=embedder,
                               default_timezone=config.default_timezone,
                               policy=policy or RecallPolicy())
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
        """The recall knobs in use (the indexer's round-vector knobs among them)."""
        return self.indexer.policy

    @policy.setter
    def policy(self, value: RecallPolicy) -> None:
        self.indexer.policy = value

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
        """Recall memory for ``query`` in ``ctx`` and pack it under the budget.

        The last episode of the thread is pinned (the next session starts with it, with the
        score it earns for ``query``, under the threshold or not); facts,
        episodes and rounds of the context's scope compete by the fused score
        (``memory.recall``), cut by the threshold, ``top_k`` facts and the budget; rounds longer
        than ``ROUND_PROMPT_TOKENS`` are shown as excerpts, a one-turn round brings the reply to
        it and the message before it, and rounds with the same words are shown once with their
        dates. A chatty message is recalled for the question it states after a marker
        ("what I really want to know is", ``FOCUS_QUESTION``), and a question in several parts
        ("A? Also, B?", "A？另外，B？") for each part, merged (``SPLIT_QUESTIONS``); the words that
        ask to remember ("Do you remember that ...", 你还记得) are left out of the search
        (``memory.focus.without_recall_words``). Rows of
        another scope, and other users' facts, are excluded inside the index query. Recalled
        facts get ``last_recalled_at`` unless ``touch`` is False
        (read-only questions).

        Args:
            ctx: the speaker and thread.
            query: the current input (already redacted).
            budget_tokens: tokens for the memory blocks; default ``MEMORY_TOKEN_BUDGET``.
            touch: record the recall on the facts.
            exclude_session_id: the current session: its running episode is pinned (what was
                folded out of working memory stays in reach), its rounds may be recalled (they
                exist only for folded turns), and it is not recalled a second time.

        Returns:
            The packed blocks, the number of candidates and the elapsed milliseconds.
        """
        started = time.perf_counter()
        budget = budget_tokens or self.config.budget_tokens
        if not ctx.user.memory_enabled:
            return RecallResult(pack([], budget_tokens=budget, top_k_facts=0,
                                     counter=self.counter), 0, 0.0)
        limit = max(50, budget // 20)
        if self.policy.focus_question:  # the question after "what I really want to ask is"
            query = focus_question(query)
        about_me = asks_about_the_user(query)
        query = without_recall_words(query)  # "Do you remember that ..." matched every "remember"
        parts = [] if not query else question_parts(query) if self.policy.split_questions else [query]
        hits: list = []
        per_part = []
        below: dict[str, float] = {}  # best score of every hit, also under the threshold
        for part in parts:
            vector = await self.embedder.embed_query(part)
            part_hits = await self.index.search(
                vector=vector, text=search_text(part),
                where=ScopeFilter(scope=str(ctx.scope), owner=str(ctx.user.id),
                                  include_history=asks_about_the_past(part)), limit=limit,
            )
            hits += part_hits
            scored = rank_hits(part_hits, self.embedder.calibration, threshold=0.0,
                               cjk=language_of(part) == "zh")
            for hit, score in scored:
                below[hit.key] = max(below.get(hit.key, 0.0), score)
            per_part.append([(h, s) for h, s in scored if s >= self.config.threshold])
        ranked = merge_parts(per_part)
        fetched: dict[int, Round] = {}  # rounds read for this recall, by id
        candidates = await self._render(ranked, exclude_session_id, query, fetched)
        candidates = await self._with_replies(candidates, query, fetched)
        candidates = self._merge_repeats(candidates)
        if about_me:  # "what do you remember about me?" matches no fact
            candidates = await self._with_own_facts(ctx, candidates)
        if ctx.thread.chat_kind is not ChatKind.PRIVATE:  # a group's named member
            candidates = _named_speaker_first(candidates, query, self.policy.speaker_weight)
        pins = [await self.store.episodes.last_episode(ctx.thread.id)]
        if exclude_session_id is not None:
            pins.append(await self.store.episodes.session_episode(exclude_session_id))
        # a pinned episode is in the prompt whatever its score; its score is still the one it
        # earns for this query (0.0: not among the hits), so that /why and the offline reply
        # can tell whether it relates to the message (score >= SIMILARITY_THRESHOLD)
        earned = {c.key: c.score for c in candidates}
        for pinned in reversed([p for p in pins if p is not None and p.scope == ctx.scope]):
            key = f"episode:{pinned.id}"
            candidates.insert(0, self._episode_item(
                pinned, score=earned.get(key, below.get(key, 0.0)), pinned=True))
        profile = await self._profile(ctx, exclude_session_id, budget, below)
        blocks = pack(candidates, budget_tokens=budget, top_k_facts=self.config.top_k,
                      counter=self.counter, profile=profile)
        if touch:  # a profile fact counts as recalled when the message matched it
            fact_ids = [int(i.key.split(":")[1]) for i in blocks.items if i.kind is ItemKind.FACT
                        and (not i.profile or i.score >= self.config.threshold)]
            await self.store.facts.touch_facts(fact_ids, self.clock.now())
        elapsed = (time.perf_counter() - started) * 1000
        log.info("recall thread=%s candidates=%d kept=%d items=%d tokens=%d ms=%.1f",
                 ctx.thread.id, len(hits), len(ranked), len(blocks.items), blocks.tokens, elapsed)
        return RecallResult(blocks=blocks, candidates=len(hits), elapsed_ms=elapsed,
                            ranked=tuple(candidates))

    async def _render(self, ranked, exclude_session_id: int | None, query: str = "",
                      fetched: dict[int, Round] | None = None) -> list[RecalledItem]:
        by_kind: dict[ItemKind, list[int]] = {}
        for hit, _ in ranked:
            by_kind.setdefault(hit.kind, []).append(hit.item_id)
        facts = await self.store.facts.get_facts(by_kind.get(ItemKind.FACT, []))
        episodes = await self.store.episodes.get_episodes(by_kind.get(ItemKind.EPISODE, []))
        rounds = await self.store.episodes.get_rounds(by_kind.get(ItemKind.ROUND, []))
        if fetched is not None:
            fetched.update(rounds)
        shown = await self._round_excerpts(rounds, query)  # long rounds as excerpts
        out: list[RecalledItem] = []
        for hit, score in ranked:
            if hit.kind is ItemKind.FACT and hit.item_id in facts:
                fact = facts[hit.item_id]
                text = _fact_line(fact)
                out.append(RecalledItem(hit.key, hit.kind, text, score, self.counter.count(text),
                                        fact.source_turn_ids, None, fact.created_at))
            elif hit.kind is ItemKind.EPISODE and hit.item_id in episodes:
                episode = episodes[hit.item_id]
                if episode.session_id != exclude_session_id:
                    out.append(self._episode_item(episode, score=score))
            elif hit.kind is ItemKind.ROUND and hit.item_id in rounds:
                rnd = rounds[hit.item_id]
                text, turn_ids = shown[rnd.id]
                out.append(RecalledItem(hit.key, hit.kind, text, score,
                                        self.counter.count(text), turn_ids,
                                        rnd.session_id, rnd.created_at))
        return out

    async def _profile(self, ctx: Context, session_id: int | None, budget: int,
                       earned: dict[str, float]) -> list[RecalledItem]:
        """The profile block's facts for ``ctx`` (``memory.profile``), as pinned items scored
        with what they earned for this query (``earned``: best score by key, 0.0 when not a
        hit), within ``profile_tokens`` and ``budget``."""
        limit = min(self.config.profile_tokens, budget)
        if limit <= 0:
            return []
        session = await self.store.conversations.get_session(session_id) if session_id is not None else None
        facts = as_of_session_start(await self.store.facts.facts_in_scope(ctx.user.id, ctx.scope),
                                    session.started_at if session is not None else None)
        chosen = select_profile(facts, budget_tokens=limit, counter=self.counter,
                                header=SEMANTIC_HEADER)
        items = []
        for fact in chosen:
            text, key = profile_line(fact), f"fact:{fact.id}"
            items.append(RecalledItem(key, ItemKind.FACT, text, earned.get(key, 0.0),
                                      self.counter.count(text), fact.source_turn_ids, None,
                                      fact.created_at, pinned=True, profile=True))
        return items

    async def _with_own_facts(self, ctx: Context, candidates: list[RecalledItem]
                              ) -> list[RecalledItem]:
        """Add the speaker's active facts of this scope, newest first, scored at the recall
        threshold (after what the question matched; ``pack`` keeps ``top_k`` facts), to a
        question about the speaker as a whole (``memory.focus.asks_about_the_user``)."""
        have = {c.key for c in candidates}
        facts = [f for f in await self.store.facts.active_facts(ctx.user.id, ctx.scope)
                 if f"fact:{f.id}" not in have]
        added = []
        for fact in sorted(facts, key=lambda f: f.created_at, reverse=True):
            text = _fact_line(fact)
            added.append(RecalledItem(f"fact:{fact.id}", ItemKind.FACT, text,
                                      self.config.threshold, self.counter.count(text),
                                      fact.source_turn_ids, None, fact.created_at))
        return sorted([*candidates, *added], key=lambda c: -c.score)

    def _episode_item(self, episode: Episode, *, score: float, pinned: bool = False
                      ) -> RecalledItem:
        running = " (this conversation so far)" if episode.status == "running" else ""
        text = self._clip_tokens(f"- ({_date(episode.started_at)}){running} "
                                 f"{episode_text(episode, key_data_lines=2, compact=True)}",
                                 self.policy.episode_prompt_tokens)
        return RecalledItem(f"episode:{episode.id}", ItemKind.EPISODE, text, score,
                            self.counter.count(text), episode.turn_ids, episode.session_id,
                            episode.created_at, pinned=pinned)

    def _clip_tokens(self, text: str, limit: int) -> str:
        """Cut ``text`` at a word boundary so that it counts at most ``limit`` tokens."""
        if self.counter.count(text) <= limit:
            return text
        words = text.split(" ")
        low, high = 1, len(words)
        while low < high:  # the longest prefix of words that fits, with the ellipsis
            mid = (low + high + 1) // 2
            if self.counter.count(" ".join(words[:mid]) + " …") <= limit:
                low = mid
            else:
                high = mid - 1
        return " ".join(words[:low]) + " …"

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


    async def _round_excerpts(self, rounds: dict[int, Round], query: str
                              ) -> dict[int, tuple[str, tuple[int, ...]]]:
        """Each round's line in the memory block and the turns it carries, by round id: whole
        when it fits ``ROUND_PROMPT_TOKENS``, else an excerpt of its turn that best matches
        ``query`` (``memory.excerpt``). One turn query for the long rounds only."""
        out: dict[int, tuple[str, tuple[int, ...]]] = {}
        long: list[Round] = []
        for rnd in rounds.values():
            text = f"- ({_date(rnd.created_at)}) " + rnd.text.replace("\n", " / ")
            out[rnd.id] = (text, rnd.turn_ids)
            if self.counter.count(text) > self.policy.round_prompt_tokens:
                long.append(rnd)
        if not long:
            return out
        turns = {t.id: t for t in await self.store.conversations.get_turns(
            {i for rnd in long for i in rnd.turn_ids})}
        wanted = terms(query)
        for rnd in long:
            lines = [TurnLine(t.id, t.speaker or t.role.value, t.text, t.role.value)
                     for i in rnd.turn_ids
                     if (t := turns.get(i)) is not None and t.generated_by != OFFLINE_MODEL]
            if lines:
                out[rnd.id] = excerpt(lines, query, prefix=f"- ({_date(rnd.created_at)}) ",
                                      limit=self.policy.round_prompt_tokens, count=self.counter.count,
                                      query_terms=wanted)
        return out

    async def _with_replies(self, candidates: list[RecalledItem], query: str,
                            fetched: dict[int, Round] | None = None) -> list[RecalledItem]:
        """Add to ranked candidates the round that follows each one-turn round in its session
        (the reply to it), scored ``REPLY_WEIGHT`` x the round's score, and the round before it
        (what it answers), scored ``PREV_WEIGHT`` x the round's score (or its own score when
        higher), and re-sort by score (stable). Pinned items are not in ``candidates`` yet."""
        if self.policy.reply_weight <= 0 and self.policy.prev_weight <= 0:
            return candidates
        score_of = {c.key: c.score for c in candidates}
        single = [c for c in candidates if c.kind is ItemKind.ROUND and len(c.source_turn_ids) == 1]
        if not single:
            return candidates
        ids = {int(c.key.split(":")[1]) for c in single}
        mine = await self._get_rounds(ids, fetched)  # one-turn rounds, not excerpts of longer ones
        nexts = await self._get_rounds([i + step for i, r in mine.items()
                                        if len(r.turn_ids) == 1
                                        for step in ((1, -1) if self.policy.prev_weight > 0 else (1,))],
                                       fetched)
        boost: dict[int, float] = {}
        for c in single:
            rid = int(c.key.split(":")[1])
            for step, weight in ((1, self.policy.reply_weight), (-1, self.policy.prev_weight)):
                nxt, own = nexts.get(rid + step), mine.get(rid)
                if weight <= 0 or nxt is None or own is None or nxt.session_id != own.session_id:
                    continue
                boost[nxt.id] = max(boost.get(nxt.id, 0.0), weight * c.score)
        new = {i: b for i, b in boost.items() if b > score_of.get(f"round:{i}", -1.0)}
        if not new:
            return candidates
        shown = await self._round_excerpts({i: nexts[i] for i in new}, query)
        out = [c for c in candidates if not (c.kind is ItemKind.ROUND
                                             and int(c.key.split(":")[1]) in new)]
        for i, b in new.items():
            rnd = nexts[i]
            text, turn_ids = shown[i]
            out.append(RecalledItem(f"round:{i}", ItemKind.ROUND, text, b, self.counter.count(text),
                                    turn_ids, rnd.session_id, rnd.created_at))
        out.sort(key=lambda c: -c.score)
        return out

    async def _get_rounds(self, ids, fetched: dict[int, Round] | None) -> dict[int, Round]:
        """Rounds by id, those already read for this recall (``fetched``) not read again."""
        if fetched is None:
            return await self.store.episodes.get_rounds(ids)
        missing = [i for i in dict.fromkeys(ids) if i not in fetched]
        if missing:
            fetched.update(await self.store.episodes.get_rounds(missing))
        return {i: fetched[i] for i in dict.fromkeys(ids) if i in fetched}

    def _merge_repeats(self, candidates: list[RecalledItem]) -> list[RecalledItem]:
        """Show rounds that repeat the same words once: the best-ranked one keeps its place and
        lists the dates of up to ``REPEAT_DATES`` repeats (``- (2024-04-01, 2024-04-03) User:
        ...``) and carries their turns; the repeats leave the ranking (in MemDaily a
        statement is often said again in other conversations, and every copy cost tokens)."""
        if self.policy.repeat_dates < 2:
            return candidates
        first: dict[str, int] = {}
        extra: dict[int, list[RecalledItem]] = {}
        keep: list[RecalledItem] = []
        for c in candidates:
            if c.kind is not ItemKind.ROUND or not c.text.startswith("- (") or ") " not in c.text:
                keep.append(c)
                continue
            body = c.text.split(") ", 1)[1]
            at = first.get(body)
            if at is None:
                first[body] = len(keep)
                keep.append(c)
            elif len(extra.setdefault(at, [])) < self.policy.repeat_dates - 1:
                extra[at].append(c)
        for at, repeats in extra.items():
            c = keep[at]
            dates = list(dict.fromkeys([c.text[3:13], *(r.text[3:13] for r in repeats)]))
            text = f"- ({', '.join(dates)}) " + c.text.split(") ", 1)[1]
            turns = tuple(dict.fromkeys([*c.source_turn_ids,
                                         *(t for r in repeats for t in r.source_turn_ids)]))
            keep[at] = replace(c, text=text, tokens=self.counter.count(text), source_turn_ids=turns)
        return keep
