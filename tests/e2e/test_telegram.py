"""The Telegram adapter end to end: the real python-telegram-bot ``Application`` (through
``.base_url``) against a fake Bot API on 127.0.0.1, with the real app (SQLite + LanceDB in a
temporary folder, hashing embedder) and the offline model or a scripted one. Assertions are on
the recorded API calls and on the stores."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import deque

import aiohttp
import pytest

from adapters.embedders import HashingEmbedder
from adapters.models import OfflineChatModel
from adapters.telegram import TelegramAdapter, TelegramConfig
from bot.app import build_app
from bot.command_table import COMMAND_TABLE
from bot.commands import COMMANDS
from bot.runner import AdapterStarter, run_platforms
from bot.settings import Settings
from i18n import say
from memory import streaming
from memory.types import FactStatus, ModelReply
from tests.e2e.fakes.telegram import FakeTelegram, visible_html

ALICE = FakeTelegram.user(11, "Alice")
BOB = FakeTelegram.user(22, "Bob")
GROUP = -1001
PRIVACY_NOTE = say("en", "telegram.privacy_note")
MEDIA_REPLY = say("en", "telegram.media_reply")
SORRY = say("en", "platform.sorry")


class Scripted(OfflineChatModel):
    """The offline model (it shows what was recalled), or scripted answers when queued;
    records every prompt."""

    name = "scripted"
    answer_from_memory = None  # it stands for a language model: every prompt goes to complete()

    def __init__(self) -> None:
        self.answers: deque = deque()
        self.prompts: list[tuple[str, list]] = []
        self.stream: list[str] = []  # texts so far to report before the next answer
        self.after_report = None  # awaited with the number of reports made

    async def complete(self, *, system, messages, max_tokens):
        self.prompts.append((system, list(messages)))
        for n, text in enumerate(self.stream, 1):
            streaming.report(text)
            await self.after_report(n)
        self.stream = []
        if self.answers:
            answer = self.answers.popleft()
            if isinstance(answer, Exception):
                raise answer
            return ModelReply(text=answer, model=self.name, stop_reason="end_turn")
        return await super().complete(system=system, messages=messages, max_tokens=max_tokens)


class Env:
    def __init__(self, fake: FakeTelegram, app, adapter: TelegramAdapter, model: Scripted,
                 sleeps: list[float]) -> None:
        self.fake, self.app, self.adapter, self.model, self.sleeps = fake, app, adapter, model, sleeps

    async def send(self, *updates: dict) -> None:
        """Deliver updates and wait until they are fully handled."""
        self.fake.push(*updates)
        await self.fake.taken(*updates)
        await self.adapter.drain()

    async def user(self, tg_user: dict):
        return await self.app.store.identities.find_user("telegram", str(tg_user["id"]))

    async def facts(self, tg_user: dict, *statuses: FactStatus):
        user = await self.user(tg_user)
        return await self.app.store.facts.list_facts(user.id, statuses or [FactStatus.ACTIVE])


@pytest.fixture(autouse=True)
def _ptb_timedelta(monkeypatch):
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # as bot/runner.py opts in


@contextlib.asynccontextmanager
async def telegram_env(tmp_path, *, fake: FakeTelegram | None = None, **config):
    fake = await (fake or FakeTelegram()).start()
    model = Scripted()
    app = await build_app(Settings(data_dir=tmp_path / "data", embedder="hashing"),
                          embedder=HashingEmbedder(), model=model)
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    adapter = TelegramAdapter(app.engine, TelegramConfig(token=fake.token, base_url=fake.base_url,
                                                         **config),
                              marks=app.store.deliveries, sleep=sleep)
    try:
        await app.start()
        await adapter.start()
        yield Env(fake, app, adapter, model, sleeps)
    finally:
        await adapter.stop()
        await app.aclose()
        await fake.close()


@pytest.fixture
async def env(tmp_path):
    async with telegram_env(tmp_path) as e:
        yield e


# --------------------------------------------------------------------------- start-up, private


async def test_startup_registers_the_menu_and_explains_privacy_mode(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="adapters.telegram")
    async with telegram_env(tmp_path) as env:
        await env.fake.wait_for(lambda: env.fake.of("getUpdates"))
        methods = [c.method for c in env.fake.calls]
        assert methods[:5] == ["getMe", "setMyCommands", "setMyCommands", "deleteWebhook",
                               "getUpdates"]
        commands = env.fake.of("setMyCommands")[0].params["commands"]
        assert [c["command"] for c in commands] == list(COMMAND_TABLE.names())
        assert set(COMMAND_TABLE.names()) == set(COMMANDS)
        assert "privacy mode is on" in caplog.text
        await env.send(env.fake.private(ALICE, "/start"))
        assert env.fake.sent(11)[-1] == PRIVACY_NOTE
        assert "remembers you" in env.fake.sent(11)[0]


async def test_privacy_note_is_left_out_when_the_bot_reads_all_group_messages(tmp_path):
    fake = FakeTelegram(can_read_all_group_messages=True)
    async with telegram_env(tmp_path, fake=fake) as env:
        await env.send(env.fake.private(ALICE, "/start"))
        assert PRIVACY_NOTE not in env.fake.sent(11)


async def test_first_session_is_recalled_after_four_unrelated_ones(env):
    fake = env.fake
    first = ("I'm a quant developer, I mainly use Python, and I'm choosing a vector database "
             "these days.")
    lines = [first, "/new", "What's a good recipe for pancakes?", "/new",
             "How do I fix a flat bike tyre?", "/new", "Recommend a science fiction novel",
             "/new", "What's the capital of Australia?", "/new",
             "Let's continue with the vector database: where did we say to start?"]
    for line in lines:
        await env.send(fake.private(ALICE, line))
    before = len(fake.sent(11))
    await env.send(fake.private(ALICE, "/why"))
    why = fake.sent(11)[before]
    first_session = [line for line in why.splitlines() if "(session 1)" in line]
    assert first_session and "vector database" in first_session[0], why
    assert all("message_thread_id" not in m for m in fake.sent_messages())
    assert fake.of("sendChatAction")  # "typing..." while working
    assert fake.of("sendChatAction")[0].params["action"] == "typing"


async def test_media_without_caption_gets_one_short_reply_and_captions_count(env):
    fake = env.fake
    await env.send(fake.private(ALICE, None, media="sticker"))
    assert fake.sent(11) == [MEDIA_REPLY]
    await env.send(fake.private(ALICE, None, media="photo",
                                caption="remember that I live in Graz"))
    assert fake.sent(11)[1] == "Noted: The user lives in Graz"
    await env.send(fake.group(GROUP, "Team", ALICE, None, media="voice"))
    assert fake.sent(GROUP) == []


async def test_other_bots_are_ignored(env):
    robot = FakeTelegram.user(99, "Robo", is_bot=True)
    await env.send(env.fake.private(robot, "hello"), env.fake.group(GROUP, "Team", robot,
                                                                      "@memo_test_bot hi"))
    assert env.fake.sent() == []
    assert await env.user(robot) is None


# --------------------------------------------------------------------------- groups and topics


async def test_group_is_silent_unless_addressed_and_private_facts_stay_private(env):
    fake, model = env.fake, env.model
    await env.send(fake.private(ALICE, "remember that I am allergic to peanuts"),
                   fake.private(ALICE, "remember that my secret project is called Falcon"))
    assert len(await env.facts(ALICE)) == 2
    unaddressed = [fake.group(GROUP, "Team", ALICE, "remember that I live in Paris"),
                   fake.group(GROUP, "Team", BOB, "lunch at noon?"),
                   fake.group(GROUP, "Team", BOB, "/help@some_other_bot")]
    await env.send(*unaddressed)
    assert fake.sent(GROUP) == []
    assert [f.text for f in await env.facts(ALICE)] == [
        "The user is allergic to peanuts", "The user's secret project is called Falcon"]
    ask_b = fake.group(GROUP, "Team", BOB, "@memo_test_bot what is Alice allergic to? "
                                            "what is her project Falcon?")
    await env.send(ask_b)
    replies = fake.sent_messages(GROUP)
    assert len(replies) == 1
    assert replies[0]["reply_parameters"]["message_id"] == ask_b["message"]["message_id"]
    system, messages = model.prompts[-1]
    assert "Alice: remember that I live in Paris" in messages[-1].content
    assert "Bob: lunch at noon?" in messages[-1].content
    assert messages[-1].content.endswith("Bob: what is Alice allergic to? what is her project "
                                         "Falcon?")
    bot_reply = {"message_id": 5000, "date": 0, "chat": fake.chats[GROUP],
                 "from": {"id": 777000, "is_bot": True, "first_name": "Memo"}, "text": "hi"}
    await env.send(fake.group(GROUP, "Team", ALICE, "what am I allergic to? my project?",
                              reply_to=bot_reply),
                   fake.group(GROUP, "Team", ALICE, "/memories all"))
    group_texts = fake.sent(GROUP)
    assert len(group_texts) == 3  # the reply, and the pointer to the private answer
    for text in group_texts:
        assert "peanut" not in text.lower() and "falcon" not in text.lower()
    for _, messages in model.prompts[-2:]:
        assert all("peanut" not in m.content for m in messages)
    assert "I sent you the answer to /memories in our private chat." in group_texts[-1]
    assert "peanuts" in fake.sent(11)[-1]  # /memories answered in private


async def test_group_memories_asks_for_a_private_chat_first(env):
    fake = env.fake
    fake.fail("sendMessage", 403, "Forbidden: bot can't initiate conversation with a user")
    await env.send(fake.group(GROUP, "Team", BOB, "/memories"))
    note = fake.sent(GROUP)[-1]
    assert "https://t.me/memo_test_bot" in note and "/memories" in note
    assert fake.sent(22) == []
    assert (await env.app.store.deliveries.blocked_accounts("telegram")) == set()


async def test_forum_topics_have_their_own_memory_and_replies_stay_in_their_topic(env):
    fake, model = env.fake, env.model
    forum = -1002
    await env.send(
        fake.group(forum, "Forum", ALICE, "@memo_test_bot we plan the Lisbon trip", topic=5,
                   forum=True),
        fake.group(forum, "Forum", BOB, "@memo_test_bot the build server is broken", topic=9,
                   forum=True),
        fake.group(forum, "Forum", ALICE, "@memo_test_bot good morning everyone", forum=True),
    )
    await env.send(fake.group(forum, "Forum", BOB, "@memo_test_bot where were we?", topic=5,
                              forum=True))
    topic5 = "\n".join(m.content for m in model.prompts[-1][1])
    assert "Lisbon" in topic5 and "build server" not in topic5 and "good morning" not in topic5
    by_topic = [m.get("message_thread_id") for m in fake.sent_messages(forum)]
    # one reply per message, each in its own topic (form fields arrive as text; different
    # threads are answered side by side, so their order is free)
    assert sorted(by_topic, key=str) == ["5", "5", "9", None]
    assert by_topic[-1] == "5"
    for call in fake.calls:
        if call.method in ("sendMessage", "sendChatAction"):
            assert call.params.get("message_thread_id") in (None, "5", "9")
    # a reply chain in an ordinary supergroup carries message_thread_id but is no topic
    chain = fake.group(GROUP, "Team", ALICE, "@memo_test_bot hi")
    chain["message"]["message_thread_id"] = 4242
    await env.send(chain)
    assert "message_thread_id" not in fake.sent_messages(GROUP)[-1]
    keys = await env.app.store.db.all("SELECT chat_id, topic_id FROM threads ORDER BY id")
    keys = [(r["chat_id"], r["topic_id"]) for r in keys]
    # the forum's three threads were created by messages handled side by side: any order
    assert sorted(keys[:3]) == [(str(forum), ""), (str(forum), "5"), (str(forum), "9")]
    assert keys[3:] == [(str(GROUP), "")]


# --------------------------------------------------------------------------- replies


async def test_long_reply_is_split_on_paragraphs_and_markup_characters_arrive_intact(env):
    fake, model = env.fake, env.model
    paragraphs = [f"Paragraph {n}: " + ("lorem ipsum " * 40).strip() for n in range(20)]
    long_text = "\n\n".join(paragraphs)
    assert len(long_text) > 9000
    tricky = "if a < b && c > d: print(*args, **kw) # a_b_c <b>not bold</b> &amp; 5 * 3_"
    model.answers.extend([long_text, tricky])
    await env.send(fake.private(ALICE, "tell me a long story"))
    parts = fake.sent(11)
    assert len(parts) == 3
    assert all(len(p) <= 4096 for p in parts)
    assert "\n\n".join(parts) == long_text
    assert all(p.startswith("Paragraph ") for p in parts)
    await env.send(fake.private(ALICE, "show me some code"))
    assert fake.sent(11)[-1] == tricky
    assert fake.sent_messages(11)[-1]["parse_mode"] == "HTML"


async def test_a_streamed_reply_is_previewed_then_replaced_by_the_final_text(tmp_path):
    async with telegram_env(tmp_path, edit_interval_s=0.0) as env:
        fake, model = env.fake, env.model

        def previews() -> list[str]:
            return [c.params["text"] for c in fake.calls if c.status == 200 and c.method in (
                "sendMessage", "editMessageText")]

        async def shown(n: int) -> None:  # the model writes on once the preview caught up
            await fake.wait_for(lambda: len(previews()) >= n)

        model.after_report = shown
        model.stream = ["Graz is", "Graz is a city in Austria, <b>"]
        final = "Graz is a city in Austria, <b> & the capital of Styria."
        model.answers.append(final)
        await env.send(fake.private(ALICE, "tell me about Graz"))
        assert previews()[:2] == ["Graz is …", "Graz is a city in Austria, &lt;b&gt; …"]
        [sent] = [c for c in fake.of("sendMessage") if c.status == 200]
        assert sent.params["text"] == "Graz is …"  # one message: the preview became the reply
        edits = fake.of("editMessageText")
        assert {c.params["message_id"] for c in edits} == {str(sent.result["message_id"])}
        assert visible_html(edits[-1].params["text"]) == final


async def test_rejected_entities_fall_back_to_plain_text_and_retry_after_is_honoured(env):
    fake, model = env.fake, env.model
    model.answers.extend(["<b>fine</b> & dandy", "after the flood"])
    fake.fail("sendMessage", 400, "Bad Request: can't parse entities: unsupported start tag")
    await env.send(fake.private(ALICE, "hi"))
    last = fake.sent_messages(11)[-1]
    assert last["visible"] == "<b>fine</b> & dandy" and "parse_mode" not in last
    fake.fail("sendMessage", 429, "Too Many Requests: retry after 3", retry_after=3)
    await env.send(fake.private(ALICE, "again"))
    assert env.sleeps == [3.0]
    assert fake.sent(11)[-1] == "after the flood"
    assert [c.status for c in fake.of("sendMessage")][-2:] == [429, 200]


async def test_a_user_who_blocked_the_bot_is_marked_and_breaks_nothing(env):
    fake = env.fake
    fake.block(11)
    await env.send(fake.private(ALICE, "hello"), fake.private(BOB, "hello"))
    assert fake.sent(22) and fake.sent(11) == []
    assert await env.app.store.deliveries.blocked_accounts("telegram") == {"11"}
    assert SORRY not in fake.sent(22)
    fake.blocked.clear()
    await env.send(fake.private(ALICE, "I'm back"))
    assert fake.sent(11)
    assert await env.app.store.deliveries.blocked_accounts("telegram") == set()


async def test_a_redelivered_update_is_answered_once_also_after_a_restart(tmp_path):
    async with telegram_env(tmp_path) as env:
        update = env.fake.private(ALICE, "/help")
        await env.send(update)
        await env.send(update)
        assert len(env.fake.sent(11)) == 1
        await env.adapter.stop()
        await env.adapter.start()
        await env.send(update)
        assert len(env.fake.sent(11)) == 1


async def test_an_update_received_before_stop_is_still_answered(tmp_path, caplog):
    """SIGTERM while an update sits in PTB's queue: stop() lets PTB finish it, and its work
    must still find the application (it was an AssertionError in the error handler)."""
    from telegram import Update

    async with telegram_env(tmp_path) as env:
        app = env.adapter.application
        await app.update_queue.put(Update.de_json(env.fake.private(ALICE, "/help"), app.bot))
        with caplog.at_level(logging.ERROR):
            await env.adapter.stop()  # in the same tick: the update is handled while stopping
        assert len(env.fake.sent(11)) == 1
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


async def test_errors_reach_the_user_briefly_and_the_bot_keeps_running(env, caplog):
    env.model.answers.append(RuntimeError("boom"))
    with caplog.at_level(logging.ERROR, logger="adapters.telegram"):
        await env.send(env.fake.private(ALICE, "hello"))
    assert env.fake.sent(11)[-1] == SORRY
    assert "boom" in caplog.text
    await env.send(env.fake.private(ALICE, "hello again"))
    assert env.fake.sent(11)[-1].startswith("No language model is configured")


# --------------------------------------------------------------------------- edits and buttons


async def test_an_edited_message_changes_the_fact_it_stated(env):
    fake = env.fake
    update = fake.private(ALICE, "remember that I live in Graz")
    await env.send(update)
    [graz] = await env.facts(ALICE)
    await env.send(fake.edit(update, "remember that I live in Linz"))
    assert fake.sent(11)[-1] == ("Updated: The user lives in Linz "
                                 "(before: the user lives in Graz)")
    [linz] = await env.facts(ALICE)
    assert linz.text == "The user lives in Linz" and linz.id != graz.id
    # the old value came only from the edited text: it is deleted, not kept as history, and
    # so is the reply that quoted it
    assert await env.facts(ALICE, FactStatus.SUPERSEDED) == []
    user = await env.user(ALICE)
    session = await env.app.store.conversations.open_session(1)
    texts = [t.text for t in await env.app.store.conversations.session_turns(session.id)]
    assert "remember that I live in Linz" in texts and "remember that I live in Graz" not in texts
    assert not any("Graz" in t for t in texts)
    jazz = fake.private(ALICE, "remember that I like jazz")
    await env.send(jazz)
    await env.send(fake.edit(jazz, "what time is it?"))
    assert [f.text for f in await env.facts(ALICE)] == ["The user lives in Linz"]
    assert user is not None


async def test_forget_all_through_the_inline_confirm_button(env):
    fake = env.fake
    await env.send(fake.private(ALICE, "remember that I live in Graz"),
                   fake.private(BOB, "remember that I live in Rome"))
    await env.send(fake.private(ALICE, "/forget all"))
    question = fake.sent_messages(11)[-1]
    buttons = question["reply_markup"]["inline_keyboard"][0]
    assert [b["callback_data"] for b in buttons] == ["cf:y:11", "cf:n:11"]
    message = fake._message(11, question["visible"], message_id=900)
    await env.send(fake.press(ALICE, message, "cf:y:11"))
    assert fake.sent(11)[-1].startswith("Deleted everything I kept about you: 1 fact(s)")
    assert await env.facts(ALICE) == []
    assert len(await env.facts(BOB)) == 1
    assert fake.of("editMessageReplyMarkup")[-1].params["message_id"] in (900, "900")
    assert fake.of("answerCallbackQuery")
    await env.send(fake.press(ALICE, message, "cf:y:11"))
    assert fake.sent(11)[-1] == "That question has expired; nothing was changed."


async def test_someone_else_cannot_press_the_confirm_button_in_a_group(env):
    fake = env.fake
    await env.send(fake.group(GROUP, "Team", ALICE, "@memo_test_bot remember that I like tea"))
    await env.send(fake.group(GROUP, "Team", ALICE, "/forget all"))
    note = fake.sent_messages(GROUP)[-1]  # the question itself went to Alice's private chat
    assert note["visible"] == "I sent you the answer to /forget in our private chat."
    message = fake._message(GROUP, note["visible"], message_id=901)
    await env.send(fake.press(BOB, message, "cf:y:11"))  # forged button data in the group
    answer = fake.of("answerCallbackQuery")[-1].params
    assert "Only the person who asked" in answer["text"]
    assert len(await env.facts(ALICE)) == 1
    question = fake.sent_messages(11)[-1]
    assert question["reply_markup"]["inline_keyboard"][0][1]["callback_data"] == "cf:n:11"
    await env.send(fake.press(ALICE, fake._message(11, question["visible"], message_id=902),
                              "cf:n:11"))
    assert fake.sent(11)[-1].startswith("Cancelled: delete all 1 fact(s)")
    assert len(await env.facts(ALICE)) == 1


async def test_every_command_about_your_memory_answers_in_private_from_a_group(env):
    """/forget in all its forms (with its confirmation and buttons), /stats, /why, /memories
    and /export used in a group: the group sees only where the answer went, never a fact, a
    count or a listing; the private chat gets the answers and the confirmation."""
    fake = env.fake
    await env.send(fake.private(ALICE, "remember that my secret hobby is Quilting"),
                   fake.private(ALICE, "remember that I live in Graz"),
                   fake.group(GROUP, "Team", ALICE, "@memo_test_bot remember that I like tea"),
                   fake.group(GROUP, "Team", ALICE, "@memo_test_bot what do I like to drink?"))
    group_before = len(fake.sent(GROUP))
    await env.send(fake.group(GROUP, "Team", ALICE, "/forget Quilting"))
    listing = fake.sent(11)[-1]  # facts of both chats are numbered in the order they came
    number = re.match(r"Matching facts:\n(\d+)\. The user's secret hobby is Quilting\n",
                      listing).group(1)
    for command in ("/stats", "/why", "/memories", "/export", f"/forget {number}",
                    "/forget all"):
        await env.send(fake.group(GROUP, "Team", ALICE, command))
    in_group = fake.sent(GROUP)[group_before:]
    assert in_group == [f"I sent you the answer to /{c} in our private chat." for c in
                        ("forget", "stats", "why", "memories", "export", "forget", "forget")]
    private = fake.sent(11)
    assert any(t.startswith("Forgotten: The user's secret hobby is Quilting") for t in private)
    assert any("For my last reply I recalled" in t for t in private)  # /why of the group
    assert any(t.startswith("Your model usage") for t in private)
    question = fake.sent_messages(11)[-1]
    assert question["visible"].startswith("This will delete all 2 fact(s)")
    await env.send(fake.private(ALICE, "yes"))  # confirmed where it was asked
    assert fake.sent(11)[-1].startswith("Deleted everything I kept about you: 2 fact(s)")
    assert await env.facts(ALICE) == []
    assert len(fake.sent(GROUP)) == group_before + 7  # nothing more reached the group


async def test_a_group_command_about_memory_runs_only_when_the_private_chat_is_open(env):
    fake = env.fake
    await env.send(fake.group(GROUP, "Team", BOB, "@memo_test_bot remember that I like Marzipan"))
    fake.fail("sendChatAction", 403, "Forbidden: bot can't initiate conversation with a user")
    await env.send(fake.group(GROUP, "Team", BOB, "/forget 1"))
    note = fake.sent(GROUP)[-1]
    assert "nothing was shown or changed" in note and "https://t.me/memo_test_bot" in note
    assert "marzipan" not in note.lower()
    assert [f.text for f in await env.facts(BOB)] == ["The user likes Marzipan"]
    assert fake.sent(22) == []


async def test_memories_are_paginated_with_inline_buttons(env):
    fake = env.fake
    things = ["jazz", "tea", "chess", "rain", "trains", "maps", "kites", "cats", "figs",
              "owls", "jade", "wool"]
    await env.send(*[fake.private(ALICE, f"remember that my favourite word is {t}")
                     for t in things[:1]])
    await env.send(*[fake.private(ALICE, f"remember: I collect {t}") for t in things])
    facts = await env.facts(ALICE)
    assert len(facts) > 10
    await env.send(fake.private(ALICE, "/memories"))
    first = fake.sent_messages(11)[-1]
    assert first["visible"].startswith("1. ") and "(page 1 of 2)" in first["visible"]
    [[next_button]] = first["reply_markup"]["inline_keyboard"]
    assert next_button["callback_data"] == "mem:1:"
    message = fake._message(11, first["visible"], message_id=902)
    await env.send(fake.press(ALICE, message, "mem:1:"))
    edit = fake.of("editMessageText")[-1].params
    assert edit["message_id"] in (902, "902")
    assert "(page 2 of 2)" in edit["text"] and "11. " in edit["text"]
    assert edit["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "mem:0:"


async def test_page_buttons_are_refused_outside_private_chats(env):
    fake = env.fake
    await env.send(fake.group(GROUP, "Team", ALICE, "@memo_test_bot remember that I like tea"))
    message = fake._message(GROUP, "a group message", message_id=903)
    await env.send(fake.press(BOB, message, "mem:0:all"))
    assert not fake.of("editMessageText")
    assert "no longer works" in fake.of("answerCallbackQuery")[-1].params["text"]


# --------------------------------------------------------------------------- webhook, runner


async def test_a_refused_token_is_a_configuration_error(tmp_path):
    from memory.errors import ConfigError

    fake = await FakeTelegram().start()
    try:
        adapter = TelegramAdapter(None, TelegramConfig(token="999:wrong", base_url=fake.base_url),
                                  marks=None)
        with pytest.raises(ConfigError, match="TELEGRAM_BOT_TOKEN"):
            await adapter.start()
    finally:
        await fake.close()



async def test_webhook_mode_checks_the_secret_token(tmp_path):
    async with telegram_env(tmp_path, webhook_url="https://bot.example.org/tg-hook",
                            webhook_secret="s3cret", webhook_listen="127.0.0.1",
                            webhook_port=0) as env:
        fake = env.fake
        [hook] = fake.of("setWebhook")
        assert hook.params["url"] == "https://bot.example.org/tg-hook"
        assert hook.params["secret_token"] == "s3cret"
        assert not fake.of("getUpdates") and not fake.of("deleteWebhook")
        url = f"http://127.0.0.1:{env.adapter.webhook_port}/tg-hook"
        update = fake.private(ALICE, "/help")
        async with aiohttp.ClientSession() as http:
            async with http.post(url, json=update) as refused:
                assert refused.status == 403
            async with http.post(url, json=update,
                                 headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret"}) as ok:
                assert ok.status == 200
        await env.adapter.drain()
        assert len(fake.sent(11)) == 1 and "remembers you" in fake.sent(11)[0]


async def test_run_platforms_serves_telegram_until_stopped(tmp_path):
    fake = await FakeTelegram().start()
    try:
        settings = Settings(data_dir=tmp_path / "data", embedder="hashing",
                            telegram_bot_token=fake.token, telegram_api_base_url=fake.base_url)
        stop = asyncio.Event()
        run = asyncio.create_task(run_platforms(settings, stop=stop))
        fake.push(fake.private(ALICE, "remember that I live in Graz"))
        await fake.wait_for(lambda: len(fake.sent(11)) >= 2)
        stop.set()
        assert await run == 0
        assert fake.sent(11)[0] == "Noted: The user lives in Graz"
        assert not any(c.status >= 400 for c in fake.calls)
        assert await run_platforms(settings, starters=[AdapterStarter(
            "none", lambda s: False, None)]) == 2
    finally:
        await fake.close()


async def test_readiness_reports_failing_long_polls_until_one_works(env):
    """PTB's updater keeps running (and retrying) while getUpdates fails, so readiness follows
    the polls themselves (adapters.telegram.PollRequest): /readyz is 503 while no update can
    come in, and ready again after the next poll that works."""
    await env.fake.wait_for(lambda: env.fake.of("getUpdates"))
    assert env.adapter.readiness() is None
    env.fake.fail("getUpdates", 502, "Bad Gateway", times=3)
    await env.fake.wait_for(lambda: env.adapter.readiness() is not None)
    assert env.adapter.readiness() == "getUpdates failing (HTTP 502)"
    await env.fake.wait_for(lambda: not env.fake.failures["getUpdates"])  # all three answered
    await env.fake.wait_for(lambda: env.adapter.readiness() is None)
    polls = [c.status for c in env.fake.of("getUpdates")]
    assert polls.count(502) == 3 and polls[-1] == 200
    await env.send(env.fake.private(ALICE, "/start"))  # and updates come in again
    assert "remembers you" in env.fake.sent(11)[0]
