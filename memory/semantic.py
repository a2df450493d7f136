"""Semantic memory writes: apply the rules of ``memory.facts`` and ``memory.topics`` to one
user turn, against the facts already stored.

Decisions, in order, for a user's turn (memory on, user turns only):

1. "I quit X" / "我戒了X": active facts whose value is X are ended (kept as history).
2. Each known-topic statement: an active fact with the same key and value is confirmed; a
   different value supersedes it (the old fact keeps ``valid_to``), unless the two are the same
   statement in two scripts (``Graz`` / ``格拉茨``: embedding cosine of the two facts at least
   the embedder's ``duplicate_cross_language``), which confirms. With no fact on the key yet,
   an explicit request or a correction writes it; a plain statement becomes a candidate.
3. An explicit request with no known topic is written as a free-form fact unless a
   near-duplicate exists (same normalised text, or cosine at least ``duplicate``, or across
   scripts ``duplicate_cross_language``), which is confirmed instead. Free-form facts never
   supersede anything.
4. Any other stable first-person statement becomes a candidate.
5. A candidate that matches an earlier candidate of another session (same topic key and value,
   same normalised text, or cosine at least ``duplicate``) is written as a fact (repetition).

Confirming never deletes; nothing here deletes a fact.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memory.dates import resolve_relative_dates
from memory.facts import (
    ended_values,
    explicit_request,
    fact_text,
    first_person,
    is_correction,
    request_clauses,
    stable_statement,
)
from memory.ports import Embedder, ScopeFilter, SearchIndex
from memory.records import ThreadRow
from memory.stores.sqlite import SQLiteStore
from memory.text import has_cjk, language_of, normalise
from memory.topics import TopicMatch, match_topics, not_allergic_to
from memory.types import Fact, FactStatus, ItemKind, Scope, Turn

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FactOutcome:
    """What a turn did to semantic memory.

    Attributes:
        status: ``written``, ``confirmed``, ``superseded`` (a new fact replaced ``previous``),
            ``ended`` (``fact`` is no longer true) or ``candidate``.
        fact: the fact written, confirmed or ended (None for candidates).
        previous: the superseded fact, for ``superseded``.
        explicit: the turn asked for it (explicit request or correction).
    """

    status: str
    fact: Fact | None = None
    previous: Fact | None = None
    explicit: bool = False


class SemanticWriter:
    """Writes facts for user turns (see module docstring). Returns outcomes; the caller updates
    the search index for ``changed`` facts."""

    def __init__(self, *, store: SQLiteStore, embedder: Embedder, index: SearchIndex) -> None:
        self.store = store
        self.embedder = embedder
        self.index = index

    async def on_user_turn(
        self, *, user_id: int, scope: Scope, thread: ThreadRow, turn: Turn, tz: str, now: datetime,
    ) -> list[FactOutcome]:
        """Apply the write policy to ``turn`` (already redacted). See the module docstring."""
        lang = language_of(turn.text)
        text = resolve_relative_dates(turn.text, at=turn.created_at, tz=tz, lang=lang)
        request = explicit_request(text)
        correction = is_correction(text)
        body = request.body if request else text
        if "[redacted " in body:
            return []  # a fact about a secret we did not keep would be empty or misleading
        outcomes: list[FactOutcome] = []
        w = _Write(self, user_id=user_id, scope=scope, thread=thread, turn=turn, now=now, lang=lang)

        # a request may hold several statements, each a fact ("my favourite colour is blue and
        # I like jazz" wrote only the jazz); other turns are read whole
        for clause in request_clauses(body) if request else [body]:
            said: list[FactOutcome] = []
            for value in ended_values(clause):
                said += await w.end(value)
            for key in not_allergic_to(clause):  # "I'm not allergic to peanuts" / 我对花生不过敏
                said += await w.end_topic(key)
            topics = [t for t in match_topics(clause, lang)
                      if not any(o.status == "ended" and o.fact and o.fact.topic == t.key
                                 for o in said)]
            for match in topics:
                said.append(await w.topic(match, assertive=bool(request) or correction))
            if request and not said:
                said.append(await w.free_form(fact_text(clause, lang), kind=request.kind))
            elif not request and not said:
                statement = stable_statement(clause, lang)
                if statement:
                    said.append(await w.candidate(None, None, statement))
            outcomes += said
        for o in outcomes:
            if o.status != "candidate":
                log.info("fact %s id=%s user=%s", o.status, o.fact.id if o.fact else None, user_id)
        return outcomes


def _names_the_same(target: str, value: str) -> bool:
    """True when an ended ``value`` names the fact value ``target`` (lowercased): one holds
    the other as whole words ("green tea" / "tea"), or as characters in Chinese; so "I'm not
    sure anymore" does not end "blood pressure"."""
    if has_cjk(target) or has_cjk(value):
        return target in value or value in target
    return bool(re.search(rf"\b{re.escape(value)}\b", target)
                or re.search(rf"\b{re.escape(target)}\b", value))


