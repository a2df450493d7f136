"""Recall: the memory a prompt gets for one message, searched inside its scope and packed
under the token budget.

The pipeline of :meth:`Recaller.recall`: the question (its focus, its parts, without the words
that ask to remember) is embedded and searched in the index inside the scope; dense and lexical
scores are fused per part and merged (``memory.recall``); the hits are read from the store and
rendered (facts with their dates, episodes clipped, long rounds as excerpts); a one-turn round
brings its reply and the message before it; repeated rounds are shown once with their dates; a
question about the speaker brings their facts; in a group a named member's rounds rank first;
the thread's last episode is pinned; the profile block (``memory.profile``) is read; everything
is packed (``memory.recall.pack``). The knobs are one frozen
:class:`~memory.policy.RecallPolicy`.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field, replace
from datetime import datetime

from memory.context import Context, MemoryConfig
from memory.excerpt import TurnLine, excerpt, terms
from memory.focus import (
    asks_about_the_user,
    focus_question,
    question_parts,
    without_recall_words,
)
from memory.indexing import episode_text
from memory.item_parts import episode_parts, fact_parts
from memory.policy import SPEAKER_WEIGHT, RecallPolicy
from memory.ports import Clock, Embedder, ScopeFilter, SearchIndex, Store, TokenCounter
from memory.profile import (
    PROFILE_CANDIDATES,
    PROFILE_KINDS,
    PROFILE_MODES,
    PROFILE_TOPIC_ROOTS,
    as_of_session_start,
    profile_line,
    select_profile,
)
from memory.recall import (
    SEMANTIC_HEADER,
    MemoryBlocks,
    asks_about_the_past,
    merge_parts,
    pack,
    rank_hits,
)
from memory.text import language_of, search_text, sentences
from memory.types import (ChatKind, Episode, Fact, FactStatus, ItemKind, ItemParts,
                          RecalledItem, Round)
from memory.work_runner import OFFLINE_MODEL

log = logging.getLogger("memory.service")


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Recalled memory for one prompt.

    Attributes:
        blocks: the packed items and rendered blocks.
        candidates: number of index candidates considered.
        elapsed_ms: wall time of the recall, embedding included (milliseconds).
        ranked: every candidate before packing, best first, the pinned episodes first.
    """

    blocks: MemoryBlocks
    candidates: int
    elapsed_ms: float
    ranked: tuple[RecalledItem, ...] = field(default=())


_DAYS: dict[int, str] = {}  # "YYYY-MM-DD" by proleptic ordinal (every round line has one)


def _date(value: datetime) -> str:
    """``value``'s day as ``YYYY-MM-DD`` (its own fields: stored times are UTC), formatted
    once per day (a long history's recall renders hundreds of dated lines a question)."""
    day = value.toordinal()
    text = _DAYS.get(day)
    if text is None:
        if len(_DAYS) >= 4096:
            _DAYS.clear()
        text = _DAYS[day] = value.strftime("%Y-%m-%d")
    return text


def _fact_line(fact: Fact) -> str:
    """A fact as rendered in the memory block, with the dates it was true."""
    if fact.status is FactStatus.ACTIVE:
        return f"- {fact.text} (since {_date(fact.valid_from)})"
    until = _date(fact.valid_to) if fact.valid_to else "?"
    return f"- {fact.text} (from {_date(fact.valid_from)} until {until}; no longer current)"


_ROUND_SPEAKER = re.compile(r"^- \([^)]*\) ([^:/]{1,60}): ")


def named_speaker_first(candidates: list[RecalledItem], query: str,
                        weight: float = SPEAKER_WEIGHT) -> list[RecalledItem]:
    """Weigh the rounds of other speakers by ``weight`` (``RecallPolicy.speaker_weight``)
    when ``query`` names exactly one speaker of the recalled rounds (by the first word of the
    name, whole word, any case), and re-sort by score (stable). Returns ``candidates``
    unchanged otherwise (a new list when weighted)."""
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


