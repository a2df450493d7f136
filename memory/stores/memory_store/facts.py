"""Facts in the in-memory store (:class:`memory.ports.FactStore`)."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime

from memory.errors import StoreError
from memory.facts import MAX_FACT_CHARS
from memory.records import ThreadRow
from memory.stores.columns import fact_of, id_list, ts
from memory.stores.memory_store.tables import Tables
from memory.types import Fact, FactStatus, Scope


def insert_fact(t: Tables, *, user_id: int, kind: str, text: str, topic: str | None,
                origin: ThreadRow, source_turn_ids: Sequence[int], lang: str, scope: Scope,
                now: datetime, valid_from: datetime | None = None, value: str | None = None,
                mode: str = "explicit", supersedes: Sequence[int] = ()) -> int:
    """The one fact insert of every write path; the user's active facts in ``supersedes``
    become ``superseded`` with ``valid_to = valid_from``. Returns the new id.

    Raises:
        StoreError: the text is empty or longer than ``memory.facts.MAX_FACT_CHARS``.
    """
    if not text.strip() or len(text) > MAX_FACT_CHARS:
        raise StoreError(f"fact text must be 1-{MAX_FACT_CHARS} characters, got {len(text)}")
    since = ts(valid_from or now)
    fact_id = t.insert("facts", {
        "user_id": user_id, "kind": kind, "text": text, "topic": topic, "status": "active",
        "created_at": ts(now), "valid_from": since, "valid_to": None,
        "last_confirmed_at": ts(now), "last_recalled_at": None, "confirmations": 1,
        "origin_thread_id": origin.id, "origin_kind": origin.chat_kind.value,
        "origin_title": origin.title, "source_turn_ids": json.dumps(list(source_turn_ids)),
        "lang": lang, "scope": str(scope), "value": value, "mode": mode})
    for old_id in supersedes:
        supersede(t, old_id, user_id, since)
    return fact_id


def supersede(t: Tables, fact_id: int, user_id: int, until: str) -> bool:
    """An active fact of the user is no longer current: ``superseded`` with ``valid_to``
    ``until`` (stored text). False when it is not the user's active fact."""
    row = t.facts.get(fact_id)
    if row is None or row["user_id"] != user_id or row["status"] != "active":
        return False
    t.update(t.facts, fact_id, status="superseded", valid_to=until)
    return True


def confirm(t: Tables, fact_id: int, turn_id: int, now: datetime) -> bool:
    """A restatement of a fact; False when the fact is gone."""
    row = t.facts.get(fact_id)
    if row is None:
        return False
    sources = list(id_list(row["source_turn_ids"]))
    if turn_id not in sources:
        sources.append(turn_id)
    t.update(t.facts, fact_id, last_confirmed_at=ts(now),
             confirmations=row["confirmations"] + 1, source_turn_ids=json.dumps(sources))
    return True


def unused_since(row: dict, cutoff: str) -> bool:
    """An active fact neither confirmed nor recalled after ``cutoff`` (stored text)."""
    return (row["status"] == "active" and row["last_confirmed_at"] <= cutoff
            and (row["last_recalled_at"] is None or row["last_recalled_at"] <= cutoff))


