"""Bad input at the edges of the Telegram adapter: forged and malformed updates, commands for
other bots, time-zone names that are not zones, and sends that fail part way. The real
python-telegram-bot client against the fake Bot API, real SQLite + LanceDB."""

from __future__ import annotations

import logging

import aiohttp
import pytest

from tests.e2e.fakes.telegram import FakeTelegram
from tests.e2e.test_telegram import ALICE, BOB, telegram_env


@pytest.fixture(autouse=True)
def _ptb_timedelta(monkeypatch):
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # as bot/runner.py opts in


@pytest.fixture
async def env(tmp_path):
    async with telegram_env(tmp_path) as e:
        yield e


def _forged(fake: FakeTelegram, sender: dict, chat_owner: dict, text: str) -> dict:
    update = fake.private(chat_owner, text)
    update["message"]["from"] = sender
    return update


async def test_a_private_update_whose_sender_is_not_the_chat_is_refused(env):
    fake = env.fake
    await env.send(fake.private(ALICE, "remember that I live in Graz"))
    before_alice, before_bob = len(fake.sent(11)), len(fake.sent(22))
    # "from" Bob, "chat" Alice's private chat: answering would show Bob's data in Alice's chat
    await env.send(_forged(fake, BOB, ALICE, "/memories"),
                   _forged(fake, ALICE, BOB, "/memories"))
    assert len(fake.sent(11)) == before_alice and len(fake.sent(22)) == before_bob
    assert await env.user(BOB) is None  # nothing was stored for the forged sender either


async def test_a_webhook_body_that_is_not_an_update_is_refused_with_400(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="adapters.telegram")
    async with telegram_env(tmp_path, webhook_url="https://bot.example.org/tg-hook",
                            webhook_secret="s3cret", webhook_listen="127.0.0.1",
                            webhook_port=0) as env:
        url = f"http://127.0.0.1:{env.adapter.webhook_port}/tg-hook"
        headers = {"X-Telegram-Bot-Api-Secret-Token": "s3cret"}
        async with aiohttp.ClientSession() as http:
            for body in ([], "x", {"no": "update"}, 7):
                async with http.post(url, json=body, headers=headers) as answer:
                    assert answer.status == 400, body
            async with http.post(url, data=b"\xff{", headers=headers) as answer:
                assert answer.status == 400
    refused = [r for r in caplog.records if "webhook body refused" in r.getMessage()]
    assert len(refused) == 5 and not any(r.exc_info for r in refused)


async def test_timezone_names_that_are_no_zones_are_refused_plainly(env):
    fake = env.fake
    for name in ("x" * 5000, "localtime", "posixrules", "Factory", "../../etc/passwd"):
        await env.send(fake.private(ALICE, f"/timezone {name}"))
        assert "is not a time zone I know" in fake.sent(11)[-1], name
    assert (await env.user(ALICE)).timezone is None
    await env.send(fake.private(ALICE, "/timezone europe/vienna"))
    assert fake.sent(11)[-1].startswith("Time zone set to Europe/Vienna")


async def test_a_command_for_another_bot_is_answered_in_private_and_ignored_in_groups(env):
    fake = env.fake
    await env.send(fake.private(ALICE, "/memories@otherbot"))
    assert fake.sent(11) == ["You have no saved memories.\nEarlier conversations: 0 (see "
                             "/memories episodes)."]
    await env.send(fake.group(-1001, "Team", ALICE, "/memories@otherbot"))
    assert fake.sent(-1001) == []


async def test_every_part_of_a_reply_is_sent_when_one_part_fails(env):
    fake = env.fake
    env.model.answers.append("the second part")
    fake.fail("sendMessage", 500, "Internal Server Error", times=2)  # the first part, twice
    await env.send(fake.private(ALICE, "remember that I live in Graz"))
    sent = fake.sent(11)
    assert "the second part" in sent
    assert any("could not be delivered" in text for text in sent)
    assert not any(text.startswith("Noted:") for text in sent)  # that one part is missing
    # a part refused once is sent on the second try, once
    env.model.answers.append("all of it")
    fake.fail("sendMessage", 500, "Internal Server Error", times=1)
    await env.send(fake.private(ALICE, "and now?"))
    assert fake.sent(11)[-1] == "all of it" and fake.sent(11).count("all of it") == 1


async def test_a_failed_button_removal_never_blocks_the_confirmation(env):
    fake = env.fake
    await env.send(fake.private(ALICE, "remember that I live in Graz"))
    await env.send(fake.private(ALICE, "/forget all"))
    question = fake.sent_messages(11)[-1]
    message = fake._message(11, question["visible"], message_id=900)
    fake.fail("editMessageReplyMarkup", 500, "Internal Server Error", times=1)
    await env.send(fake.press(ALICE, message, "cf:y:11"))
    assert fake.sent(11)[-1].startswith("Deleted everything I kept about you: 1 fact(s)")
    assert await env.facts(ALICE) == []


async def test_a_lone_surrogate_in_an_update_is_replaced_and_the_message_kept(env):
    """JSON may carry ``\\ud800``, which no UTF-8 database column takes: the update is kept,
    stored and answered with U+FFFD instead, and the chat goes on."""
    fake = env.fake
    await env.send(fake.private(ALICE, "hello \ud800 x"))
    await env.send(fake.private(ALICE, "and the next one"))
    assert len(fake.sent(11)) == 2, fake.sent(11)
    user = await env.user(ALICE)
    texts = [t["text"] for t in (await env.app.store.privacy.user_rows(user.id))["turns"]
             if t["role"] == "user"]
    assert texts == ["hello \ufffd x", "and the next one"]
