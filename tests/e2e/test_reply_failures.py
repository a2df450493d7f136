"""What the user is told when a reply cannot be given: a stalled model is cut off by one
deadline for the whole reply (retries included) and the chat moves on; credentials the
provider refuses are a configuration error, logged once; a message that cannot be stored
(lone surrogates, a full or read-only database) is said so, with the reason in words. The
real app (SQLite + LanceDB), the real ``anthropic`` client against the fake model server."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone

from adapters.embedders import HashingEmbedder
from adapters.llm._retry import RetryPolicy
from adapters.llm.anthropic import AnthropicChatModel
from bot.app import build_app
from i18n import say
from bot.settings import Settings
from memory.types import ChatKind, IncomingMessage, Role, ThreadKey
from tests.e2e.fakes.llm import Answer, Fail, FakeLLMServer, Stall

GUARD_S = 30.0  # far above the 2 s deadline; the old per-attempt time-outs alone were 60 s


def _msg(text: str, n: int, name: str = "\u0061na") -> IncomingMessage:
    return IncomingMessage(ThreadKey("telegram", "5"), ChatKind.PRIVATE, "5", name, text,
                           datetime.now(timezone.utc), platform_message_id=str(n))


async def _app(tmp_path, model, **settings):
    return await build_app(Settings(data_dir=tmp_path / "data", embedder="hashing", **settings),
                           embedder=HashingEmbedder(), model=model)


async def test_a_stalled_model_is_cut_off_by_the_reply_deadline(tmp_path):
    llm = await FakeLLMServer().start()
    llm.push(*[Stall(120.0) for _ in range(4)], Answer("the next answer"))
    model = AnthropicChatModel(api_key="k", base_url=llm.anthropic_url, model="claude-haiku-4-5",
                               timeout=60.0, stream=False,
                               retry=RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.01))
    app = await _app(tmp_path, model, reply_timeout_seconds=2)
    try:
        first = asyncio.ensure_future(app.engine.handle(_msg("are you there?", 1)))
        second = asyncio.ensure_future(app.engine.handle(_msg("hello again", 2)))
        replies = await asyncio.wait_for(first, GUARD_S)
        assert replies == [say("en", "engine.model_down")]
        llm.script.clear()  # the model is back
        assert await asyncio.wait_for(second, GUARD_S) == ["ok"]
    finally:
        await app.aclose()
        await llm.close()


async def test_refused_credentials_are_a_configuration_error_logged_once(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    llm = await FakeLLMServer().start()
    llm.push(Fail(401, "authentication_error"), Fail(403, "permission_error"))
    model = AnthropicChatModel(api_key="wrong", base_url=llm.anthropic_url,
                               model="claude-haiku-4-5", stream=False,
                               retry=RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.01))
    app = await _app(tmp_path, model)
    try:
        assert await app.engine.handle(_msg("hi", 1)) == [say("en", "engine.misconfigured")]
        assert await app.engine.handle(_msg("hi?", 2)) == [say("en", "engine.misconfigured")]
        assert len(llm.requests) == 2  # not retried
    finally:
        await app.aclose()
        await llm.close()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "configuration error" in errors[0].getMessage()


async def test_lone_surrogates_are_replaced_and_the_message_is_kept(tmp_path):
    app = await _app(tmp_path, None)
    try:
        replies = await app.engine.handle(_msg("hello \udcff\udcfe x and \ud800", 1,
                                               name="An\ud800a"))
        assert replies and not any("Sorry" in r or "couldn't" in r for r in replies)
        user = await app.store.identities.find_user("telegram", "5")
        [turn] = [t for t in (await app.store.privacy.user_rows(user.id))["turns"]
                  if t["role"] == Role.USER.value]
        assert turn["text"] == "hello \ufffd\ufffd x and \ufffd"
        assert user.display_name == "An\ufffda"
    finally:
        await app.aclose()


async def test_a_full_or_read_only_database_is_told_honestly_and_logged_once(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    app = await _app(tmp_path, None)
    try:
        assert await app.engine.handle(_msg("first message", 1))
        conn = app.store.db  # the real database's limits: no more pages / no writes
        pages = (await conn.one("PRAGMA page_count"))[0]
        await conn.execute(f"PRAGMA max_page_count = {pages}")
        big = "a long message that needs new pages " * 400
        [reply] = await app.engine.handle(_msg(big, 2))
        assert reply.startswith("I couldn't save your message: the storage is full.")
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and not errors[0].exc_info, errors
        await conn.execute("PRAGMA max_page_count = 1073741823")
        await conn.execute("PRAGMA query_only = ON")
        [reply] = await app.engine.handle(_msg("another one", 3))
        assert reply.startswith("I couldn't save your message: the storage is read-only.")
        await conn.execute("PRAGMA query_only = OFF")
        user = await app.store.identities.find_user("telegram", "5")
        texts = [t["text"] for t in (await app.store.privacy.user_rows(user.id))["turns"]
                 if t["role"] == Role.USER.value]
        assert texts == ["first message"]  # what was refused is not claimed to be kept
    finally:
        await app.aclose()