class Recaller:
    """Recalls and packs memory for a prompt (:meth:`recall`); reads the store and the search
    index, writes only the facts' ``last_recalled_at``.

    Args:
        store: the facts, episodes, rounds and turns recalled items are read from.
        index: the search index (searched inside the scope, never filtered after).
        embedder: embeds the question (and its parts); its calibration maps raw scores.
        counter: counts the tokens of every item and of the budget.
        clock: the time of a recall (``last_recalled_at``).
        config: ``threshold``, ``top_k``, ``budget_tokens`` and ``profile_tokens``.
        policy: the recall knobs (:class:`~memory.policy.RecallPolicy`).
    """

    def __init__(self, *, store: Store, index: SearchIndex, embedder: Embedder,
                 counter: TokenCounter, clock: Clock, config: MemoryConfig,
                 policy: RecallPolicy) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.counter = counter
        self.clock = clock
        self.config = config
        self.policy = policy

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
            candidates = named_speaker_first(candidates, query, self.policy.speaker_weight)
        pins = [await self.store.episodes.last_episode(ctx.thread.id)]
        if exclude_session_id is not None:
            pins.append(await self.store.episodes.session_episode(exclude_session_id))
        # a pinned episode is in the prompt whatever its score; its score is still the one it
        # earns for this query (0.0: not among the hits), so that /why and the offline reply
        # can tell whether it relates to the message (score >= SIMILARITY_THRESHOLD)
        # a last episode that does not relate to it is shown by its first sentence (what the
        # last session was about), the running one of this session always in full
        earned = {c.key: c.score for c in candidates}
        for i, pinned in reversed(list(enumerate(pins))):
            if pinned is None or pinned.scope != ctx.scope:
                continue
            key = f"episode:{pinned.id}"
            score = earned.get(key, below.get(key, 0.0))
            brief = (i == 0 and score < self.config.threshold and pinned.status != "running"
                     and self.policy.pinned_unrelated_tokens > 0)
            candidates.insert(0, self._episode_item(pinned, score=score, pinned=True, brief=brief))
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
        round_ids = by_kind.get(ItemKind.ROUND, [])
        # the rounds next to them (``_with_replies``: the reply and the message before a
        # one-turn round) in the same read: one round query a recall
        steps = [s for s, w in ((1, self.policy.reply_weight), (-1, self.policy.prev_weight))
                 if w > 0] if fetched is not None else []
        read = await self.store.episodes.get_rounds(
            dict.fromkeys([*round_ids, *(i + s for i in round_ids for s in steps)]))
        rounds = {i: read[i] for i in round_ids if i in read}
        if fetched is not None:
            fetched.update(read)
        shown = await self._round_excerpts(rounds, query)  # long rounds as excerpts
        out: list[RecalledItem] = []
        for hit, score in ranked:
            if hit.kind is ItemKind.FACT and hit.item_id in facts:
                fact = facts[hit.item_id]
                text = _fact_line(fact)
                out.append(RecalledItem(hit.key, hit.kind, text, score, self.counter.count(text),
                                        fact.source_turn_ids, None, fact.created_at,
                                        parts=fact_parts(fact)))
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
        facts = await self._profile_candidates(ctx, session.started_at if session is not None else None)
        chosen = select_profile(facts, budget_tokens=limit, counter=self.counter,
                                header=SEMANTIC_HEADER)
        items = []
        for fact in chosen:
            text, key = profile_line(fact), f"fact:{fact.id}"
            items.append(RecalledItem(key, ItemKind.FACT, text, earned.get(key, 0.0),
                                      self.counter.count(text), fact.source_turn_ids, None,
                                      fact.created_at, pinned=True, profile=True,
                                      parts=fact_parts(fact, dated=False)))
        return items

    async def _profile_candidates(self, ctx: Context, started_at: datetime | None) -> list[Fact]:
        """The facts the profile is chosen from: ``memory.profile.as_of_session_start`` of the
        scope's facts, read as the store's ``profile_candidates`` (the facts
        ``memory.profile.profile_tier`` can place, not every fact of the scope) and, for those
        written since ``started_at``, ``topics_written_before``. More than
        ``PROFILE_CANDIDATES`` candidates: every fact of the scope is read instead (the same
        choice)."""
        facts = await self.store.facts.profile_candidates(
            ctx.user.id, ctx.scope, kinds=PROFILE_KINDS, topic_roots=PROFILE_TOPIC_ROOTS,
            modes=PROFILE_MODES, limit=PROFILE_CANDIDATES)
        if len(facts) >= PROFILE_CANDIDATES:
            return as_of_session_start(
                await self.store.facts.facts_in_scope(ctx.user.id, ctx.scope), started_at)
        if started_at is None:
            return facts
        later = {f.topic for f in facts if f.topic and f.created_at >= started_at}
        earlier = (await self.store.facts.topics_written_before(
            ctx.user.id, ctx.scope, later, started_at) if later else set())
        return [f for f in facts if f.created_at < started_at or f.topic in earlier]

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
                                      fact.source_turn_ids, None, fact.created_at,
                                      parts=fact_parts(fact)))
        return sorted([*candidates, *added], key=lambda c: -c.score)

    def _episode_item(self, episode: Episode, *, score: float, pinned: bool = False,
                      brief: bool = False) -> RecalledItem:
        """An episode's line: its date and ``episode_text`` (compact) within
        ``episode_prompt_tokens``; ``brief``: the first sentence of its summary within
        ``pinned_unrelated_tokens`` (a pinned episode unrelated to the message)."""
        running = " (this conversation so far)" if episode.status == "running" else ""
        body = episode_text(episode, key_data_lines=2, compact=True)
        line = f"- ({_date(episode.started_at)}){running} {body}"
        if brief:
            first = next(iter(sentences(episode.summary)), episode.summary)
            head = f"- ({_date(episode.started_at)}) "
            whole = head + first
            text = self._clip_tokens(whole, self.policy.pinned_unrelated_tokens)
            if text == head.rstrip() + " …":  # no word of it fit (CJK: no spaces): by characters
                text = self._clip_chars(whole, self.policy.pinned_unrelated_tokens, len(head))
            shown = first if text == whole else first[:len(text) - 2 - len(whole) + len(first)]
            parts = ItemParts(shown.rstrip(), day=episode.started_at,
                              cut=shown.rstrip() != episode.summary.strip())
        else:
            text = self._clip_tokens(line, self.policy.episode_prompt_tokens)
            parts = episode_parts(episode, body=body, full_line=line, shown_line=text,
                                  key_data_lines=2)
        return RecalledItem(f"episode:{episode.id}", ItemKind.EPISODE, text, score,
                            self.counter.count(text), episode.turn_ids, episode.session_id,
                            episode.created_at, pinned=pinned, parts=parts)

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

    def _clip_chars(self, text: str, limit: int, keep: int) -> str:
        """The longest prefix of ``text`` (at least its first ``keep`` characters) that, ended
        with an ellipsis, counts at most ``limit`` tokens."""
        low, high = keep, len(text)
        while low < high:
            mid = (low + high + 1) // 2
            if self.counter.count(text[:mid].rstrip() + " …") <= limit:
                low = mid
            else:
                high = mid - 1
        return text[:low].rstrip() + " …"

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
        round_score: dict[int, float] = {}  # round id -> its score among the candidates
        single: list[tuple[int, float]] = []  # (round id, score) of rounds showing one turn
        for c in candidates:
            if c.kind is ItemKind.ROUND:
                rid = int(c.key[6:])  # "round:<id>"
                round_score.setdefault(rid, c.score)
                if len(c.source_turn_ids) == 1:
                    single.append((rid, c.score))
        if not single:
            return candidates
        mine = await self._get_rounds({rid for rid, _ in single}, fetched)  # not excerpts
        nexts = await self._get_rounds([i + step for i, r in mine.items()
                                        if len(r.turn_ids) == 1
                                        for step in ((1, -1) if self.policy.prev_weight > 0 else (1,))],
                                       fetched)
        boost: dict[int, float] = {}
        steps = [(s, w) for s, w in ((1, self.policy.reply_weight), (-1, self.policy.prev_weight))
                 if w > 0]
        for rid, score in single:
            own = mine.get(rid)
            if own is None:
                continue
            for step, weight in steps:
                nxt = nexts.get(rid + step)
                if nxt is None or nxt.session_id != own.session_id:
                    continue
                boost[nxt.id] = max(boost.get(nxt.id, 0.0), weight * score)
        new = {i: b for i, b in boost.items() if b > round_score.get(i, -1.0)}
        if not new:
            return candidates
        shown = await self._round_excerpts({i: nexts[i] for i in new}, query)
        out = [c for c in candidates if not (c.kind is ItemKind.ROUND and int(c.key[6:]) in new)]
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