class MemoryFacts:
    """:class:`memory.ports.FactStore` on the store's tables."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    def _facts(self, test) -> list[Fact]:
        return [fact_of(r) for r in self.t.where(self.t.facts, test)]

    async def add_fact(self, *, user_id: int, kind: str, text: str, topic: str | None,
                       origin: ThreadRow, source_turn_ids: Sequence[int], lang: str,
                       scope: Scope, now: datetime, valid_from: datetime | None = None,
                       value: str | None = None, mode: str = "explicit",
                       supersedes: Sequence[int] = ()) -> Fact:
        """Store a new active fact (see :meth:`memory.ports.FactStore.add_fact`)."""
        with self.t.transaction():
            fact_id = insert_fact(self.t, user_id=user_id, kind=kind, text=text, topic=topic,
                                  origin=origin, source_turn_ids=source_turn_ids, lang=lang,
                                  scope=scope, now=now, valid_from=valid_from, value=value,
                                  mode=mode, supersedes=supersedes)
        return fact_of(self.t.facts[fact_id])

    async def end_fact(self, fact_id: int, user_id: int, at: datetime) -> bool:
        """An active fact is no longer true (kept as history); False when nothing changed."""
        return supersede(self.t, fact_id, user_id, ts(at))

    async def confirm_fact(self, fact_id: int, turn_id: int, now: datetime) -> None:
        """A restatement: the fact's confirmation moves and ``turn_id`` joins its sources."""
        confirm(self.t, fact_id, turn_id, now)

    async def get_facts(self, ids: Iterable[int]) -> dict[int, Fact]:
        """Facts by id (missing ids absent)."""
        return {i: fact_of(self.t.facts[i]) for i in ids if i in self.t.facts}

    async def active_facts(self, user_id: int, scope: Scope, *, topic: str | None = None
                           ) -> list[Fact]:
        """A user's active facts in a scope (optionally of one topic key), oldest first."""
        return self._facts(lambda r: r["user_id"] == user_id and r["scope"] == str(scope)
                           and r["status"] == "active" and (topic is None or r["topic"] == topic))

    async def facts_in_scope(self, user_id: int, scope: Scope) -> list[Fact]:
        """A user's facts in a scope, every status, oldest first."""
        return self._facts(lambda r: r["user_id"] == user_id and r["scope"] == str(scope))

    async def facts_of_thread(self, thread_id: int) -> list[Fact]:
        """Every fact learned in a thread, oldest first."""
        return self._facts(lambda r: r["origin_thread_id"] == thread_id)

    async def profile_candidates(self, user_id: int, scope: Scope, *, kinds: Collection[str],
                                 topic_roots: Collection[str], modes: Collection[str],
                                 limit: int) -> list[Fact]:
        """A user's active facts in a scope of one of ``kinds``, or with a topic key whose
        root (before its first ``:``) is one of ``topic_roots``, or written in one of
        ``modes``; the oldest ``limit``, oldest first."""
        kinds, roots, modes = set(kinds), set(topic_roots), set(modes)
        return self._facts(
            lambda r: r["user_id"] == user_id and r["scope"] == str(scope)
            and r["status"] == "active"
            and (r["kind"] in kinds or r["mode"] in modes
                 or (r["topic"] is not None and r["topic"].split(":", 1)[0] in roots)))[:limit]

    async def topics_written_before(self, user_id: int, scope: Scope, topics: Collection[str],
                                    before: datetime) -> set[str]:
        """Which of ``topics`` a fact of the user in the scope (any status) created before
        ``before`` has."""
        wanted, cut = set(topics), ts(before)
        return {r["topic"] for r in self.t.facts.values()
                if r["user_id"] == user_id and r["scope"] == str(scope)
                and r["topic"] in wanted and r["created_at"] < cut}

    async def list_facts(self, user_id: int, statuses: Sequence[FactStatus]) -> list[Fact]:
        """A user's facts with these statuses, oldest first."""
        wanted = {s.value for s in statuses}
        return self._facts(lambda r: r["user_id"] == user_id and r["status"] in wanted)

    async def touch_facts(self, fact_ids: Sequence[int], now: datetime) -> None:
        """Recalled facts: ``last_recalled_at = now``."""
        for fact_id in fact_ids:
            if fact_id in self.t.facts:
                self.t.update(self.t.facts, fact_id, last_recalled_at=ts(now))

    async def add_candidate(self, *, user_id: int, scope: Scope, topic: str | None,
                            value: str | None, text: str, norm: str, lang: str,
                            vector: bytes | None, session_id: int, turn_id: int,
                            now: datetime) -> int:
        """Record a statement that becomes a fact when repeated in another session."""
        return self.t.insert("candidates", {
            "user_id": user_id, "scope": str(scope), "topic": topic, "value": value,
            "text": text, "norm": norm, "lang": lang, "vector": vector,
            "session_id": session_id, "turn_id": turn_id, "created_at": ts(now),
            "consumed_at": None})

    async def open_candidates(self, user_id: int, scope: Scope, *, limit: int = 500
                              ) -> list[dict]:
        """The user's unconsumed candidates in a scope, newest first."""
        rows = self.t.where(self.t.candidates, lambda r: r["user_id"] == user_id
                            and r["scope"] == str(scope) and r["consumed_at"] is None)
        return [dict(r) for r in reversed(rows)][:limit]

    async def consume_candidates(self, ids: Sequence[int], now: datetime) -> None:
        """Mark candidates as used by a fact."""
        for cand_id in ids:
            if cand_id in self.t.candidates:
                self.t.update(self.t.candidates, cand_id, consumed_at=ts(now))

    async def candidate_turn_ids(self, turn_ids: Iterable[int]) -> set[int]:
        """Which of ``turn_ids`` hold a candidate (consumed or not)."""
        wanted = set(turn_ids)
        return {r["turn_id"] for r in self.t.candidates.values() if r["turn_id"] in wanted}

    async def turn_has_memory(self, turn_id: int) -> bool:
        """Whether a fact or a candidate was drawn from this turn."""
        return (any(r["turn_id"] == turn_id for r in self.t.candidates.values())
                or any(turn_id in id_list(r["source_turn_ids"]) for r in self.t.facts.values()))

    async def stale_facts(self, cutoff: datetime) -> list[Fact]:
        """Active facts neither confirmed nor recalled after ``cutoff``, oldest first."""
        cut = ts(cutoff)
        return self._facts(lambda r: unused_since(r, cut))

    async def archive_facts(self, fact_ids: Sequence[int], *, cutoff: datetime,
                            now: datetime) -> list[tuple[Fact, Scope]]:
        """Archive these facts if still active and unused since ``cutoff``, with one audit
        entry per user; the archived facts with their scopes."""
        cut, out = ts(cutoff), []
        for fact_id in fact_ids:
            row = self.t.facts.get(fact_id)
            if row is not None and unused_since(row, cut):
                row = self.t.update(self.t.facts, fact_id, status="archived")
                out.append((fact_of(row), Scope.parse(row["scope"])))
        per_user: dict[int, int] = {}
        for fact, _ in out:
            per_user[fact.user_id] = per_user.get(fact.user_id, 0) + 1
        for user_id, count in sorted(per_user.items()):
            self.t.audit.append({"at": ts(now), "user_id": user_id, "action": "archive_facts",
                                 "count": count})
        return out

    async def facts_with_scope(self, ids: Iterable[int]) -> list[tuple[Fact, Scope]]:
        """Facts by id with their scopes, in id order (missing ids left out)."""
        rows = [self.t.facts[i] for i in sorted(set(ids)) if i in self.t.facts]
        return [(fact_of(r), Scope.parse(r["scope"])) for r in rows]

    async def all_facts(self) -> list[tuple[Fact, Scope]]:
        """Every fact with its scope, in id order."""
        return await self.facts_with_scope(self.t.facts)