class _Write:
    """One turn's write context (keeps the per-decision helpers small)."""

    def __init__(self, owner: SemanticWriter, *, user_id: int, scope: Scope, thread: ThreadRow,
                 turn: Turn, now: datetime, lang: str) -> None:
        self.store = owner.store
        self.embedder = owner.embedder
        self.index = owner.index
        self.user_id = user_id
        self.scope = scope
        self.thread = thread
        self.turn = turn
        self.now = now
        self.lang = lang

    async def _add(self, text: str, *, kind: str, topic: str | None, value: str | None,
                   mode: str, sources: Sequence[int], supersedes: Sequence[int] = ()) -> Fact:
        return await self.store.add_fact(
            user_id=self.user_id, kind=kind, text=text, topic=topic, origin=self.thread,
            source_turn_ids=sources, lang=self.lang, scope=self.scope, now=self.now,
            valid_from=self.turn.created_at, value=value, mode=mode, supersedes=supersedes)

    async def end(self, value: str) -> list[FactOutcome]:
        out = []
        for fact in await self.store.active_facts(self.user_id, self.scope):
            target = (fact.value or "").lower()
            if target and _names_the_same(target, value) \
                    and not fact.topic.startswith("allergy:"):
                if await self.store.end_fact(fact.id, self.user_id, self.turn.created_at):
                    out.append(FactOutcome("ended", fact, explicit=True))
        return out

    async def end_topic(self, key: str) -> list[FactOutcome]:
        """End the active facts on the topic ``key`` (``allergy:peanuts``): the user said it no
        longer holds."""
        out = []
        for fact in await self.store.active_facts(self.user_id, self.scope, topic=key):
            if await self.store.end_fact(fact.id, self.user_id, self.turn.created_at):
                out.append(FactOutcome("ended", fact, explicit=True))
        return out

    async def topic(self, match: TopicMatch, *, assertive: bool) -> FactOutcome:
        existing = await self.store.active_facts(self.user_id, self.scope, topic=match.key)
        for fact in existing:
            if fact.value == match.value or normalise(fact.text) == normalise(match.text):
                await self.store.confirm_fact(fact.id, self.turn.id, self.now)
                return FactOutcome("confirmed", fact, explicit=assertive)
            if match.topic.key != "opinion" and has_cjk(fact.value or "") != has_cjk(match.value) \
                    and await self._same_meaning(fact.text, match.text):
                await self.store.confirm_fact(fact.id, self.turn.id, self.now)
                return FactOutcome("confirmed", fact, explicit=assertive)
        if existing:
            fact = await self._add(match.text, kind=match.topic.kind, topic=match.key,
                                   value=match.value, mode="correction" if assertive else "statement",
                                   sources=[self.turn.id], supersedes=[f.id for f in existing])
            return FactOutcome("superseded", fact, previous=existing[-1], explicit=True)
        if assertive:
            fact = await self._add(match.text, kind=match.topic.kind, topic=match.key,
                                   value=match.value, mode="explicit", sources=[self.turn.id])
            return FactOutcome("written", fact, explicit=True)
        return await self.candidate(match.key, match.value, match.text, kind=match.topic.kind)

    async def free_form(self, text: str, *, kind: str) -> FactOutcome:
        twin = await self._near_duplicate(text)
        if twin is not None:
            await self.store.confirm_fact(twin.id, self.turn.id, self.now)
            return FactOutcome("confirmed", twin, explicit=True)
        fact = await self._add(text, kind=kind, topic=None, value=None, mode="explicit",
                               sources=[self.turn.id])
        return FactOutcome("written", fact, explicit=True)

    async def candidate(self, topic: str | None, value: str | None, text: str,
                        kind: str = "note") -> FactOutcome:
        vector = (await self.embedder.embed_documents([first_person(text)]))[0]
        norm = normalise(text)
        matches = []
        for row in await self.store.open_candidates(self.user_id, self.scope):
            if row["session_id"] == self.turn.session_id:
                continue
            same = (topic is not None and row["topic"] == topic and row["value"] == value) or \
                (topic is None and row["topic"] is None and (
                    row["norm"] == norm or (row["vector"] is not None and self._close(
                        np.frombuffer(row["vector"], dtype=np.float32), vector,
                        a_cjk=has_cjk(row["text"]), b_cjk=has_cjk(text)))))
            if same:
                matches.append(row)
        if not matches:
            await self.store.add_candidate(
                user_id=self.user_id, scope=self.scope, topic=topic, value=value, text=text,
                norm=norm, lang=self.lang, vector=np.asarray(vector, np.float32).tobytes(),
                session_id=self.turn.session_id, turn_id=self.turn.id, now=self.now)
            return FactOutcome("candidate")
        if topic is None:
            twin = await self._near_duplicate(text, vector=vector)
            if twin is not None:
                await self.store.confirm_fact(twin.id, self.turn.id, self.now)
                return FactOutcome("confirmed", twin)
        sources = sorted({r["turn_id"] for r in matches} | {self.turn.id})[-3:]
        fact = await self._add(text, kind=kind, topic=topic, value=value, mode="repetition",
                               sources=sources)
        await self.store.consume_candidates([r["id"] for r in matches], self.now)
        return FactOutcome("written", fact)

    def _close(self, a, b, *, a_cjk: bool, b_cjk: bool) -> bool:
        cut = self.embedder.calibration.duplicate_cut(a_cjk, b_cjk)
        return cut is not None and float(np.dot(np.asarray(a), np.asarray(b))) >= cut

    async def _near_duplicate(self, text: str, *, vector=None) -> Fact | None:
        """The user's active free-form fact in this scope that says the same as ``text``: the
        same normalised words, or a document-document cosine at least the embedder's
        ``duplicate`` (``duplicate_cross_language`` across scripts). One embedding and one
        index query, whatever the number of facts."""
        norm = normalise(text)
        if vector is None:  # as the index's fact vectors are made (service._fact_items)
            vector = (await self.embedder.embed_documents([first_person(text)]))[0]
        hits = await self.index.search(
            vector=vector, text="", where=ScopeFilter(scope=str(self.scope), owner=str(self.user_id)),
            limit=8)
        ids = [h.item_id for h in hits if h.kind is ItemKind.FACT]
        facts = await self.store.get_facts(ids)
        for hit in sorted(hits, key=lambda h: -(h.cosine or 0)):
            fact = facts.get(hit.item_id) if hit.kind is ItemKind.FACT else None
            if fact is None or fact.topic is not None or fact.status is not FactStatus.ACTIVE:
                continue
            cut = self.embedder.calibration.duplicate_cut(has_cjk(fact.text), has_cjk(text))
            if normalise(fact.text) == norm or (cut is not None and (hit.cosine or 0) >= cut):
                return fact
        exact = [f for f in await self.store.active_facts(self.user_id, self.scope)
                 if f.topic is None and normalise(f.text) == norm]
        return exact[0] if exact else None

    async def _same_meaning(self, a: str, b: str) -> bool:
        """True when two facts whose values are in different scripts say the same (the
        embedder's ``duplicate_cross_language``; never when it has none)."""
        cut = self.embedder.calibration.duplicate_cross_language
        if cut is None:
            return False
        va, vb = await self.embedder.embed_documents([a, b])
        return float(np.dot(np.asarray(va), np.asarray(vb))) >= cut


