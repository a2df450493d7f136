"""Answers given after a restart speak the language the live answer would have: a kept
message keeps its language hint, one kept without it (an earlier version's) and a stored
message whose answer was never delivered take their server's preferred locale. The real
discord.py client against the fake Discord (``tests/e2e/fakes/discord.py``) on real SQLite."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from adapters.discord._normalise import Kept
from i18n import say
from memory.records import TurnWrites
from memory.types import ChatKind, IncomingMessage, ThreadKey
from tests.e2e.test_discord import ScriptedModel, running
from tests.e2e.waiting import until


def _kept(fake, author: dict, channel: int, *, guild: int | None, text: str,
          language: str | None, old_version: bool = False) -> tuple[str, str]:
    """The (key, payload) an earlier process kept for a message it never handled."""
    mid = str(fake.snowflake())
    kind = ChatKind.GROUP if guild is not None else ChatKind.PRIVATE
    msg = IncomingMessage(
        thread=ThreadKey("discord", str(channel)), chat_kind=kind, platform_user_id=author["id"],
        display_name=author["global_name"], text=text, sent_at=datetime.now(timezone.utc),
        platform_message_id=mid, update_key=f"{fake.bot['id']}:{mid}", language=language)
    payload = Kept(msg, channel, guild, int(author["id"])).payload()
    if old_version:  # kept before the hint was: no "lang" at all
        data = json.loads(payload)
        del data["lang"]
        payload = json.dumps(data)
    return msg.update_key, payload


async def test_answers_after_a_restart_keep_the_language_hint(tmp_path):
    general: dict = {}

    async def left_by_an_earlier_process(app, fake, people):
        guild = fake.guilds[0]
        channel = fake.channel(guild, "general")
        general["id"] = channel
        ana, ben = people["ana"], people["ben"]
        kept = [
            _kept(fake, ana, channel, guild=guild.id, text="/new", language=None,
                  old_version=True),
            _kept(fake, ben, fake.dm_channel(ben), guild=None, text="/new", language="zh-CN"),
            _kept(fake, ana, fake.dm_channel(ana), guild=None, text="/new", language=None,
                  old_version=True),
        ]
        await app.store.deliveries.receive_updates("discord", kept, datetime.now(timezone.utc))
        # ben's message in the server, stored two hours ago, its answer never delivered
        due = IncomingMessage(
            thread=ThreadKey("discord", str(channel)), chat_kind=ChatKind.GROUP,
            platform_user_id=ben["id"], display_name="Ben", text="👍",
            sent_at=datetime.now(timezone.utc) - timedelta(hours=2),
            platform_message_id=str(fake.snowflake()))
        ctx = await app.memory.context(due)
        await app.memory.record_user_turn(ctx, due.text, at=due.sent_at, speaker="Ben",
                                          platform_message_id=due.platform_message_id,
                                          writes=TurnWrites(reply_due=True))

    async with running(tmp_path, model=ScriptedModel(), locale="zh-CN",
                       before_start=left_by_an_earlier_process) as (env, people):
        await until(env.adapter.recovered.is_set)
        in_server = [m["content"] for m in env.fake.sent(general["id"])]
        # ana's /new closes the session holding ben's message: its summary is saved
        assert in_server == [say("zh", "engine.answer_lost", text="👍"),
                             say("zh", "new.saved")]
        assert [m["content"] for m in env.fake.sent(env.fake.dm_channel(people["ben"]))] == [
            say("zh", "new.nothing")]
        # a direct message has no server: without a kept hint it is English, as it was live
        assert [m["content"] for m in env.fake.sent(env.fake.dm_channel(people["ana"]))] == [
            say("en", "new.nothing")]
        # a new message in the server speaks the same language as the recovered ones
        replies = await env.say(people["ana"], "/new", where=general["id"], mention=True)
        assert [m["content"] for m in replies] == [say("zh", "new.nothing")]
