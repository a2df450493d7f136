"""Index rows: what the search index holds for each fact, episode and round, and keeping it in
step with the store (written by key after the store's commit; reconciled by id at start-up).

A fact's row is searched by its text and its topic's question words and embedded from its
first-person wording; an episode's by its whole text and the dates it speaks of; a round's by
its text, the facts drawn from its turns, its topic statements and dates, and embedded from its
head with its user turn leaning in (:class:`~memory.policy.RecallPolicy`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from memory.dates import time_keys
from memory.facts import first_person
from memory.policy import ROUND_EMBED_CHARS, RecallPolicy
from memory.ports import Embedder, SearchIndex, Store
from memory.text import language_of, search_text
from memory.topic_statements import match_topics
from memory.topics import TOPIC_TERM_CUTS, topic_terms
from memory.types import Episode, Fact, IndexItem, ItemKind, Role, Round, Scope, Turn

log = logging.getLogger("memory.service")

#: Rows embedded per call when the start-up reconcile (or an import) adds many.
RECONCILE_ROWS = 256


def embed_head(text: str, limit: int = ROUND_EMBED_CHARS) -> str:
    """``text`` cut to about ``limit`` characters, at a word end when there is one
    in the last fifth (Chinese has none: cut at the limit)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = head.rfind(" ", limit * 4 // 5)
    return head[:cut] if cut > 0 else head


@dataclass(frozen=True, slots=True)
class _Row:
    """An index row before it is embedded: the item (``vector`` empty) and the texts whose
    document vectors make its vector, with their weights (one text: its vector)."""

    item: IndexItem
    texts: tuple[str, ...]
    weights: tuple[float, ...] = (1.0,)


def fact_scope(fact: Fact) -> Scope:
    """The scope a fact belongs to: its owner's private scope when it was said in a private
    chat, its thread's otherwise."""
    return Scope.of_chat(fact.origin_kind, user_id=fact.user_id, thread_id=fact.origin_thread_id)


def turn_line(turn: Turn) -> str:
    """A turn as a line of a round's text: ``"Speaker: text"``."""
    return f"{turn.speaker or turn.role.value}: {turn.text}"


def episode_text(episode: Episode, *, key_data_lines: int | None = None,
                  compact: bool = False) -> str:
    """An episode as one line: summary, then goal, decisions, open tasks, state and key data
    (all of it for the search index; in prompts, ``compact``: the summary, the two newest
    open tasks and the newest ``key_data_lines`` key data)."""
    parts = [episode.summary]
    if episode.goal and episode.goal not in episode.summary and not compact:
        parts.append(f"Goal: {episode.goal}")
    if episode.decisions and not compact:
        parts.append("Decisions: " + "; ".join(episode.decisions[-3:]))
    if episode.open_tasks:
        parts.append("Open tasks: " + "; ".join(episode.open_tasks[-(2 if compact else 3):]))
    if episode.state and not compact:
        parts.append(f"User state: {episode.state}")
    key_data = episode.key_data if key_data_lines is None else episode.key_data[-key_data_lines:]
    if key_data:
        parts.append("Key data: " + "; ".join(k.text for k in key_data))
    return " ".join(parts)


class Indexer:
    """Builds and writes the search index's rows (see the module docstring).

    Args:
        store: the store the rows are made from (facts of a thread, a round's user turn).
        index: the search index written.
        embedder: makes the rows' vectors (one ``embed_documents`` call per write).
        default_timezone: IANA zone dates in episodes and rounds are read in.
        policy: the round vector's knobs (``round_user_weight``, ``round_embed_chars``).
    """

    def __init__(self, *, store: Store, index: SearchIndex, embedder: Embedder,
                 default_timezone: str, policy: RecallPolicy) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.default_timezone = default_timezone
        self.policy = policy

    def rows(self, specs: list[tuple], extra: Sequence[str] | None = None,
              embed: Callable[[str], str] | None = None) -> list[_Row]:
        """Index rows, not yet embedded, for ``(kind, id, owner, scope, status, text,
        created_at)`` specs; ``extra`` (parallel to ``specs``) is added to the lexical keys only
        (expanded keys); ``embed`` gives the text a row's vector is made from (default: its
        text)."""
        extra = extra or [""] * len(specs)
        return [
            _Row(IndexItem(key=f"{kind.value}:{item_id}", kind=kind, item_id=item_id, owner=owner,
                           scope=str(scope), status=status, text=text,
                           search_text=search_text(f"{text} {more}" if more else text,
                                                   TOPIC_TERM_CUTS),
                           vector=(), created_at=created),
                 (embed(text) if embed else text,))
            for (kind, item_id, owner, scope, status, text, created), more in zip(specs, extra)
        ]

    async def embed(self, rows: Sequence[_Row]) -> list[IndexItem]:
        """The rows with their vectors, every text embedded in one ``embed_documents`` call (a
        text several rows share, once); a row of several texts gets the normalised weighted sum
        of their vectors."""
        texts = list(dict.fromkeys(t for row in rows for t in row.texts))
        if not texts:
            return []
        vector_of = dict(zip(texts, await self.embedder.embed_documents(texts)))
        out = []
        for row in rows:
            if len(row.texts) == 1:
                vector = vector_of[row.texts[0]]
            else:
                mixed = [sum(w * v[k] for w, v in zip(row.weights, (vector_of[t] for t in row.texts)))
                         for k in range(len(vector_of[row.texts[0]]))]
                norm = math.sqrt(sum(x * x for x in mixed)) or 1.0
                vector = [x / norm for x in mixed]
            out.append(replace(row.item, vector=vector))
        return out

    async def fact_items(self, facts: Sequence[tuple[Fact, Scope]]) -> list[IndexItem]:
        """Index rows of facts, embedded (``fact_rows``)."""
        return await self.embed(self.fact_rows(facts))

    def fact_rows(self, facts: Sequence[tuple[Fact, Scope]]) -> list[_Row]:
        """Index rows of facts; a fact with a known topic gets the topic's question words as
        expanded lexical keys (``memory.topics.TOPIC_TERMS``: "Which city am I in?" finds
        "The user lives in Graz"); its vector is made from its first-person wording
        (``memory.facts.first_person``: "where do I live?" finds it)."""
        return self.rows([
            (ItemKind.FACT, f.id, str(f.user_id), scope, f.status.value, f.text, f.created_at)
            for f, scope in facts
        ], [topic_terms(f.topic) for f, _ in facts], embed=first_person)

    async def episode_items(self, episodes: Sequence[Episode]) -> list[IndexItem]:
        """Index rows of episodes, embedded (``episode_rows``)."""
        return await self.embed(self.episode_rows(episodes))

    def episode_rows(self, episodes: Sequence[Episode]) -> list[_Row]:
        """Index rows of episodes: their whole text (:func:`episode_text`), the dates they
        speak of as expanded keys."""
        return self.rows([
            (ItemKind.EPISODE, e.id, "", e.scope, "active", episode_text(e), e.ended_at)
            for e in episodes
        ], [time_keys(e.started_at, e.summary, self.default_timezone) for e in episodes])

    async def round_items(self, rounds: Sequence[Round]) -> list[IndexItem]:
        """Index rows of rounds, embedded (``round_rows``)."""
        return await self.embed(await self.round_rows(rounds))

    async def round_rows(self, rounds: Sequence[Round]) -> list[_Row]:
        """Rounds with expanded keys (LongMemEval, Wu et al. 2025: fact-expanded keys +9.4%
        recall): the lexical keys of a round add the facts drawn from its turns, the topic
        statements of its user turn with their question words (``memory.topics``: "I just
        turned 32" adds "The user is 32 years old" and "old born ..." whether or not it became a
        fact, so "How old was I?" finds it) and the dates it speaks of (its own day, and relative
        dates such as "yesterday" resolved against it), so a question in other words ("what did
        I do in May 2023?") still finds it. Keys only: the round's text and vector are not
        changed by them.

        The vector: a round that fits ``round_embed_chars`` is embedded whole and, with a
        reply in its text, adds ``round_user_weight`` x the vector of its user turn's line; a
        longer one is embedded from its first ``round_embed_chars`` characters alone
        (:func:`embed_head`): what the user said, and how the reply starts when that is short."""
        facts_by_turn: dict[int, list[str]] = {}
        for thread_id in {r.thread_id for r in rounds}:
            for fact in await self.store.facts.facts_of_thread(thread_id):
                for turn_id in fact.source_turn_ids:
                    facts_by_turn.setdefault(turn_id, []).append(fact.text)
        said = await self._user_turns(rounds)
        extra = []
        for r in rounds:
            keys = [f for t in r.turn_ids for f in facts_by_turn.get(t, [])]
            if (turn := said.get(r.turn_ids[0] if r.turn_ids else -1)) is not None:
                for m in match_topics(turn.text, language_of(turn.text)):  # a fact's text once
                    keys.append(topic_terms(m.key) if m.text in keys else f"{m.text} {topic_terms(m.key)}")
            extra.append(" ".join([*dict.fromkeys(keys),
                                   time_keys(r.created_at, r.text, self.default_timezone)]))
        rows = self.rows([
            (ItemKind.ROUND, r.id, "", r.scope, "active", r.text, r.created_at) for r in rounds
        ], extra, embed=lambda text: embed_head(text, self.policy.round_embed_chars))
        if self.policy.round_user_weight <= 0:
            return rows
        lines = {turn_id: turn_line(turn) for turn_id, turn in said.items()}
        for i, r in enumerate(rounds):  # a reply in the text (offline ones are not)
            line = lines.get(r.turn_ids[0]) if len(r.turn_ids) > 1 else None
            if line is None or line == r.text or len(r.text) > self.policy.round_embed_chars:
                continue  # a long round's head is mostly its user turn already
            rows[i] = _Row(rows[i].item, (rows[i].texts[0], line),
                           (1.0, self.policy.round_user_weight))
        return rows

    async def _user_turns(self, rounds: Sequence[Round]) -> dict[int, Turn]:
        """The user turn each round starts with, by turn id (rounds of other shapes: absent)."""
        first = [r.turn_ids[0] for r in rounds if r.turn_ids]
        return {turn.id: turn for turn in await self.store.conversations.get_turns(first)
                if turn.role is Role.USER}


    async def reconcile(self) -> tuple[int, int]:
        """Bring the index in line with the store: add missing rows, delete rows it lacks.

        Returns:
            ``(added, removed)`` row counts.
        """
        # Compare ids first and build rows only for what the index lacks (building
        # every row took ~4 s and ~130 MB at each start with 100,000 facts).
        have = await self.index.keys()
        ids = await self.store.indexed_ids()
        want = {f"{kind}:{i}" for kind, kind_ids in ids.items() for i in kind_ids}
        extra = sorted(have - want)
        del want
        await self.index.delete(extra)
        missing = {kind: [i for i in kind_ids if f"{kind}:{i}" not in have]
                   for kind, kind_ids in ids.items()}
        episodes = await self.store.episodes.get_episodes(missing["episode"])
        rounds = await self.store.episodes.get_rounds(missing["round"])
        rows = self.fact_rows(await self.store.facts.facts_with_scope(missing["fact"]))
        rows += self.episode_rows([episodes[i] for i in sorted(episodes)])
        rows += await self.round_rows([rounds[i] for i in sorted(rounds)])
        for start in range(0, len(rows), RECONCILE_ROWS):  # one embedding call per chunk
            await self.index.upsert(await self.embed(rows[start:start + RECONCILE_ROWS]))
        if rows or extra:
            log.info("index reconciled added=%d removed=%d", len(rows), len(extra))
        return len(rows), len(extra)
