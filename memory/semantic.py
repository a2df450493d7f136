"""Semantic memory writes: apply the rules of ``memory.facts``, ``memory.statements`` and
``memory.topics`` to one user turn, against the facts already stored.

Decisions, in order, for each statement of a user's turn (memory on, user turns only; an
explicit request's statements, else every sentence that is no question, quotes left out):

1. Attributes stated (topics and open-vocabulary "my X is Y", ``claims``): an active fact
   with the same key (or a key naming the same attribute: ``keys_match``) and value is
   confirmed; a different value supersedes it (the old fact keeps ``valid_to``), unless the
   two are the same statement in two scripts (``Graz`` / ``格拉茨``: embedding cosine of the
   two facts at least the embedder's ``duplicate_cross_language``), which confirms. With no
   fact on the key yet, an explicit request, a correction or a constraint topic (allergy,
   diet, foods avoided) writes it; a plain statement becomes a candidate.
2. "I'm no longer X" / "I quit X" / "我不再X": active facts it names are ended (kept as
   history); "I'm not allergic to X" ends that allergy.
3. A correction naming only a value ("No wait, it's olives.") gives it to the newest fact of
   this conversation.
4. An explicit request with no attribute is written as a free-form fact, and so is a
   constraint ("please don't message me on weekends"), unless a near-duplicate exists (same
   normalised text, or cosine at least ``duplicate``, or across scripts
   ``duplicate_cross_language``), which is confirmed instead. Free-form facts never supersede
   anything.
5. A turn that did none of this and holds a lasting first-person statement becomes a
   candidate; a candidate that matches an earlier candidate of another session (same key and
   value, same normalised text, or cosine at least ``duplicate``) is written as a fact
   (repetition).

Confirming never deletes; nothing here deletes a fact.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memory import language
from memory.constraints import constraint_text
from memory.dates import resolve_relative_dates
from memory.endings import endings, ends
from memory.facts import (
    explicit_request,
    fact_text,
    first_person,
    is_correction,
    request_clauses,
    stable_statement,
)
from memory.lexicon import en as EN
from memory.ports import ConversationStore, Embedder, FactStore, ScopeFilter, SearchIndex
from memory.records import ThreadRow
from memory.statements import bare_value, keys_match, open_attributes
from memory.text import has_cjk, language_of, normalise
from memory.topic_statements import match_topics, not_allergic_to
from memory.topics import CONSTRAINT_TOPICS
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

    def __init__(self, *, facts: FactStore, conversations: ConversationStore,
                 embedder: Embedder, index: SearchIndex) -> None:
        self.facts = facts
        self.conversations = conversations
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
        known = {f.topic for f in await self.facts.active_facts(user_id, scope) if f.topic}

        # a request may hold several statements, each a fact ("my favourite colour is blue and
        # I like jazz"); other turns are read sentence by sentence, questions and quotes left out
        if request:
            clauses = request_clauses(body)
        else:
            clauses = [s for s in language.split_sentences(language.without_quotes(text))
                       if not language.is_question(s)]
        for clause in clauses:
            clause = language.without_abbreviation_dots(clause)
            said: list[FactOutcome] = []
            stated = claims(clause, lang, known)
            # "我现在不喜欢寿司了" states a dislike: an ending only for what no claim restates
            ending = [p for p in endings(clause, lang)
                      if not any(c.shown and c.shown.lower() in p.lower() for c in stated)]
            for phrase in ending:
                said += await w.end(phrase)
            for key in not_allergic_to(clause):  # "I'm not allergic to peanuts" / 我对花生不过敏
                said += await w.end_topic(key)
            ended = {o.fact.topic for o in said if o.status == "ended" and o.fact}
            for claim in stated:
                if claim.key in ended:
                    continue
                # a constraint is kept at its first mention ("I don't eat pork"), not when the
                # clause says something stopped ("I don't eat peanuts anymore")
                constraint_now = claim.topic in CONSTRAINT_TOPICS and not endings(clause, lang)
                assertive = bool(request) or correction or constraint_now
                outcome = await w.claim(claim, assertive=assertive)
                if outcome is not None:
                    said.append(outcome)
            if not said and correction and (value := bare_value(clause, lang)):
                outcome = await w.correct_last(value)  # "No wait, it's olives." / 不对，是5号柜
                if outcome is not None:
                    said.append(outcome)
            if request and not said:
                # "just so you know, I'm on blood thinners": a constraint asked to be kept
                kind = "prohibition" if request.kind == "note" and constraint_text(
                    clause, lang) else request.kind
                said.append(await w.free_form(fact_text(clause, lang), kind=kind))
            elif not said and (kept := constraint_text(clause, lang)):
                # allergies, diets, conditions, prohibitions: kept from their first mention, in
                # the words of the clause that states them
                said.append(await w.free_form(fact_text(_unsoftened(kept), lang),
                                              kind="prohibition"))
            outcomes += said
        if not request and not outcomes:
            statement = stable_statement(text, lang)
            if statement:
                outcomes.append(await w.candidate(None, None, statement))
        for o in outcomes:
            if o.status != "candidate":
                log.info("fact %s id=%s user=%s", o.status, o.fact.id if o.fact else None, user_id)
        return outcomes


@dataclass(frozen=True, slots=True)
class Claim:
    """One attribute a clause states, ready to write.

    Attributes:
        key: conflict key (``residence``, ``dentist``, ``allergy:peanuts``); None when only
            the old value is named ("I switched from Telekom to Vodafone").
        value: normalised value.
        text: the canonical fact text (None with ``key`` None: made from the replaced fact).
        kind: fact kind.
        topic: the topic-table key, or None for an open-vocabulary attribute.
        shown: the value as said.
        changed_from: the old value named ("telekom"), or None.
        context: the clause the claim was read from (with ``key`` and ``changed_from`` None,
            the old value it mentions names the attribute: "Sal closed his shop, so I
            switched to Dom").
    """

    key: str | None
    value: str
    text: str | None
    kind: str
    topic: str | None
    shown: str
    changed_from: str | None = None
    context: str = ""


def claims(clause: str, lang: str, known: Iterable[str] = ()) -> list[Claim]:
    """The attributes ``clause`` states: topic-table statements first (``memory.topics``),
    then open-vocabulary ones (``memory.statements.open_attributes``); ``known``: the user's
    attribute keys (for "X is now Y" without "my")."""
    out: dict[str, Claim] = {}
    for m in match_topics(clause, lang):
        out.setdefault(m.key, Claim(m.key, m.value, m.text, m.topic.kind, m.topic.key,
                                    m.shown or m.value))
    for said in open_attributes(clause, lang, known):
        if said.topic is not None or any(c.value == said.value for c in out.values()):
            continue  # a synonym of a topic, or a value a topic statement holds already
        if not said.key:
            out.setdefault(f"from:{said.changed_from}", Claim(
                None, said.value, None, "profile", None, said.shown, said.changed_from,
                clause))
            continue
        out.setdefault(said.key, Claim(said.key, said.value,
                                       open_text(said.attribute, said.shown, lang,
                                                 named=said.named),
                                       "profile", None, said.shown, said.changed_from))
    return list(out.values())


def mentions(clause: str, value: str, *, besides: str = "") -> bool:
    """True when ``clause`` (outside ``besides``, the new value) names a stored ``value`` by
    its first word, titles and articles left out ("Sal" of "Sal on 5th Avenue", "Patel" of
    "Dr Patel"; in Chinese the value itself, at least two characters)."""
    rest = clause.lower().replace(besides.lower(), " ") if besides else clause.lower()
    if has_cjk(value):
        return len(value) >= 2 and value.lower() in rest
    head = next((w for w in value.lower().replace(".", " ").split()
                 if w not in EN.ARTICLES and w not in EN.ABBREVIATIONS), "")
    return len(head) >= 2 and f" {head} " in f" {' '.join(language.norms(language.tokens(rest)))} "


def open_text(attribute: str, value: str, lang: str, *, named: bool = False) -> str:
    """The fact of an open-vocabulary attribute: "The user's dentist is Dr. Okafor",
    用户的牙医是李医生, 用户家的宽带是电信; with ``named``: "The user's project is called
    Falcon", 用户的女儿叫小雨."""
    if lang == "zh" or has_cjk(attribute):
        joint = "" if attribute.startswith("家") or "的" in attribute else "的"
        return f"用户{joint}{attribute}{'叫' if named else '是'}{value}"
    return f"The user's {attribute} is {'called ' if named else ''}{value}"


def _unsoftened(clause: str) -> str:
    """A prohibition without the "please" it opens with ("Please don't message me ...")."""
    stripped = clause.strip()
    for word in ("please ", "Please ", "pls ", "请"):
        if stripped.startswith(word):
            return stripped[len(word):].lstrip(" ,，")
    return stripped


def _replace_value(text: str, old: str, new: str) -> str:
    """``text`` with the value ``old`` (compared without case) replaced by ``new``."""
    at = text.lower().rfind(old.lower())
    if at < 0:
        return text
    return text[:at] + new + text[at + len(old):]


class _Write:
    """One turn's write context (keeps the per-decision helpers small)."""

    def __init__(self, owner: SemanticWriter, *, user_id: int, scope: Scope, thread: ThreadRow,
                 turn: Turn, now: datetime, lang: str) -> None:
        self.facts = owner.facts
        self.conversations = owner.conversations
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
        return await self.facts.add_fact(
            user_id=self.user_id, kind=kind, text=text, topic=topic, origin=self.thread,
            source_turn_ids=sources, lang=self.lang, scope=self.scope, now=self.now,
            valid_from=self.turn.created_at, value=value, mode=mode, supersedes=supersedes)

    async def end(self, phrase: str) -> list[FactOutcome]:
        """End the active facts ``phrase`` names (``memory.endings.ends``); allergies end
        only when named as such (``end_topic``)."""
        out = []
        for fact in await self.facts.active_facts(self.user_id, self.scope):
            if (fact.topic or "").startswith("allergy:"):
                continue
            if ends(phrase, fact.text, fact.value):
                if await self.facts.end_fact(fact.id, self.user_id, self.turn.created_at):
                    out.append(FactOutcome("ended", fact, explicit=True))
        return out

    async def end_topic(self, key: str) -> list[FactOutcome]:
        """End the active facts on the topic ``key`` (``allergy:peanuts``): the user said it no
        longer holds."""
        out = []
        for fact in await self.facts.active_facts(self.user_id, self.scope, topic=key):
            if await self.facts.end_fact(fact.id, self.user_id, self.turn.created_at):
                out.append(FactOutcome("ended", fact, explicit=True))
        return out

    async def claim(self, claim: Claim, *, assertive: bool) -> FactOutcome | None:
        """Write, confirm or supersede on ``claim``'s key (see the module docstring); None when
        it names an old value no fact holds."""
        active = [f for f in await self.facts.active_facts(self.user_id, self.scope) if f.topic]
        text, key = claim.text, claim.key
        if key is None:  # "I switched from Telekom to Vodafone": the fact whose value it was;
            # "Sal closed his shop, so I switched to Dom": the one whose value the clause names
            old = [f for f in active if f.value and ":" not in f.topic and (
                ends(claim.changed_from, f.text, f.value) if claim.changed_from
                else mentions(claim.context, f.value, besides=claim.shown))]
            if not old or (len(old) > 1 and not claim.changed_from):
                return None
            key, text = old[-1].topic, _replace_value(old[-1].text, old[-1].value, claim.shown)
        multi = ":" in key
        existing = [f for f in active if f.topic == key or (
            not multi and ":" not in f.topic and keys_match(f.topic, key))]
        if existing:
            key = existing[-1].topic  # the stored key names the attribute
        for fact in existing:
            if fact.value == claim.value or normalise(fact.text) == normalise(text):
                await self.facts.confirm_fact(fact.id, self.turn.id, self.now)
                return FactOutcome("confirmed", fact, explicit=assertive)
            if claim.topic is not None and claim.topic != "opinion" and \
                    has_cjk(fact.value or "") != has_cjk(claim.value) \
                    and await self._same_meaning(fact.text, text):
                await self.facts.confirm_fact(fact.id, self.turn.id, self.now)
                return FactOutcome("confirmed", fact, explicit=assertive)
        if existing:
            # a new value of an attribute the user asked to keep is kept as the old one was
            # (in the profile where that was): "my dentist is now Dr. Kaya"
            kept = next((f.mode for f in existing if f.mode in ("explicit", "correction")), None)
            fact = await self._add(text, kind=claim.kind, topic=key, value=claim.value,
                                   mode="correction" if assertive else kept or "statement",
                                   sources=[self.turn.id], supersedes=[f.id for f in existing])
            return FactOutcome("superseded", fact, previous=existing[-1], explicit=True)
        if assertive:
            fact = await self._add(text, kind=claim.kind, topic=key, value=claim.value,
                                   mode="explicit", sources=[self.turn.id])
            return FactOutcome("written", fact, explicit=True)
        return await self.candidate(key, claim.value, text, kind=claim.kind)

    async def correct_last(self, shown: str) -> FactOutcome | None:
        """A correction that names only a value ("No wait, it's olives.", 不对，是5号柜):
        the newest single-valued fact written in this conversation gets it."""
        session = await self.conversations.open_session(self.thread.id)
        since = session.started_at if session is not None else self.turn.created_at
        recent = [f for f in await self.facts.active_facts(self.user_id, self.scope)
                  if f.topic and ":" not in f.topic and f.value
                  and f.origin_thread_id == self.thread.id and f.created_at >= since]
        if not recent:
            return None
        last = max(recent, key=lambda f: (f.created_at, f.id))
        value = shown.strip().lower()
        claim = Claim(last.topic, value, _replace_value(last.text, last.value, shown.strip()),
                      last.kind, None, shown.strip())
        return await self.claim(claim, assertive=True)

    async def free_form(self, text: str, *, kind: str) -> FactOutcome:
        twin = await self._near_duplicate(text)
        if twin is not None:
            await self.facts.confirm_fact(twin.id, self.turn.id, self.now)
            return FactOutcome("confirmed", twin, explicit=True)
        fact = await self._add(text, kind=kind, topic=None, value=None, mode="explicit",
                               sources=[self.turn.id])
        return FactOutcome("written", fact, explicit=True)

    async def candidate(self, topic: str | None, value: str | None, text: str,
                        kind: str = "note") -> FactOutcome:
        vector = (await self.embedder.embed_documents([first_person(text)]))[0]
        norm = normalise(text)
        matches = []
        for row in await self.facts.open_candidates(self.user_id, self.scope):
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
            await self.facts.add_candidate(
                user_id=self.user_id, scope=self.scope, topic=topic, value=value, text=text,
                norm=norm, lang=self.lang, vector=np.asarray(vector, np.float32).tobytes(),
                session_id=self.turn.session_id, turn_id=self.turn.id, now=self.now)
            return FactOutcome("candidate")
        if topic is None:
            twin = await self._near_duplicate(text, vector=vector)
            if twin is not None:
                await self.facts.confirm_fact(twin.id, self.turn.id, self.now)
                return FactOutcome("confirmed", twin)
        sources = sorted({r["turn_id"] for r in matches} | {self.turn.id})[-3:]
        fact = await self._add(text, kind=kind, topic=topic, value=value, mode="repetition",
                               sources=sources)
        await self.facts.consume_candidates([r["id"] for r in matches], self.now)
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
        if vector is None:  # as the index's fact vectors are made (Indexer.fact_items)
            vector = (await self.embedder.embed_documents([first_person(text)]))[0]
        hits = await self.index.search(
            vector=vector, text="", where=ScopeFilter(scope=str(self.scope), owner=str(self.user_id)),
            limit=8)
        ids = [h.item_id for h in hits if h.kind is ItemKind.FACT]
        facts = await self.facts.get_facts(ids)
        for hit in sorted(hits, key=lambda h: -(h.cosine or 0)):
            fact = facts.get(hit.item_id) if hit.kind is ItemKind.FACT else None
            if fact is None or fact.topic is not None or fact.status is not FactStatus.ACTIVE:
                continue
            cut = self.embedder.calibration.duplicate_cut(has_cjk(fact.text), has_cjk(text))
            if normalise(fact.text) == norm or (cut is not None and (hit.cosine or 0) >= cut):
                return fact
        exact = [f for f in await self.facts.active_facts(self.user_id, self.scope)
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


