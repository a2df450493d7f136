"""A platform message delivered twice gets one reply and one set of facts: Discord
replays events after a gateway RESUME, Telegram redelivers an update whose offset was not
confirmed. Real clients against the fakes, real SQLite + LanceDB."""

from __future__ import annotations

import pytest

from memory.types import FactStatus
from tests.e2e.test_discord import ScriptedModel, one, running
from tests.e2e.test_telegram import ALICE, telegram_env
from tests.e2e.waiting import until


@pytest.fixture(autouse=True)
def _ptb_timedelta(monkeypatch):
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # as bot/runner.py opts in


async def test_discord_message_replayed_after_a_resume_is_answered_once(tmp_path):
    async with running(tmp_path, model=ScriptedModel()) as (env, people):
        ana, fake = people["ana"], env.fake
        dm = fake.dm_channel(ana)
        first = await fake.say(ana, "remember that I live in Graz")
        await until(lambda: env.adapter.counts["messages"] >= 1)
        await until(lambda: fake.sent(dm))
        assert one(fake.sent(dm))["content"].startswith("Noted: ")
        bye = await fake.say(ana, "bye")
        await until(lambda: env.adapter.counts["messages"] >= 2)
        await until(lambda: len(fake.sent(dm)) >= 2)
        await fake.drop_connection()  # the client resumes; Discord replays what it missed
        await until(lambda: fake.resumes)
        await until(lambda: env.handle.readiness() is None)
        for payload in (first, bye):
            await fake.dispatch("MESSAGE_CREATE", payload)
        await until(lambda: env.adapter.counts["messages"] >= 4)
        await env.app.memory.drain()
        assert len(fake.sent(dm)) == 2  # "Noted: ..." and "Bye for now! ..." once each
        facts = await env.facts(ana)
        assert [f.text for f in facts] == ["The user lives in Graz"]
        user = await env.user_id(ana)
        rows = await env.app.store.privacy.user_rows(user)
        texts = [t["text"] for t in rows["turns"] if t["role"] == "user"]
        assert texts.count("remember that I live in Graz") == 1


async def test_discord_duplicate_is_caught_at_store_time_when_the_adapter_forgot_it(tmp_path):
    """A replay the adapter's memory of recent ids no longer covers: the store's record of
    handled messages (and under it the unique turn index: thread, platform message id) stops
    it before any reply or fact."""
    async with running(tmp_path, model=ScriptedModel()) as (env, people):
        ana, fake = people["ana"], env.fake
        dm = fake.dm_channel(ana)
        first = await fake.say(ana, "remember that I live in Graz")
        await until(lambda: fake.sent(dm))
        env.adapter.forget_seen()
        await fake.dispatch("MESSAGE_CREATE", first)
        await until(lambda: env.adapter.counts["messages"] >= 2)
        assert len(fake.sent(dm)) == 1
        assert len(await env.facts(ana)) == 1


async def test_telegram_same_message_in_a_new_update_is_answered_once(tmp_path):
    """seen_updates catches a redelivered update id; a message arriving again under a new
    update id (e.g. after switching between webhook and polling) is caught by the turn."""
    async with telegram_env(tmp_path) as env:
        update = env.fake.private(ALICE, "remember that I live in Graz")
        await env.send(update)
        answered = env.fake.sent(11)
        assert answered[0].startswith("Noted: ")
        await env.send(update)  # same update id
        again = {"update_id": update["update_id"] + 1000, "message": update["message"]}
        await env.send(again)  # same message, new update id
        assert env.fake.sent(11) == answered
        assert len(await env.facts(ALICE, FactStatus.ACTIVE, FactStatus.SUPERSEDED)) == 1
