"""The PostgreSQL store beyond the shared contract: two stores on one schema (two processes)
store a thread's turns one at a time in one session, create an account's user once and
complete a job exactly once; migrations run once and are recorded; driver failures are
StoreErrors. Real PostgreSQL (the server the tests start with pgserver)."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from memory.errors import StoreError
from memory.records import EpisodeDraft, WorkOutcome
from memory.stores.postgres import PostgresStore
from memory.stores.postgres.store_migrations import LATEST
from memory.types import ChatKind, Role, Scope, ThreadKey

from tests.contract.support import T0, at

pytestmark = pytest.mark.postgres


@pytest.fixture
async def two(pg_schema):
    """Two stores on the same schema, each with its own pool: two bot processes."""
    url, schema = pg_schema
    first = await PostgresStore.open(url, schema=schema)
    second = await PostgresStore.open(url, schema=schema)
    yield first, second
    await first.close()
    await second.close()


async def test_two_processes_create_an_accounts_user_once(two):
    users = await asyncio.gather(*(
        store.identities.user_for_account("telegram", "42", "Ada", T0)
        for store in two for _ in range(3)))
    assert len({u.id for u in users}) == 1
    assert await two[0].count_rows("users") == 1


async def test_turns_of_one_thread_from_two_processes_go_into_one_session_in_order(two):
    user = await two[0].identities.user_for_account("telegram", "42", "Ada", T0)
    thread = await two[0].identities.thread_for_key(ThreadKey("telegram", "42"),
                                                    ChatKind.PRIVATE, None, T0)

    async def say(store, n: int):
        return await store.conversations.add_turn(
            thread_id=thread.id, role=Role.USER, text=f"message {n}", at=at(n),
            user_id=user.id, platform_message_id=str(n % 10), fold_after=(5, 10_000, 1))

    results = await asyncio.gather(*(say(two[n % 2], n) for n in range(20)))
    created = [turn for turn, new in results if new]
    assert len(created) == 10  # platform message ids 0-9, each delivered twice
    for turn, new in results:
        if not new:  # a redelivery returns the turn stored first
            assert turn.id in {t.id for t in created}
    (session,) = {t.session_id for t, _ in results}
    stored = await two[1].conversations.session_turns(session)
    assert [t.id for t in stored] == sorted(t.id for t in created)
    assert len(await two[1].work.pending_work()) == 1  # one fold job, not one per process


async def test_a_job_completed_by_two_processes_at_once_is_done_once(two):
    user = await two[0].identities.user_for_account("telegram", "42", "Ada", T0)
    thread = await two[0].identities.thread_for_key(ThreadKey("telegram", "42"),
                                                    ChatKind.PRIVATE, None, T0)
    turn, _ = await two[0].conversations.add_turn(thread_id=thread.id, role=Role.USER,
                                                  text="I keep bees", at=at(1), user_id=user.id)
    await two[0].conversations.close_session(turn.session_id, at(2), "new")
    (job,) = await two[1].work.pending_work()
    outcome = WorkOutcome(session_id=turn.session_id, scope=Scope.private(user.id),
                          episode=EpisodeDraft(summary="Bees.", key_data=(),
                                               turn_ids=(turn.id,)),
                          rounds=(), started_at=at(1), ended_at=at(1), now=at(3))
    results = await asyncio.gather(*(store.work.complete_work(job.id, outcome)
                                     for store in two for _ in range(2)))
    assert sum(r.done for r in results) == 1
    assert await two[0].count_rows("episodes") == 1


async def test_migrations_run_once_and_are_recorded(pg_schema):
    url, schema = pg_schema
    stores = await asyncio.gather(*(PostgresStore.open(url, schema=schema) for _ in range(3)))
    for store in stores:
        await store.close()
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(f'SELECT version FROM "{schema}".memory_store_migrations')
    finally:
        await conn.close()
    assert [r["version"] for r in rows] == list(range(1, LATEST + 1))


async def test_a_scratch_store_drops_its_schema(postgres_server):
    store = await PostgresStore.open(postgres_server, scratch=True)
    await store.identities.user_for_account("console", "ada", "Ada", T0)
    await store.close()
    conn = await asyncpg.connect(postgres_server)
    try:
        assert not await conn.fetchval(
            "SELECT count(*) FROM pg_namespace WHERE nspname = $1", store.schema)
    finally:
        await conn.close()


async def test_driver_failures_are_store_errors_without_the_password(postgres_server, pg_schema):
    url, schema = pg_schema
    store = await PostgresStore.open(url, schema=schema)
    try:
        with pytest.raises(StoreError, match="PostgreSQL"):  # no such thread: a foreign key
            await store.conversations.add_turn(thread_id=999, role=Role.USER, text="hi",
                                               at=T0)
        assert await store.count_rows("turns") == 0
    finally:
        await store.close()
    with pytest.raises(StoreError) as refused:
        await PostgresStore.open("postgresql://bot:s3cret@127.0.0.1:9/none")
    assert "s3cret" not in str(refused.value)
