"""Telegram answers given after a restart speak the language the live answer would have: an
update kept before a stop is kept whole, so its author's ``language_code`` is the hint again.
The real python-telegram-bot client against the fake Bot API (``tests/e2e/fakes/telegram.py``)
on real SQLite."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from adapters.embedders import HashingEmbedder
from adapters.telegram import TelegramAdapter, TelegramConfig
from bot.app import build_app
from bot.settings import Settings
from i18n import say
from tests.e2e.fakes.telegram import FakeTelegram
from tests.e2e.test_telegram import Scripted


async def test_an_update_kept_before_a_stop_is_answered_with_its_authors_language(tmp_path):
    fake = await FakeTelegram().start()
    chinese = {**FakeTelegram.user(11, "Xiaoming"), "language_code": "zh-hans"}
    english = {**FakeTelegram.user(22, "Ben"), "language_code": "en"}
    kept = [fake.private(chinese, "/new"), fake.private(english, "/new")]
    app = await build_app(Settings(data_dir=tmp_path / "data", embedder="hashing"),
                          embedder=HashingEmbedder(), model=Scripted())
    adapter = TelegramAdapter(app.engine, TelegramConfig(token=fake.token, base_url=fake.base_url),
                              marks=app.store.deliveries)
    try:
        await app.start()
        # what a process stopped after receiving these updates left behind
        bot_id = fake.bot["id"]
        await app.store.deliveries.receive_updates(
            "telegram", [(f"{bot_id}:{u['update_id']}", json.dumps(u)) for u in kept],
            datetime.now(timezone.utc))
        await adapter.start()
        await fake.wait_for(lambda: fake.sent(11) and fake.sent(22))
        assert fake.sent(11) == [say("zh", "new.nothing")]
        assert fake.sent(22) == [say("en", "new.nothing")]
    finally:
        await adapter.stop()
        await app.aclose()
        await fake.close()
