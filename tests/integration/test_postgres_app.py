"""The bot with ``DATABASE_URL``: its store, its search index and its thread locks live in
PostgreSQL, several bots share one database (and a data folder), and a run in a work folder
(evaluation) gets a scratch schema that is dropped afterwards. Real SQLite, the real PostgreSQL the tests start, the offline
model."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from urllib.parse import quote

import asyncpg
import pytest

from adapters.embedders import HashingEmbedder
from bot.app import build_app
from bot.scheduler import SWEEP_JOB_ID, idle_job_id, sweep_job
from bot.settings import Settings
from memory.ports import ManualClock
from memory.stores.postgres import PgSearchIndex, PostgresStore
from memory.stores.postgres.locks import PgThreadLocks
from memory.types import ChatKind, FactStatus, IncomingMessage, ThreadKey

pytestmark = pytest.mark.postgres


def _msg(text: str, n: int) -> IncomingMessage:
    return IncomingMessage(ThreadKey("console", "ana"), ChatKind.PRIVATE, "ana", "Ana", text,
                           datetime.now(timezone.utc), platform_message_id=str(n))


def _url(pg_schema) -> str:
    url, schema = pg_schema  # the live tables of this test: the URL's search_path
    return f"{url}&search_path={quote(schema + ',public')}"


async def _schemas(url: str) -> set[str]:
    conn = await asyncpg.connect(url)
    try:
        return {r[0] for r in await conn.fetch("SELECT nspname FROM pg_namespace")}
    finally:
        await conn.close()


async def test_the_bot_recalls_through_the_postgresql_index(tmp_path, pg_schema):
    settings = Settings(data_dir=tmp_path / "data", embedder="hashing",
                        database_url=_url(pg_schema))
    app = await build_app(settings, embedder=HashingEmbedder())
    try:
        assert isinstance(app.index, PgSearchIndex) and app.index.schema == pg_schema[1]
        assert isinstance(app.store, PostgresStore) and app.store.schema == pg_schema[1]
        assert not (tmp_path / "data" / "memory.db").exists()
        # turns and consolidation jobs lock their thread in the database, not in this process
        assert isinstance(app.engine.locks, PgThreadLocks)
        assert isinstance(app.memory.runner.locks, PgThreadLocks)
        assert {app.engine.locks.name, app.memory.runner.locks.name} == {"turns", "work"}
        await app.engine.handle(_msg("Remember that I live in Graz", 1))
        assert any(k.startswith("fact:") for k in await app.index.keys())
        reply = " ".join(await app.engine.handle(_msg("Do I live in Graz or in Wien?", 2)))
        assert "lives in Graz" in reply
    finally:
        await app.aclose()
    # closed: the next bot on this database opens it, and its start-up reconcile keeps the
    # rows of the store
    again = await build_app(settings, embedder=HashingEmbedder())
    try:
        assert any(k.startswith("fact:") for k in await again.index.keys())
    finally:
        await again.aclose()


async def test_a_work_folder_run_uses_a_scratch_schema_dropped_afterwards(tmp_path, pg_schema):
    url = _url(pg_schema)
    before = await _schemas(pg_schema[0])
    settings = Settings(data_dir=tmp_path / "live", embedder="hashing", database_url=url)
    app = await build_app(settings, data_dir=tmp_path / "work", embedder=HashingEmbedder())
    try:
        scratch = app.index.schema
        assert app.store.schema.startswith("scratch_")
        assert scratch.startswith("scratch_") and scratch in await _schemas(pg_schema[0])
        await app.engine.handle(_msg("Remember that I live in Graz", 1))
        assert await app.index.keys()
    finally:
        await app.aclose()
    assert await _schemas(pg_schema[0]) == before  # dropped; the live schema untouched
    conn = await asyncpg.connect(pg_schema[0])
    try:
        assert not await conn.fetch("SELECT 1 FROM pg_tables WHERE schemaname = $1",
                                    pg_schema[1])
    finally:
        await conn.close()


async def test_two_bots_on_one_database_share_memory_and_take_turns(tmp_path, pg_schema):
    """Two bot processes on one database, sharing (or not having) a data folder: neither is
    refused, a fact one stores the other recalls, and messages of one chat sent to both at
    once are handled one at a time (each reply stored right after its message)."""
    settings = Settings(data_dir=tmp_path / "shared", embedder="hashing",
                        database_url=_url(pg_schema))
    first = await build_app(settings, embedder=HashingEmbedder())
    second = await build_app(settings, embedder=HashingEmbedder())
    try:
        await first.engine.handle(_msg("Remember that I live in Graz", 1))
        reply = " ".join(await second.engine.handle(_msg("Do I live in Graz or in Wien?", 2)))
        assert "lives in Graz" in reply
        await asyncio.gather(*(
            (first if n % 2 else second).engine.handle(_msg(f"What do you know about item {n}?", n))
            for n in range(3, 15)))
        thread = await first.store.identities.thread_for_key(
            ThreadKey("console", "ana"), ChatKind.PRIVATE, None, datetime.now(timezone.utc))
        session = await first.store.conversations.open_session(thread.id)
        roles = [t.role.value for t in await first.store.conversations.session_turns(session.id)]
        assert len(roles) == 2 * 14 and roles == ["user", "assistant"] * 14
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_forget_all_question_asked_by_one_bot_is_confirmed_by_a_yes_to_another(
        tmp_path, pg_schema):
    """The question of ``/forget all`` is kept in the database: the "yes" that reaches the
    other process deletes; a second "yes" (a redelivery to the first) finds nothing to confirm."""
    settings = Settings(data_dir=tmp_path / "shared", embedder="hashing",
                        database_url=_url(pg_schema))
    first = await build_app(settings, embedder=HashingEmbedder())
    second = await build_app(settings, embedder=HashingEmbedder())
    try:
        await first.engine.handle(_msg("Remember that my cat is called Quillvane", 1))
        [asked] = await first.engine.handle(_msg("/forget all", 2))
        assert "Reply yes to confirm" in asked
        assert await second.engine.pending_question(_msg("", 3)) is not None
        [done] = await second.engine.handle(_msg("yes", 3))
        assert done.startswith("Deleted everything I kept about you: 1 fact(s)"), done
        assert await first.engine.pending_question(_msg("", 4)) is None
        user = await first.store.identities.find_user("console", "ana")
        assert await first.store.facts.list_facts(user.id, list(FactStatus)) == []
        [again] = await first.engine.handle(_msg("yes", 4))
        assert not again.startswith("Deleted everything")
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_deadline_watched_by_a_process_that_died_is_kept_by_another(tmp_path, pg_schema):
    """Process B is running when process A takes a message and watches its idle deadline; A
    dies before it. B never watched that session, but its sweep finds it overdue in the
    database, closes it and writes its episode, once."""
    t0 = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)
    settings = Settings(data_dir=tmp_path / "shared", embedder="hashing",
                        database_url=_url(pg_schema), idle_timeout_seconds=600)
    b_clock = ManualClock(t0)
    second = await build_app(settings, embedder=HashingEmbedder(), clock=b_clock)
    await second.start()
    first = await build_app(settings, embedder=HashingEmbedder(), clock=ManualClock(t0))
    await first.start()
    try:
        msg = replace(_msg("Remember that I live in Graz", 1), sent_at=t0)
        await first.engine.handle(msg)
        thread = await first.store.identities.thread_for_key(msg.thread, ChatKind.PRIVATE, None, t0)
        session = await first.store.conversations.open_session(thread.id)
        assert first.scheduler.scheduler.get_job(idle_job_id(thread.id)) is not None
    finally:
        await first.aclose()  # its idle job goes with it; the session stays open
    try:
        assert second.scheduler.scheduler.get_job(idle_job_id(thread.id)) is None
        assert second.scheduler.scheduler.get_job(SWEEP_JOB_ID) is not None
        b_clock.set(t0 + timedelta(seconds=599))
        await sweep_job(second.scheduler)  # not yet due
        assert await second.store.conversations.open_session(thread.id) == session
        b_clock.set(t0 + timedelta(seconds=601))
        await sweep_job(second.scheduler)
        await sweep_job(second.scheduler)  # a second look finds nothing more to do
        assert await second.store.conversations.open_session(thread.id) is None
        episode = await second.store.episodes.session_episode(session.id)
        assert episode is not None and "Graz" in episode.summary
        assert await second.store.count_rows("episodes") == 1
        assert not await second.store.work.pending_work()
    finally:
        await second.aclose()


async def test_two_bots_on_one_database_run_the_days_maintenance_once(tmp_path, pg_schema):
    """Both processes' maintenance jobs fire the same day (at once): one runs it, the other
    finds the day claimed and skips it, and neither runs it again that day."""
    settings = Settings(data_dir=tmp_path / "shared", embedder="hashing",
                        database_url=_url(pg_schema))
    first = await build_app(settings, embedder=HashingEmbedder())
    second = await build_app(settings, embedder=HashingEmbedder())
    try:
        reports = await asyncio.gather(*(app.memory.run_daily_maintenance(
            expire_days=30, retention_days=0) for app in (first, second)))
        assert sum(r is not None for r in reports) == 1
        assert await first.memory.run_daily_maintenance(expire_days=30, retention_days=0) is None
        assert await second.memory.run_daily_maintenance(expire_days=30, retention_days=0) is None
    finally:
        await first.aclose()
        await second.aclose()
