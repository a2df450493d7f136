"""Facts in PostgreSQL (:class:`memory.ports.FactStore`): semantic memory with its history, and
the candidates that become facts when repeated."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime

from memory.errors import StoreError
from memory.facts import MAX_FACT_CHARS
from memory.records import ThreadRow
from memory.stores.postgres.database import Database
from memory.stores.postgres.rows import by_ids, fact_of, id_list
from memory.types import Fact, FactStatus, Scope

log = logging.getLogger("memory.stores.postgres")


async def insert_fact(
    tx: Database, *, user_id: int, kind: str, text: str, topic: str | None, origin: ThreadRow,
    source_turn_ids: Sequence[int], lang: str, scope: Scope, now: datetime,
    valid_from: datetime | None = None, value: str | None = None, mode: str = "explicit",
    supersedes: Sequence[int] = (),
) -> int:
    """The one fact insert of every write path (``add_fact``, a consolidation job's fact
    decisions) inside an open transaction; returns the new id. Superseded facts (the user's,
    still active) get ``valid_to = valid_from``.

    Raises:
        StoreError: the text is empty or longer than ``memory.facts.MAX_FACT_CHARS``.
    """
    if not text.strip() or len(text) > MAX_FACT_CHARS:
        raise StoreError(f"fact text must be 1-{MAX_FACT_CHARS} characters, got {len(text)}")
    since = valid_from or now
    fact_id = await tx.value(
        "INSERT INTO facts (user_id, kind, text, topic, status, created_at, valid_from,"
        " last_confirmed_at, origin_thread_id, origin_kind, origin_title, source_turn_ids,"
        " lang, scope, value, mode) VALUES ($1,$2,$3,$4,'active',$5,$6,$5,$7,$8,$9,$10,$11,$12,"
        "$13,$14) RETURNING id",
        (user_id, kind, text, topic, now, since, origin.id, origin.chat_kind.value,
         origin.title, json.dumps(list(source_turn_ids)), lang, str(scope), value, mode))
    if supersedes:
        await tx.execute(
            "UPDATE facts SET status = 'superseded', valid_to = $1 WHERE id = ANY($2::bigint[])"
            " AND user_id = $3 AND status = 'active'", (since, list(supersedes), user_id))
    return fact_id


async def confirm_in(tx: Database, fact_id: int, turn_id: int, now: datetime) -> bool:
    """Confirm a fact inside an open transaction (see :meth:`PgFacts.confirm_fact`), its row
    locked; False when the fact is gone."""
    row = await tx.one("SELECT source_turn_ids FROM facts WHERE id = $1 FOR UPDATE", (fact_id,))
    if row is None:
        return False
    sources = list(id_list(row["source_turn_ids"]))
    if turn_id not in sources:
        sources.append(turn_id)
    await tx.execute(
        "UPDATE facts SET last_confirmed_at = $1, confirmations = confirmations + 1,"
        " source_turn_ids = $2 WHERE id = $3", (now, json.dumps(sources), fact_id))
    return True


class PgFacts:
    """:class:`memory.ports.FactStore` on the store's pool."""

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
            StoreError: the text is empty or longer than ``memory.facts.MAX_FACT_CHARS``.
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
        """Mark an active fact as no longer true: status ``superseded`` with ``valid_to =
        at``, kept as history. Returns False when nothing changed."""
        cur = await self.db.execute(
            "UPDATE facts SET status = 'superseded', valid_to = $1 WHERE id = $2 AND "
            "user_id = $3 AND status = 'active'", (at, fact_id, user_id))
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
        sql = "SELECT * FROM facts WHERE user_id = $1 AND scope = $2 AND status = 'active'"
        args: list = [user_id, str(scope)]
        if topic is not None:
            sql += " AND topic = $3"
            args.append(topic)
        return [fact_of(r) for r in await self.db.all(sql + " ORDER BY id", args)]

    async def facts_in_scope(self, user_id: int, scope: Scope) -> list[Fact]:
        """A user's facts in one scope, every status, oldest first."""
        return [fact_of(r) for r in await self.db.all(
            "SELECT * FROM facts WHERE user_id = $1 AND scope = $2 ORDER BY id",
            (user_id, str(scope)))]

    async def facts_of_thread(self, thread_id: int) -> list[Fact]:
        """Every fact learned in a thread (any owner, any status), oldest first."""
        rows = await self.db.all("SELECT * FROM facts WHERE origin_thread_id = $1 ORDER BY id",
                                 (thread_id,))
        return [fact_of(r) for r in rows]

    async def profile_candidates(self, user_id: int, scope: Scope, *, kinds: Collection[str],
                                 topic_roots: Collection[str], modes: Collection[str],
                                 limit: int) -> list[Fact]:
        """A user's active facts in a scope of one of ``kinds``, or with a topic key whose
        root (before its first ``:``) is one of ``topic_roots``, or written in one of
        ``modes``; the oldest ``limit``, oldest first."""
        rows = await self.db.all(
            "SELECT * FROM facts WHERE user_id = $1 AND scope = $2 AND status = 'active' AND ("
            "kind = ANY($3::text[]) OR split_part(topic, ':', 1) = ANY($4::text[])"
            " OR mode = ANY($5::text[])) ORDER BY id LIMIT $6",
            (user_id, str(scope), list(kinds), list(topic_roots), list(modes), limit))
        return [fact_of(r) for r in rows]

    async def topics_written_before(self, user_id: int, scope: Scope, topics: Collection[str],
                                    before: datetime) -> set[str]:
        """Which of ``topics`` a fact of the user in the scope (any status) created before
        ``before`` has."""
        rows = await self.db.all(
            "SELECT DISTINCT topic FROM facts WHERE user_id = $1 AND scope = $2 AND "
            "created_at < $3 AND topic = ANY($4::text[])",
            (user_id, str(scope), before, list(dict.fromkeys(topics))))
        return {r["topic"] for r in rows}

    async def list_facts(self, user_id: int, statuses: Sequence[FactStatus]) -> list[Fact]:
        """Return a user's facts with the given statuses, oldest first."""
        rows = await self.db.all(
            "SELECT * FROM facts WHERE user_id = $1 AND status = ANY($2::text[]) ORDER BY id",
            (user_id, [s.value for s in statuses]))
        return [fact_of(r) for r in rows]

    async def touch_facts(self, fact_ids: Sequence[int], now: datetime) -> None:
        """Set ``last_recalled_at`` of recalled facts."""
        if fact_ids:
            await self.db.execute(
                "UPDATE facts SET last_recalled_at = $1 WHERE id = ANY($2::bigint[])",
                (now, list(fact_ids)))

    async def add_candidate(
        self, *, user_id: int, scope: Scope, topic: str | None, value: str | None, text: str,
        norm: str, lang: str, vector: bytes | None, session_id: int, turn_id: int, now: datetime,
    ) -> int:
        """Record a statement that becomes a fact if it is repeated in another session."""
        return await self.db.value(
            "INSERT INTO fact_candidates (user_id, scope, topic, value, text, norm, lang, vector,"
            " session_id, turn_id, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) "
            "RETURNING id",
            (user_id, str(scope), topic, value, text, norm, lang, vector, session_id, turn_id,
             now))

    async def open_candidates(self, user_id: int, scope: Scope, *, limit: int = 500) -> list[dict]:
        """The user's unconsumed candidates in a scope, newest first (at most ``limit``)."""
        return await self.db.all(
            "SELECT * FROM fact_candidates WHERE user_id = $1 AND scope = $2 AND consumed_at IS "
            "NULL ORDER BY id DESC LIMIT $3", (user_id, str(scope), limit))

    async def consume_candidates(self, ids: Sequence[int], now: datetime) -> None:
        """Mark candidates as used by a fact."""
        if ids:
            await self.db.execute(
                "UPDATE fact_candidates SET consumed_at = $1 WHERE id = ANY($2::bigint[])",
                (now, list(ids)))

    async def candidate_turn_ids(self, turn_ids: Iterable[int]) -> set[int]:
        """Which of ``turn_ids`` the rules recorded as fact candidates (consumed or not)."""
        ids = sorted(set(turn_ids))
        if not ids:
            return set()
        rows = await self.db.all(
            "SELECT DISTINCT turn_id FROM fact_candidates WHERE turn_id = ANY($1::bigint[])",
            (ids,))
        return {r["turn_id"] for r in rows}

    async def turn_has_memory(self, turn_id: int) -> bool:
        """Whether a fact or a fact candidate was drawn from this turn."""
        return bool(await self.db.value(
            "SELECT EXISTS (SELECT 1 FROM fact_candidates WHERE turn_id = $1) OR EXISTS ("
            "SELECT 1 FROM facts WHERE source_turn_ids::jsonb @> to_jsonb($1::bigint))",
            (turn_id,)))

    async def stale_facts(self, cutoff: datetime) -> list[Fact]:
        """Active facts neither confirmed nor recalled after ``cutoff``, oldest first."""
        rows = await self.db.all(
            "SELECT * FROM facts WHERE status = 'active' AND last_confirmed_at <= $1 "
            "AND (last_recalled_at IS NULL OR last_recalled_at <= $1) ORDER BY id", (cutoff,))
        return [fact_of(r) for r in rows]

    async def archive_facts(self, fact_ids: Sequence[int], *, cutoff: datetime,
                            now: datetime) -> list[tuple[Fact, Scope]]:
        """Set status ``archived`` on these facts if they are still active and still unused
        since ``cutoff`` (a recall meanwhile keeps a fact active); ``valid_to`` stays unset.
        One audit row per user.

        Returns:
            The archived facts with their scopes (for their index rows).
        """
        if not fact_ids:
            return []
        async with self.db.tx() as tx:
            rows = await tx.all(
                "UPDATE facts SET status = 'archived' WHERE id = ANY($1::bigint[]) AND "
                "status = 'active' AND last_confirmed_at <= $2 AND (last_recalled_at IS NULL "
                "OR last_recalled_at <= $2) RETURNING *", (list(fact_ids), cutoff))
            archived = sorted(((fact_of(r), Scope.parse(r["scope"])) for r in rows),
                              key=lambda pair: pair[0].id)
            per_user: dict[int, int] = {}
            for fact, _ in archived:
                per_user[fact.user_id] = per_user.get(fact.user_id, 0) + 1
            for user_id, count in sorted(per_user.items()):
                await tx.execute(
                    "INSERT INTO audit_log (at, user_id, action, count) "
                    "VALUES ($1, $2, 'archive_facts', $3)", (now, user_id, count))
        return archived

    async def facts_with_scope(self, ids: Iterable[int]) -> list[tuple[Fact, Scope]]:
        """Facts by id with their ``scope`` column, in id order (missing ids are left out)."""
        return await by_ids(self.db, "facts", ids, lambda r: (fact_of(r), Scope.parse(r["scope"])))

    async def all_facts(self) -> list[tuple[Fact, Scope]]:
        """Every fact with its scope (for reindexing)."""
        rows = await self.db.all("SELECT * FROM facts ORDER BY id")
        return [(fact_of(r), Scope.parse(r["scope"])) for r in rows]
