"""Two bot processes on one PostgreSQL database, both taking the same bot's webhook updates
(a load balancer in front): an update delivered to both is recorded once and handled once,
a chat's updates that arrived while its lock was held elsewhere are handled in update-id
order, whatever order and worker they came in by, and a reply a dead worker left due is
answered by a live one, before the chat's next message. The real python-telegram-bot client
against the fake Bot API, the real PostgreSQL the tests start."""

from __future__ import annotations

import asyncio
import contextlib
import random
from datetime import datetime, timedelta, timezone
from urllib.parse import quote

import aiohttp
import pytest

from adapters.embedders import HashingEmbedder
from adapters.telegram import TelegramAdapter, TelegramConfig
from adapters.telegram._adapter import chat_lock_id
from bot.app import build_app
from bot.engine import _delivery_writes
from bot.settings import Settings
from memory.stores.postgres.locks import PgThreadLocks
from memory.types import ChatKind, IncomingMessage, Role, ThreadKey
from tests.e2e.fakes.telegram import FakeTelegram
from tests.e2e.test_telegram import ALICE, Scripted

pytestmark = pytest.mark.postgres

SECRET = "s3cret"


@pytest.fixture(autouse=True)
def _ptb_timedelta(monkeypatch):
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # as bot/runner.py opts in


@contextlib.asynccontextmanager
async def workers(tmp_path, pg_schema, n: int = 2, takeover_s: float = 5.0):
    url, schema = pg_schema
    settings = Settings(data_dir=tmp_path / "shared", embedder="hashing",
                        database_url=f"{url}&search_path={quote(schema + ',public')}")
    fake = await FakeTelegram().start()
    apps, adapters = [], []
    try:
        for _ in range(n):
            app = await build_app(settings, embedder=HashingEmbedder(), model=Scripted())
            apps.append(app)
            await app.start()
            adapter = TelegramAdapter(
                app.engine, TelegramConfig(token=fake.token, base_url=fake.base_url,
                                           webhook_url="https://bot.example.org/tg-hook",
                                           webhook_secret=SECRET, webhook_listen="127.0.0.1",
                                           webhook_port=0, takeover_interval_s=takeover_s),
                marks=app.store.deliveries, chat_locks=app.thread_locks.updates)
            adapters.append(adapter)
            await adapter.start()
        yield fake, apps, adapters
    finally:
        for adapter in adapters:
            await adapter.stop()
        for app in apps:
            await app.aclose()
        await fake.close()


async def _post(http: aiohttp.ClientSession, adapter: TelegramAdapter, update: dict) -> None:
    async with http.post(f"http://127.0.0.1:{adapter.webhook_port}/tg-hook", json=update,
                         headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}) as response:
        assert response.status == 200


async def _settle(adapters) -> None:
    for _ in range(2):  # a drain of one worker may leave work that another one's drain saw
        for adapter in adapters:
            await adapter.drain()


async def _user_texts(app) -> list[str]:
    thread = await app.store.identities.thread_for_key(
        ThreadKey("telegram", str(ALICE["id"])), ChatKind.PRIVATE, None,
        datetime.now(timezone.utc))
    session = await app.store.conversations.open_session(thread.id)
    return [t.text for t in await app.store.conversations.session_turns(session.id)
            if t.role is Role.USER]


async def test_updates_of_a_chat_held_elsewhere_are_handled_once_each_in_update_id_order(
        tmp_path, pg_schema, postgres_server):
    async with workers(tmp_path, pg_schema) as (fake, apps, adapters):
        updates = [fake.private(ALICE, f"message {n}") for n in range(8)]
        bot_id = adapters[0].me.id
        # a third party holds the chat (a worker busy with it) while the updates arrive,
        # each at both workers, in a shuffled order
        outside = await PgThreadLocks.open(postgres_server, name="updates",
                                           schema=pg_schema[1])
        deliveries = [(update, adapter) for update in updates for adapter in adapters]
        random.Random(7).shuffle(deliveries)
        try:
            async with outside.hold(chat_lock_id(bot_id, str(ALICE["id"]))):
                async with aiohttp.ClientSession() as http:
                    for update, adapter in deliveries:
                        await _post(http, adapter, update)
                marks = apps[0].store.deliveries
                assert all([await marks.update_state("telegram", f"{bot_id}:{u['update_id']}")
                            == "received" for u in updates])  # kept, none handled yet
                assert not fake.sent(ALICE["id"])
        finally:
            await outside.close()
        await _settle(adapters)
        assert await _user_texts(apps[1]) == [f"message {n}" for n in range(8)]
        assert len(fake.sent(ALICE["id"])) == 8  # one answer per message, none twice
        for update in updates:
            key = f"{bot_id}:{update['update_id']}"
            assert await apps[1].store.deliveries.update_state("telegram", key) == "handled"


