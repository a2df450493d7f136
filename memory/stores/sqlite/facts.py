"""Facts in SQLite (:class:`memory.ports.FactStore`): semantic memory with its history, and
the candidates that become facts when repeated."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime

from memory.errors import StoreError
from memory.facts import MAX_FACT_CHARS
from memory.records import ThreadRow
from memory.stores.sqlite.connection import Database
from memory.stores.sqlite.rows import CHUNK, by_ids, fact_of, id_list, ts
from memory.types import Fact, FactStatus, Scope

log = logging.getLogger("memory.stores.sqlite")


async def insert_fact(
    tx: Database, *, user_id: int, kind: str, text: str, topic: str | None, origin: ThreadRow,
    source_turn_ids: Sequence[int], lang: str, scope: Scope, now: datetime,
    valid_from: datetime | None = None, value: str | None = None, mode: str = "explicit",
    supersedes: Sequence[int] = (),
) -> int:
    """The one fact insert of every write path (``add_fact``, a consolidation job's fact
    decisions) inside an open transaction; returns the new id. Superseded facts get ``valid_to = valid_from``.

    Raises:
        StoreError: the text is empty or longer than ``memory.facts.MAX_FACT_CHARS``.
    """
    if not text.strip() or len(text) > MAX_FACT_CHARS:
        raise StoreError(f"fact text must be 1-{MAX_FACT_CHARS} characters, got {len(text)}")
    since = valid_from or now
    cur = await tx.execute(
        "INSERT INTO facts (user_id, kind, text, topic, status, created_at, valid_from,"
        " last_confirmed_at, origin_thread_id, origin_kind, origin_title, source_turn_ids,"
        " lang, scope, value, mode) VALUES (?,?,?,?,'active',?,?,?,?,?,?,?,?,?,?,?)",
        (user_id, kind, text, topic, ts(now), ts(since), ts(now), origin.id,
         origin.chat_kind.value, origin.title, json.dumps(list(source_turn_ids)), lang,
         str(scope), value, mode),
    )
    for old_id in supersedes:
        await tx.execute(
            "UPDATE facts SET status = 'superseded', valid_to = ? WHERE id = ? AND "
            "user_id = ? AND status = 'active'", (ts(since), old_id, user_id))
    return cur.lastrowid


async def confirm_in(tx: Database, fact_id: int, turn_id: int, now: datetime) -> bool:
    """Confirm a fact inside an open transaction (see :meth:`SQLiteFacts.confirm_fact`); False
    when the fact is gone."""
    row = await tx.one("SELECT source_turn_ids FROM facts WHERE id = ?", (fact_id,))
    if row is None:
        return False
    sources = list(id_list(row["source_turn_ids"]))
    if turn_id not in sources:
        sources.append(turn_id)
    await tx.execute(
        "UPDATE facts SET last_confirmed_at = ?, confirmations = confirmations + 1,"
        " source_turn_ids = ? WHERE id = ?",
        (ts(now), json.dumps(sources), fact_id),
    )
    return True


class SQLiteFacts:
    """:class:`memory.ports.FactStore` on the store's connection."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add_fact(
        self,
        *,
        user_id: int,
        kind: str,
        text: str,
        topic: str | None,
        origin: ThreadRow,
        source_turn_ids: Sequence[int],
        lang: str,
        scope: Scope,
        now: datetime,
        valid_from: datetime | None = None,
        value: str | None = None,
        mode: str = "explicit",
        supersedes: Sequence[int] = (),
    ) -> Fact:
        """Store a new active fact and return it; the facts in ``supersedes`` get
        ``valid_to = valid_from`` and status ``superseded`` in the same transaction.

        Raises:
            StoreError: the text is empty or longer than ``memory.facts.MAX_FACT_CHARS`` (the
                one length check every write path goes through).
        """
        async with self.db.tx() as tx:
            fact_id = await insert_fact(
                tx, user_id=user_id, kind=kind, text=text, topic=topic, origin=origin,
                source_turn_ids=source_turn_ids, lang=lang, scope=scope, now=now,
                valid_from=valid_from, value=value, mode=mode, supersedes=supersedes)
        facts = await self.get_facts([fact_id])
        log.info("fact written id=%s user=%s kind=%s", fact_id, user_id, kind)
        return facts[fact_id]

    async def end_fact(self, fact_id: int, user_id: int, at: datetime) -> bool:
        """Mark an active fact as no longer true ("I quit green tea"): status ``superseded``
        with ``valid_to = at``, kept as history. Returns False when nothing changed."""
        async with self.db.tx() as tx:
            cur = await tx.execute(
                "UPDATE facts SET status = 'superseded', valid_to = ? WHERE id = ? AND user_id = ?"
                " AND status = 'active'", (ts(at), fact_id, user_id))
        return cur.rowcount > 0

    async def confirm_fact(self, fact_id: int, turn_id: int, now: datetime) -> None:
        """Record a restatement: bump ``last_confirmed_at`` and ``confirmations``; add the
        source turn."""
        async with self.db.tx() as tx:
            await confirm_in(tx, fact_id, turn_id, now)
        log.info("fact confirmed id=%s", fact_id)

    async def get_facts(self, ids: Iterable[int]) -> dict[int, Fact]:
        """Return facts by id (missing ids are absent from the result)."""
        return {f.id: f for f in await by_ids(self.db, "facts", ids, fact_of)}

    async def active_facts(self, user_id: int, scope: Scope, *, topic: str | None = None
                           ) -> list[Fact]:
        """A user's active facts in one scope (optionally of one topic key), oldest first."""
        sql = "SELECT * FROM facts WHERE user_id = ? AND scope = ? AND status = 'active'"
        args: list = [user_id, str(scope)]
        if topic is not None:
            sql += " AND topic = ?"
            args.append(topic)
        return [fact_of(r) for r in await self.db.all(sql + " ORDER BY id", args)]

    async def facts_in_scope(self, user_id: int, scope: Scope) -> list[Fact]:
        """A user's facts in one scope, every status, oldest first."""
        return [fact_of(r) for r in await self.db.all(
            "SELECT * FROM facts WHERE user_id = ? AND scope = ? ORDER BY id", (user_id, str(scope)))]

    async def facts_of_thread(self, thread_id: int) -> list[Fact]:
        """Every fact learned in a thread (any owner, any status), oldest first."""
        rows = await self.db.all("SELECT * FROM facts WHERE origin_thread_id = ? ORDER BY id",
                               (thread_id,))
        return [fact_of(r) for r in rows]

    async def profile_candidates(self, user_id: int, scope: Scope, *, kinds: Collection[str],
                                 topic_roots: Collection[str], modes: Collection[str],
                                 limit: int) -> list[Fact]:
        """A user's active facts in a scope of one of ``kinds``, or with a topic key whose
        root (before its first ``:``) is one of ``topic_roots``, or written in one of
        ``modes``; the oldest ``limit``, oldest first."""
        kinds, roots, modes = list(kinds), list(topic_roots), list(modes)
        root = "CASE WHEN instr(topic, ':') > 0 THEN substr(topic, 1, instr(topic, ':') - 1) ELSE topic END"
        rows = await self.db.all(
            "SELECT * FROM facts WHERE user_id = ? AND scope = ? AND status = 'active' AND ("
            f"kind IN ({','.join('?' * len(kinds)) or 'NULL'})"
            f" OR {root} IN ({','.join('?' * len(roots)) or 'NULL'})"
            f" OR mode IN ({','.join('?' * len(modes)) or 'NULL'})) ORDER BY id LIMIT ?",
            (user_id, str(scope), *kinds, *roots, *modes, limit))
        return [fact_of(r) for r in rows]

    async def topics_written_before(self, user_id: int, scope: Scope, topics: Collection[str],
                                    before: datetime) -> set[str]:
        """Which of ``topics`` a fact of the user in the scope (any status) created before
        ``before`` has."""
        found: set[str] = set()
        wanted = list(dict.fromkeys(topics))
        for start in range(0, len(wanted), CHUNK):
            chunk = wanted[start:start + CHUNK]
            rows = await self.db.all(
                "SELECT DISTINCT topic FROM facts WHERE user_id = ? AND scope = ? AND "
                f"created_at < ? AND topic IN ({','.join('?' * len(chunk))})",
                (user_id, str(scope), ts(before), *chunk))
            found |= {r["topic"] for r in rows}
        return found

    async def list_facts(self, user_id: int, statuses: Sequence[FactStatus]) -> list[Fact]:
        """Return a user's facts with the given statuses, oldest first."""
        marks = ",".join("?" * len(statuses))
        rows = await self.db.all(
            f"SELECT * FROM facts WHERE user_id = ? AND status IN ({marks}) ORDER BY id",
            (user_id, *[s.value for s in statuses]),
        )
        return [fact_of(r) for r in rows]

    async def touch_facts(self, fact_ids: Sequence[int], now: datetime) -> None:
        """Set ``last_recalled_at`` of recalled facts."""
        if not fact_ids:
            return
        marks = ",".join("?" * len(fact_ids))
        await self.db.run_statements(
            [(f"UPDATE facts SET last_recalled_at = ? WHERE id IN ({marks})", (ts(now), *fact_ids))])

    async def add_candidate(
        self, *, user_id: int, scope: Scope, topic: str | None, value: str | None, text: str,
        norm: str, lang: str, vector: bytes | None, session_id: int, turn_id: int, now: datetime,
    ) -> int:
        """Record a statement that becomes a fact if it is repeated in another session."""
        async with self.db.tx() as tx:
            cur = await tx.execute(
                "INSERT INTO fact_candidates (user_id, scope, topic, value, text, norm, lang, vector,"
                " session_id, turn_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (user_id, str(scope), topic, value, text, norm, lang, vector, session_id, turn_id,
                 ts(now)))
        return cur.lastrowid

    async def open_candidates(self, user_id: int, scope: Scope, *, limit: int = 500) -> list[dict]:
        """The user's unconsumed candidates in a scope, newest first (at most ``limit``)."""
        rows = await self.db.all(
            "SELECT * FROM fact_candidates WHERE user_id = ? AND scope = ? AND consumed_at IS NULL"
            " ORDER BY id DESC LIMIT ?", (user_id, str(scope), limit))
        return [dict(r) for r in rows]

    async def consume_candidates(self, ids: Sequence[int], now: datetime) -> None:
        """Mark candidates as used by a fact."""
        if not ids:
            return
        marks = ",".join("?" * len(ids))
        async with self.db.tx() as tx:
            await tx.execute(f"UPDATE fact_candidates SET consumed_at = ? WHERE id IN ({marks})",
                             (ts(now), *ids))

    async def candidate_turn_ids(self, turn_ids: Iterable[int]) -> set[int]:
        """Which of ``turn_ids`` the rules recorded as fact candidates (consumed or not): the
        turns that went through the semantic write policy and stated something possibly
        stable."""
        ids = list(turn_ids)
        found: set[int] = set()
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = await self.db.all(
                f"SELECT DISTINCT turn_id FROM fact_candidates WHERE turn_id IN ({marks})", chunk)
            found |= {r["turn_id"] for r in rows}
        return found

    async def turn_has_memory(self, turn_id: int) -> bool:
        """Whether a fact or a fact candidate was drawn from this turn (semantic memory saw
        it)."""
        row = await self.db.one(
            "SELECT EXISTS (SELECT 1 FROM fact_candidates WHERE turn_id = ?) OR EXISTS ("
            "SELECT 1 FROM facts, json_each(facts.source_turn_ids) j WHERE j.value = ?) AS seen",
            (turn_id, turn_id))
        return bool(row["seen"])

    async def stale_facts(self, cutoff: datetime) -> list[Fact]:
        """Active facts neither confirmed nor recalled after ``cutoff`` (expiry candidates;
        the policy is ``memory.lifecycle.facts_to_archive``), oldest first."""
        rows = await self.db.all(
            "SELECT * FROM facts WHERE status = 'active' AND last_confirmed_at <= ? "
            "AND (last_recalled_at IS NULL OR last_recalled_at <= ?) ORDER BY id",
            (ts(cutoff), ts(cutoff)),
        )
        return [fact_of(r) for r in rows]

    async def archive_facts(self, fact_ids: Sequence[int], *, cutoff: datetime,
                            now: datetime) -> list[tuple[Fact, Scope]]:
        """Set status ``archived`` on these facts if they are still active and still unused
        since ``cutoff`` (a recall meanwhile keeps a fact active); ``valid_to`` stays unset
        (an unused fact is not untrue). One audit row per user.

        Returns:
            The archived facts with their scopes (for their index rows).
        """
        if not fact_ids:
            return []
        archived: list[tuple[Fact, Scope]] = []
        async with self.db.tx() as tx:
            for start in range(0, len(fact_ids), CHUNK):
                chunk = list(fact_ids[start:start + CHUNK])
                marks = ",".join("?" * len(chunk))
                where = (f"id IN ({marks}) AND status = 'active' AND last_confirmed_at <= ? "
                         "AND (last_recalled_at IS NULL OR last_recalled_at <= ?)")
                args = (*chunk, ts(cutoff), ts(cutoff))
                ids = [r["id"] for r in await self.db.all(f"SELECT id FROM facts WHERE {where}",
                                                         args)]
                if not ids:
                    continue
                idmarks = ",".join("?" * len(ids))
                await tx.execute(f"UPDATE facts SET status = 'archived' WHERE id IN ({idmarks})",
                                 ids)
                rows = await self.db.all(f"SELECT * FROM facts WHERE id IN ({idmarks})", ids)
                archived += [(fact_of(r), Scope.parse(r["scope"])) for r in rows]
            per_user: dict[int, int] = {}
            for fact, _ in archived:
                per_user[fact.user_id] = per_user.get(fact.user_id, 0) + 1
            for user_id, count in sorted(per_user.items()):
                await tx.execute(
                    "INSERT INTO audit_log (at, user_id, action, count) "
                    "VALUES (?, ?, 'archive_facts', ?)", (ts(now), user_id, count))
        return archived

    async def facts_with_scope(self, ids: Iterable[int]) -> list[tuple[Fact, Scope]]:
        """Facts by id with their ``scope`` column, in id order (missing ids are left out):
        the rows ``all_facts`` would give for these ids."""
        ids = list(ids)
        out: list[tuple[Fact, Scope]] = []
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = await self.db.all(f"SELECT * FROM facts WHERE id IN ({marks}) ORDER BY id",
                                   chunk)
            out.extend((fact_of(r), Scope.parse(r["scope"])) for r in rows)
        return out

    async def all_facts(self) -> list[tuple[Fact, Scope]]:
        """Every fact with its scope (for reindexing)."""
        rows = await self.db.all("SELECT * FROM facts ORDER BY id")
        return [(fact_of(r), Scope.parse(r["scope"])) for r in rows]
