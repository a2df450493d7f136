"""Seed a data folder with many users' facts, sessions, rounds and episodes, fast.

Rows go into the production stores: SQLite through :meth:`SQLiteStore.insert_many` (one
transaction per table and batch) and the LanceDB index of each embedder through
:meth:`LanceIndex.upsert` in large batches (each write is a new table version), with vectors
taken from a :class:`~bot.bench.pool.TextPool` instead of embedding every row. No policy runs
(dedup, supersession): the rows are what the policy would have kept. The same rows can go into
PostgreSQL schemas as well (``postgres_urls``): the SQLite store copied as ``memory-bot
migrate-to-postgres`` copies it, the index tables written from the same pool.

Skew: user 1 holds ``largest_share`` of the facts and rounds (5,000 of 100,000 by default);
the others follow a Zipf-like law (weight ``1 / rank**0.8``), every user at least one fact
when there are enough.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from memory.stores.lancedb import LanceIndex
from memory.stores.sqlite import SQLiteStore
from memory.types import IndexItem, ItemKind

from bot.bench.pool import TextPool

log = logging.getLogger(__name__)


def _ts(value: datetime) -> str:
    """A time as the SQLite store keeps it: UTC ISO-8601 text with microseconds (the rows are
    written as they are stored, past the ports)."""
    return value.astimezone(timezone.utc).isoformat(timespec="microseconds")

PLATFORM = "bench"
ROUNDS_PER_SESSION = 10
INDEX_BATCH = 5000
SQL_BATCH = 20000


@dataclass(frozen=True)
class SeedPlan:
    """How many rows of what: ``facts`` and ``rounds`` over ``users`` with the skew."""

    facts: int
    users: int = 1000
    rounds: int | None = None  # default: as many as facts
    largest_share: float = 0.05

    @property
    def round_count(self) -> int:
        return self.facts if self.rounds is None else self.rounds


def skewed_counts(total: int, users: int, largest_share: float) -> list[int]:
    """Split ``total`` over ``users``: the first gets ``largest_share``, the rest by
    ``1 / rank**0.8``. Returns one count per user (sums to ``total``)."""
    if users <= 0:
        return []
    first = min(total, max(1, round(total * largest_share))) if total else 0
    rest = total - first
    weights = [1.0 / (rank ** 0.8) for rank in range(2, users + 1)]
    norm = sum(weights) or 1.0
    counts = [first] + [int(rest * w / norm) for w in weights]
    short = total - sum(counts)
    i = 1
    while short > 0 and users > 1:  # hand the remainder out, smallest users first
        counts[users - i] += 1
        short -= 1
        i = i + 1 if i < users - 1 else 1
    if users == 1:
        counts[0] = total
    return counts


def user_key(i: int) -> str:
    """The platform user id of seeded user ``i`` (1-based; 1 is the largest)."""
    return f"u{i}"


async def seed(folder: Path, plan: SeedPlan, pools: dict[str, tuple[str, int, TextPool]],
               *, now: datetime | None = None,
               postgres_urls: Mapping[str, Collection[str]] | None = None) -> dict:
    """Seed ``folder`` (``memory.db`` and ``lancedb/``) per ``plan``, and the PostgreSQL
    store and index of each of ``postgres_urls`` with the same rows.

    Args:
        folder: an empty data folder.
        plan: sizes.
        pools: per embedder: ``(embedder name, dim, pool)``; one index table is written for
            each (the app opens the table of its embedder).
        now: the newest timestamp (default: now, UTC); rows spread over the 90 days before.
        postgres_urls: database URL -> keys of ``pools``: the URL's (empty) schema, named by
            its ``search_path``, gets a copy of the SQLite store
            (:func:`memory.stores.postgres.sqlite_copy.copy_sqlite`, as ``memory-bot
            migrate-to-postgres`` copies) and a :class:`PgSearchIndex` table for each of those
            pools, with the same rows as the LanceDB tables.

    Returns:
        Counts and the seconds each part took (``postgres_s``: per URL, store and index).
    """
    now = now or datetime.now(timezone.utc)
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    store = await SQLiteStore.open(folder / "memory.db")
    facts_per_user = skewed_counts(plan.facts, plan.users, plan.largest_share)
    rounds_per_user = skewed_counts(plan.round_count, plan.users, plan.largest_share)
    span = timedelta(days=90)
    created = _ts(now - span)
    try:
        await store.insert_many("users", ("id", "display_name", "created_at"),
                                ((u, f"User {u}", created) for u in range(1, plan.users + 1)))
        await store.insert_many("accounts", ("platform", "platform_user_id", "user_id"),
                                ((PLATFORM, user_key(u), u) for u in range(1, plan.users + 1)))
        await store.insert_many(
            "threads", ("id", "platform", "chat_id", "topic_id", "chat_kind", "created_at"),
            ((u, PLATFORM, user_key(u), "", "private", created) for u in range(1, plan.users + 1)))
        fact_rows, index_specs = [], []
        fid = 0
        for u, count in enumerate(facts_per_user, start=1):
            for _ in range(count):
                fid += 1
                text, _, _ = pools_first(pools).fact(fid)
                at = _ts(now - span * (1 - fid / max(1, plan.facts)))
                fact_rows.append((fid, u, "note", text, "active", at, at, at, u, "private", "[]",
                                  "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en",
                                  f"user:{u}", "explicit"))
                index_specs.append((ItemKind.FACT, fid, str(u), f"user:{u}", fid - 1, at))
        for start in range(0, len(fact_rows), SQL_BATCH):
            await store.insert_many(
                "facts", ("id", "user_id", "kind", "text", "status", "created_at", "valid_from",
                          "last_confirmed_at", "origin_thread_id", "origin_kind",
                          "source_turn_ids", "lang", "scope", "mode"),
                fact_rows[start:start + SQL_BATCH])
        del fact_rows
        sessions, turns, rounds, episodes = [], [], [], []
        sid = tid = rid = eid = 0
        for u, count in enumerate(rounds_per_user, start=1):
            for first in range(0, count, ROUNDS_PER_SESSION):
                sid += 1
                n = min(ROUNDS_PER_SESSION, count - first)
                session_turns = []
                for _ in range(n):
                    rid += 1
                    text, _, _ = pools_first(pools).exchange(rid)
                    at_dt = now - span * (1 - rid / max(1, plan.round_count))
                    at = _ts(at_dt)
                    user_line, _, reply = text.partition("\n")
                    turns.append((tid + 1, u, sid, u, "user", f"User {u}",
                                  user_line.removeprefix("User: "), at))
                    turns.append((tid + 2, u, sid, None, "assistant", "Assistant",
                                  reply.removeprefix("Assistant: "), at))
                    pair = [tid + 1, tid + 2]
                    tid += 2
                    session_turns += pair
                    rounds.append((rid, u, sid, f"user:{u}", json.dumps(pair), text, at))
                    index_specs.append((ItemKind.ROUND, rid, "", f"user:{u}", rid, at))
                started_at, ended_at = turns[-2 * n][7], turns[-1][7]
                sessions.append((sid, u, started_at, ended_at, ended_at, "idle"))
                eid += 1
                summary = pools_first(pools).fact(eid * 7)[0]
                episodes.append((eid, u, sid, f"user:{u}", f"The user talked about: {summary}",
                                 "[]", json.dumps(session_turns), started_at, ended_at, ended_at))
                index_specs.append((ItemKind.EPISODE, eid, "", f"user:{u}", eid * 7, ended_at))
        for table, columns, rows in (
            ("sessions", ("id", "thread_id", "started_at", "last_turn_at", "closed_at",
                          "close_reason"), sessions),
            ("turns", ("id", "thread_id", "session_id", "user_id", "role", "speaker", "text",
                       "created_at"), turns),
            ("rounds", ("id", "thread_id", "session_id", "scope", "turn_ids", "text",
                        "created_at"), rounds),
            ("episodes", ("id", "thread_id", "session_id", "scope", "summary", "key_data",
                          "turn_ids", "started_at", "ended_at", "created_at"), episodes),
        ):
            for start in range(0, len(rows), SQL_BATCH):
                await store.insert_many(table, columns, rows[start:start + SQL_BATCH])
        counts = {"facts": plan.facts, "rounds": rid, "episodes": eid, "sessions": sid,
                  "turns": tid, "users": plan.users}
        del sessions, turns, rounds, episodes
    finally:
        await store.close()
    sqlite_s = time.perf_counter() - started
    index_s = {}
    for key, (name, dim, pool) in pools.items():
        t0 = time.perf_counter()
        index = await LanceIndex.open(folder / "lancedb", embedder_name=name, dim=dim)
        await _fill_index(index, pool, index_specs)
        index_s[key] = round(time.perf_counter() - t0, 2)
    postgres_s = [await _seed_postgres(url, folder / "memory.db", [pools[k] for k in keys],
                                       index_specs)
                  for url, keys in (postgres_urls or {}).items()]
    log.info("bench seeded folder=%s counts=%s sqlite_s=%.1f index_s=%s postgres_s=%s", folder,
             counts, sqlite_s, index_s, postgres_s)
    return {**counts, "sqlite_s": round(sqlite_s, 2), "index_s": index_s,
            **({"postgres_s": postgres_s} if postgres_urls else {})}


async def _seed_postgres(url: str, database: Path, pools: list[tuple[str, int, TextPool]],
                         index_specs: list) -> float:
    """Copy the seeded SQLite store into the PostgreSQL store of ``url`` and write its index
    tables (one per pool, compacted as the LanceDB tables are); returns the seconds taken."""
    from memory.stores.postgres import PgSearchIndex, PostgresStore
    from memory.stores.postgres.sqlite_copy import copy_sqlite

    started = time.perf_counter()
    store = await PostgresStore.open(url)
    try:
        await copy_sqlite(database, store.db)
        await store.optimize()
    finally:
        await store.close()
    for name, dim, pool in pools:
        index = await PgSearchIndex.open(url, embedder_name=name, dim=dim)
        await _fill_index(index, pool, index_specs)
    return round(time.perf_counter() - started, 2)


async def _fill_index(index, pool: TextPool, index_specs: list) -> None:
    """Write the seeded rows into ``index`` (LanceDB or PostgreSQL) in batches of
    :data:`INDEX_BATCH`, compact it, and close it."""
    try:
        for start in range(0, len(index_specs), INDEX_BATCH):
            await index.upsert([_item(pool, spec) for spec in
                                index_specs[start:start + INDEX_BATCH]])
        await index.compact()
    finally:
        await index.close()


def pools_first(pools: dict[str, tuple[str, int, TextPool]]) -> TextPool:
    """The pool whose texts go into SQLite (every pool holds the same texts)."""
    return next(iter(pools.values()))[2]


def _item(pool: TextPool, spec) -> IndexItem:
    kind, item_id, owner, scope, text_no, at = spec
    if kind is ItemKind.ROUND:
        text, vector, search = pool.exchange(text_no)
    else:
        text, vector, search = pool.fact(text_no + 1 if kind is ItemKind.FACT else text_no)
        if kind is ItemKind.EPISODE:
            text = f"The user talked about: {text}"
    return IndexItem(key=f"{kind.value}:{item_id}", kind=kind, item_id=item_id, owner=owner,
                     scope=scope, status="active", text=text, search_text=search,
                     vector=vector, created_at=datetime.fromisoformat(at))