async def test_a_redelivery_to_both_workers_at_once_is_answered_once(tmp_path, pg_schema):
    async with workers(tmp_path, pg_schema) as (fake, apps, adapters):
        async with aiohttp.ClientSession() as http:
            for n in range(4):
                update = fake.private(ALICE, f"message {n}")
                await asyncio.gather(*(_post(http, a, update) for a in adapters for _ in "ab"))
        await _settle(adapters)
        assert await _user_texts(apps[0]) == [f"message {n}" for n in range(4)]
        assert len(fake.sent(ALICE["id"])) == 4


async def _left_due_by_a_dead_worker(fake, app, adapter, text: str) -> dict:
    """What a worker killed between storing a message and answering it leaves: the update
    handled in the transaction of its user turn, the turn's reply due. Returns the update."""
    update = fake.private(ALICE, text)
    key = f"{adapter.me.id}:{update['update_id']}"
    await app.store.deliveries.receive_updates("telegram", [(key, "{}")],
                                               datetime.now(timezone.utc))
    msg = IncomingMessage(ThreadKey("telegram", str(ALICE["id"])), ChatKind.PRIVATE,
                          str(ALICE["id"]), "Alice", text,
                          datetime.now(timezone.utc) - timedelta(minutes=1),
                          platform_message_id=str(update["message"]["message_id"]),
                          update_key=key)
    ctx = await app.memory.context(msg)
    await app.memory.record_user_turn(ctx, text, at=msg.sent_at, speaker="Alice",
                                      platform_message_id=msg.platform_message_id,
                                      writes=_delivery_writes(msg))
    return update


async def _turns(app) -> list[tuple[str, str]]:
    thread = await app.store.identities.thread_for_key(
        ThreadKey("telegram", str(ALICE["id"])), ChatKind.PRIVATE, None,
        datetime.now(timezone.utc))
    session = await app.store.conversations.open_session(thread.id)
    return [(t.role.value, t.text) for t in
            await app.store.conversations.session_turns(session.id)]


async def test_a_reply_a_dead_worker_left_due_is_answered_before_the_chats_next_message(
        tmp_path, pg_schema):
    async with workers(tmp_path, pg_schema, n=1) as (fake, apps, adapters):
        await _left_due_by_a_dead_worker(fake, apps[0], adapters[0], "message 1")
        apps[0].engine.model.answers.extend(["answer 1", "answer 2"])
        async with aiohttp.ClientSession() as http:
            await _post(http, adapters[0], fake.private(ALICE, "message 2"))
        await _settle(adapters)
        assert await _turns(apps[0]) == [("user", "message 1"), ("assistant", "answer 1"),
                                          ("user", "message 2"), ("assistant", "answer 2")]
        assert fake.sent(ALICE["id"]) == ["answer 1", "answer 2"]
        assert not await apps[0].memory.due_messages("telegram")


async def test_a_live_worker_takes_over_a_reply_left_due_without_a_next_message(
        tmp_path, pg_schema):
    async with workers(tmp_path, pg_schema, n=1, takeover_s=0.1) as (fake, apps, adapters):
        await _left_due_by_a_dead_worker(fake, apps[0], adapters[0], "message 1")
        apps[0].engine.model.answers.append("answer 1")

        async def answered() -> None:
            while not fake.sent(ALICE["id"]):
                await asyncio.sleep(0.05)
        await asyncio.wait_for(answered(), 60)  # a hang guard only
        await _settle(adapters)
        assert await _turns(apps[0]) == [("user", "message 1"), ("assistant", "answer 1")]
        assert fake.sent(ALICE["id"]) == ["answer 1"]
        assert not await apps[0].memory.due_messages("telegram")
