"""The Discord adapter end to end: the real discord.py client, started by ``start_discord``
with the real app (SQLite + LanceDB in a temporary folder, hashing embedder), against a fake
Discord on 127.0.0.1 (``tests/e2e/fakes/discord.py``). Assertions are on the REST calls the
fake recorded and on the stores; waits poll with a generous time-out that only guards against
a hung test."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import deque

from adapters.discord import MESSAGE_LIMIT, start_discord
from adapters.discord._adapter import CONTENT_INTENT_MISSING
from adapters.embedders import HashingEmbedder
from adapters.llm import AnthropicChatModel, RetryPolicy
from bot.app import build_app
from bot.settings import load_settings
from i18n import say
from memory import streaming
from memory.types import ChatKind, FactStatus, IncomingMessage, ModelReply, ThreadKey
from tests.e2e.fakes.discord import EPHEMERAL, FakeDiscord
from tests.e2e.fakes.llm import Answer, FakeLLMServer
from tests.e2e.waiting import WAIT_S, until

FAILED = say("en", "platform.sorry")
NOT_ALLOWED = say("en", "discord.not_allowed")
NO_CONTENT_HINT = say("en", "discord.no_content")

class ScriptedModel:
    """A chat model that records what it is asked and answers from a script (default
    ``ok N``); ``gate`` holds a call until set; ``stream_steps`` reports partial replies."""

    name = "scripted"

    def __init__(self) -> None:
        self.calls: list[tuple[str, list]] = []
        self.script: deque = deque()
        self.gate: asyncio.Event | None = None
        self.waiting = asyncio.Event()

    async def complete(self, *, system, messages, max_tokens) -> ModelReply:
        self.calls.append((system, list(messages)))
        if self.gate is not None:
            self.waiting.set()
            await self.gate.wait()
        step = self.script.popleft() if self.script else f"ok {len(self.calls)}"
        if isinstance(step, Exception):
            raise step
        return ModelReply(text=step, model=self.name, stop_reason="end_turn")

    def prompt_text(self, n: int = -1) -> str:
        system, messages = self.calls[n]
        return system + "\n" + "\n".join(m.content for m in messages)


class Env:
    """The fake Discord, the app and the running adapter, with helpers to act as users."""

    def __init__(self, fake: FakeDiscord, app, handle, model) -> None:
        self.fake = fake
        self.app = app
        self.handle = handle
        self.adapter = handle.adapter
        self.model = model
        self.guild = fake.guilds[0]
        self.general = fake.channel(self.guild, "general")

    async def say(self, author: dict, text: str, *, where: int | None = None,
                  mention: bool = False, **kw) -> list[dict]:
        """Send a message (DM when ``where`` is None) and wait until the adapter handled it;
        return the bot's messages in that channel that are new since."""
        channel = where or self.fake.dm_channel(author)
        before = {m["id"] for m in self.fake.sent(channel)}
        done = self.adapter.counts["messages"]
        if mention:
            text = f"<@{self.fake.bot['id']}> {text}"
            kw.setdefault("mentions", [self.fake.bot])
        guild = self.guild if where is not None else None
        await self.fake.say(author, text, guild=guild, channel_id=channel, **kw)
        await until(lambda: self.adapter.counts["messages"] > done)
        return [m for m in self.fake.sent(channel) if m["id"] not in before]

    async def slash(self, author: dict, name: str, options: dict | None = None, *,
                    where: int | None = None) -> str:
        done = self.adapter.counts["commands"]
        token = await self.fake.slash(author, name, options, guild=self.guild if where else None,
                                      channel_id=where)
        await until(lambda: self.adapter.counts["commands"] > done)
        return token

    async def user_id(self, author: dict) -> int:
        user = await self.app.store.identities.find_user("discord", author["id"])
        return user.id

    async def facts(self, author: dict) -> list:
        return await self.app.memory.facts_for(await self.user_id(author))

    async def thread_turns(self, key: ThreadKey, kind: ChatKind = ChatKind.GROUP) -> list[str]:
        msg = IncomingMessage(thread=key, chat_kind=kind, platform_user_id="0",
                              display_name="probe", text="", sent_at=self.app.memory.clock.now())
        ctx = await self.app.memory.context(msg)
        return [t.text for t in await self.app.memory.working_memory(ctx)]


@contextlib.asynccontextmanager
async def running(tmp_path, *, model=None, env: dict | None = None, message_content: bool = True,
                  content_flag: bool | None = None,
                  users: tuple[str, ...] = ("ana", "ben"), edit_interval: float = 3600.0,
                  threads=(("topic-a", "general", False), ("topic-b", "general", False),
                           ("bot-thread", "general", True)), locale: str = "en-US",
                  before_start=None):
    """The fake Discord with one server ("Lab", preferred ``locale``) and the app running the
    real client against it; ``before_start(app, fake, people)`` runs once the app is started,
    before the client connects (what an earlier process left in the store)."""
    fake = FakeDiscord(message_content=message_content, content_flag=content_flag)
    fake.add_guild("Lab", ["general", "random"], threads=list(threads), locale=locale)
    people = {name: fake.user(name) for name in users}
    await fake.start()
    values = {"DISCORD_BOT_TOKEN": "test-token", "MEMORY_BOT_DATA_DIR": str(tmp_path / "data"),
              "EMBEDDER": "hashing"}
    for key, value in (env or {}).items():
        values[key] = value(people, fake) if callable(value) else value
    settings = load_settings(values, env_file=None)
    app = await build_app(settings, embedder=HashingEmbedder(), model=model)
    handle = None
    try:
        await app.start()
        if before_start is not None:
            await before_start(app, fake, people)
        handle = await start_discord(settings, app, api_base=fake.api_base,
                                     gateway_url=fake.gateway_url, edit_interval=edit_interval,
                                     client_options={"guild_ready_timeout": 0.05})
        await handle.wait_ready(WAIT_S)
        yield Env(fake, app, handle, model), people
    finally:
        if handle is not None:
            await handle.stop()
        await app.aclose()
        await fake.close()


def one(items):
    assert len(items) == 1, items
    return items[0]


# ----------------------------------------------------------------- conversations


async def test_dm_remembers_across_sessions_closed_by_bye(tmp_path):
    first = ("I'm a quant developer, I mainly use Python, and I'm choosing a vector database "
             "these days.")
    others = ["What's a good recipe for pancakes?", "How do I fix a flat bike tyre?",
              "Recommend a science fiction novel", "What's the capital of Australia?"]
    async with running(tmp_path) as (env, people):
        ana = people["ana"]
        dm = env.fake.dm_channel(ana)
        assert one(await env.say(ana, first))["content"]
        bye = one(await env.say(ana, "bye"))
        assert "saved a summary" in bye["content"]
        for other in others:
            await env.say(ana, other)
            await env.say(ana, "bye")
        answer = one(await env.say(ana, "Let's continue with the vector database: where did we "
                                        "say to start?"))
        assert "vector database" in answer["content"].split("From earlier conversations:")[1]
        token = await env.slash(ana, "why")
        why = one(env.fake.followups(token))["content"]
        assert "vector database" in why and why.startswith("For my last reply I recalled")

        user_id = await env.user_id(ana)
        assert len(await env.app.memory.episodes_for(user_id)) == 5
        thread = await env.app.store.identities.thread_for_key(ThreadKey("discord", str(dm)),
                                                    ChatKind.PRIVATE, None,
                                                    env.app.memory.clock.now())
        assert thread.chat_kind is ChatKind.PRIVATE
        # every reply went to the DM without a reply reference, typing first, pinging nobody
        posts = env.fake.find("POST", rf"^/channels/{dm}/messages$")
        assert len(posts) == 11
        assert all(p.body["allowed_mentions"]["parse"] == [] for p in posts)
        assert all("message_reference" not in p.body for p in posts)
        assert env.fake.find("POST", rf"^/channels/{dm}/typing$")


async def test_server_channel_answers_only_when_addressed_and_keeps_dm_facts_out(tmp_path):
    model = ScriptedModel()
    async with running(tmp_path, model=model) as (env, people):
        ana, ben = people["ana"], people["ben"]
        noted = one(await env.say(ana, "remember that I'm vegetarian"))
        assert "vegetarian" in noted["content"]
        calls = len(model.calls)

        assert await env.say(ana, "lunch at noon, anyone?", where=env.general) == []
        steak = one(await env.say(ben, "recommend me a steak place", where=env.general,
                                  mention=True))
        diet = one(await env.say(ben, "what are my dietary restrictions?", where=env.general,
                                 mention=True))
        mine = one(await env.say(ana, "what do you know about my diet?", where=env.general,
                                 mention=True))
        assert len(model.calls) == calls + 3
        for n in range(calls, calls + 3):
            assert "vegetarian" not in model.prompt_text(n)  # a private fact never reaches a group
        assert all("vegetarian" not in m["content"] for m in env.fake.sent(env.general))
        # the model tells people apart by display name; mentions of the bot are gone
        last = model.calls[-1][1]
        assert "Ben: recommend me a steak place" in last[0].content
        assert "Ana: what do you know about my diet?" in last[-1].content
        assert "<@" not in model.prompt_text()
        # replies answer the message they are for, and ping nobody
        posts = env.fake.find("POST", rf"^/channels/{env.general}/messages$")
        assert [p.body["message_reference"]["message_id"] for p in posts] == [
            m["message_reference"]["message_id"] for m in (steak, diet, mine)]
        assert all(p.body["allowed_mentions"]["parse"] == [] for p in posts)
        # the unaddressed message was not stored either
        turns = await env.thread_turns(ThreadKey("discord", str(env.general)))
        assert not any("lunch" in t for t in turns)

        # a reply to the bot needs no mention; other bots are never answered
        reply = one(await env.say(ben, "and a vegetarian option?", where=env.general,
                                  reply_to=steak, ping=False))
        assert reply["content"] == f"ok {len(model.calls)}"
        other_bot = env.fake.user("otherbot", bot=True)
        assert await env.say(other_bot, "hello", where=env.general, mention=True) == []
        assert len(model.calls) == calls + 4


async def test_threads_keep_separate_working_memory(tmp_path):
    model = ScriptedModel()
    async with running(tmp_path, model=model) as (env, people):
        ana, ben = people["ana"], people["ben"]
        topic_a = env.fake.channel(env.guild, "topic-a")
        topic_b = env.fake.channel(env.guild, "topic-b")
        bot_thread = env.fake.channel(env.guild, "bot-thread")
        one(await env.say(ana, "my project codename is Falcon", where=topic_a, mention=True))
        one(await env.say(ana, "what is my project codename?", where=topic_b, mention=True))
        assert "Falcon" not in model.prompt_text()
        assert await env.say(ben, "no mention in a thread of people", where=topic_a) == []
        # in a thread the bot started, every message is for it
        one(await env.say(ben, "anyone here?", where=bot_thread))

        key_a = ThreadKey("discord", str(env.general), str(topic_a))
        key_b = ThreadKey("discord", str(env.general), str(topic_b))
        turns_a = await env.thread_turns(key_a)
        turns_b = await env.thread_turns(key_b)
        assert turns_a[0] == "my project codename is Falcon" and len(turns_a) == 2
        assert turns_b[0] == "what is my project codename?" and len(turns_b) == 2
        assert await env.thread_turns(ThreadKey("discord", str(env.general))) == []
        thread = await env.app.store.identities.thread_for_key(key_a, ChatKind.GROUP, None,
                                                    env.app.memory.clock.now())
        assert thread.title == "#general > topic-a (Lab)"


async def test_a_long_reply_is_split_at_paragraphs_with_code_intact_and_no_mass_mention(
        tmp_path):
    model = ScriptedModel()
    paragraphs = [f"Paragraph {n}: " + " ".join(["lorem"] * 54) for n in range(8)]
    code = "```python\n" + "\n".join(f"print({n})  # step {n}" for n in range(110)) + "\n```"
    text = "\n\n".join(paragraphs[:4] + [code] + paragraphs[4:]) + "\n\nPing @everyone now."
    assert 5000 <= len(text) <= 5100
    model.script.append(text)
    async with running(tmp_path, model=model) as (env, people):
        ben = people["ben"]
        sent = await env.say(ben, "write a long story", where=env.general, mention=True)
        assert len(sent) == 3
        assert all(len(m["content"]) <= MESSAGE_LIMIT for m in sent)
        assert all(m["content"].count("```") % 2 == 0 for m in sent)  # every chunk renders
        # the code block was cut at a line, closed, and reopened with its language tag
        assert sent[0]["content"].endswith("\n```") and sent[1]["content"].startswith("```python\n")
        lines = sent[0]["content"].split("\n")[:-1] + sent[1]["content"].split("\n")[1:]
        lines += sent[2]["content"].split("\n")
        assert "\n".join(lines).replace("\n\n", "\n") == text.replace(
            "@everyone", "@\u200beveryone").replace("\n\n", "\n")
        assert sent[2]["content"].startswith("Paragraph 4: ")  # the next cut at a paragraph
        posts = env.fake.find("POST", rf"^/channels/{env.general}/messages$")
        assert "message_reference" in posts[0].body
        assert all("message_reference" not in p.body for p in posts[1:])
        assert all(p.body["allowed_mentions"]["parse"] == [] for p in posts)


async def test_reply_is_previewed_while_claude_streams_and_edited_at_a_safe_rate(tmp_path):
    llm = await FakeLLMServer().start()
    answer = "Here is a reply that arrives word by word from the model. " * 8
    llm.push(Answer(answer.strip()))
    model = AnthropicChatModel(api_key="k", base_url=llm.anthropic_url, model="claude-haiku-4-5",
                               retry=RetryPolicy(attempts=1))
    try:
        async with running(tmp_path, model=model, edit_interval=3600.0) as (env, people):
            sent = one(await env.say(people["ana"], "tell me something"))
            dm = env.fake.dm_channel(people["ana"])
            assert b'"stream":true' in llm.requests[0].body.replace(b" ", b"")
            posts = env.fake.find("POST", rf"^/channels/{dm}/messages$")
            edits = env.fake.find("PATCH", rf"^/channels/{dm}/messages/\d+$")
            # one preview, then (the interval not yet over) exactly one edit: the final text
            assert one(posts).body["content"].endswith(" …")
            assert answer.startswith(posts[0].body["content"][:-2])
            assert one(edits).body["content"] == answer.strip() == sent["content"]
    finally:
        await model.aclose()
        await llm.close()


async def test_streaming_reports_reach_only_the_listening_task():
    heard: list[str] = []
    with streaming.listen(heard.append):
        assert streaming.wanted()
        streaming.report("a")

        async def elsewhere():
            assert not streaming.wanted()
            streaming.report("leak")
        await asyncio.get_running_loop().create_task(elsewhere())
    streaming.report("after")
    assert heard == ["a"]


async def test_rate_limited_send_is_retried_and_delivered_once(tmp_path):
    async with running(tmp_path, model=ScriptedModel()) as (env, people):
        ana = people["ana"]
        env.fake.fail(r"^POST /channels/\d+/messages$", status=429, retry_after=0.05)
        sent = one(await env.say(ana, "hello"))
        assert sent["content"] == "ok 1"
        dm = env.fake.dm_channel(ana)
        posts = env.fake.find("POST", rf"^/channels/{dm}/messages$")
        assert [p.status for p in posts] == [429, 200]


async def test_failure_is_logged_and_told_and_the_bot_keeps_running(tmp_path, caplog):
    model = ScriptedModel()
    model.script.extend([RuntimeError("boom"), "fine again"])
    async with running(tmp_path, model=model) as (env, people):
        ana = people["ana"]
        with caplog.at_level(logging.ERROR, logger="adapters.discord"):
            assert one(await env.say(ana, "first"))["content"] == FAILED
        assert any("boom" in r.getMessage() for r in caplog.records)
        assert one(await env.say(ana, "second"))["content"] == "fine again"


# ----------------------------------------------------------------- slash commands


async def test_commands_are_synced_once_even_when_the_gateway_reconnects(tmp_path):
    async with running(tmp_path, model=ScriptedModel()) as (env, people):
        fake = env.fake
        names = sorted(c["name"] for c in fake.synced["global"])
        assert names == sorted(["start", "help", "new", "why", "memories", "forget",
                                "memory_off", "memory_on", "export", "stats", "timezone", "language"])
        await fake.drop_connection()  # resumed: no new READY
        await until(lambda: fake.resumes)
        one(await env.say(people["ana"], "after a resume"))
        await fake.drop_connection(resumable=False)  # a fresh IDENTIFY and a second READY
        await until(lambda: env.adapter.connections == 2)
        one(await env.say(people["ana"], "after a new session"))
        assert len(fake.identifies) == 2
        assert len(fake.find("PUT", r"/commands$")) == 1
        assert env.adapter.logins == 1


async def test_guild_id_syncs_commands_to_that_guild_only(tmp_path):
    async with running(tmp_path, model=ScriptedModel(),
                       env={"DISCORD_GUILD_ID": lambda people, fake: str(fake.guilds[0].id)}
                       ) as (env, people):
        assert list(env.fake.synced) == [str(env.guild.id)]
        token = await env.slash(people["ana"], "help", where=env.general)
        assert one(env.fake.followups(token))["content"].startswith("I'm a personal assistant")


async def test_memories_is_ephemeral_and_paginated_with_buttons(tmp_path):
    async with running(tmp_path, model=ScriptedModel()) as (env, people):
        ana, ben = people["ana"], people["ben"]
        one(await env.say(ana, "hello"))
        msg = IncomingMessage(thread=ThreadKey("discord", str(env.fake.dm_channel(ana))),
                              chat_kind=ChatKind.PRIVATE, platform_user_id=ana["id"],
                              display_name="Ana", text="", sent_at=env.app.memory.clock.now())
        ctx = await env.app.memory.context(msg)
        for n in range(1, 41):
            await env.app.store.facts.add_fact(user_id=ctx.user.id, kind="note",
                                         text=f"Seeded fact number {n}", topic=None,
                                         origin=ctx.thread, source_turn_ids=(), lang="en",
                                         scope=ctx.scope, now=env.app.memory.clock.now())

        token = await env.slash(ana, "memories", where=env.general)
        assert [c.body for c in env.fake.callbacks(token)] == [{"type": 5,
                                                                "data": {"flags": EPHEMERAL}}]
        page = one(env.fake.followups(token))
        assert page["flags"] & EPHEMERAL
        assert page["content"].startswith("1. Seeded fact number 1 (")
        assert "16. Seeded" not in page["content"] and page["content"].endswith("Page 1/3")
        buttons = {b["label"]: b for b in env.fake.buttons(int(page["id"]))}
        assert buttons["Previous"].get("disabled") and not buttons["Next"].get("disabled")

        click = await env.fake.click(ana, int(page["id"]), buttons["Next"]["custom_id"],
                                     guild=env.guild, channel_id=env.general)
        await until(lambda: env.fake.callbacks(click))
        update = one(env.fake.callbacks(click)).body
        assert update["type"] == 7
        assert update["data"]["content"].startswith("16. Seeded fact number 16 (")
        assert update["data"]["content"].endswith("Page 2/3")

        # someone else cannot turn the pages
        other = await env.fake.click(ben, int(page["id"]), buttons["Next"]["custom_id"],
                                     guild=env.guild, channel_id=env.general)
        await until(lambda: env.fake.callbacks(other))
        refused = one(env.fake.callbacks(other)).body
        assert refused["type"] == 4 and refused["data"]["flags"] == EPHEMERAL
        assert env.fake.messages[int(page["id"])]["content"].endswith("Page 2/3")


async def test_forget_all_is_confirmed_by_button_and_touches_no_one_else(tmp_path):
    async with running(tmp_path, model=ScriptedModel()) as (env, people):
        ana, ben = people["ana"], people["ben"]
        await env.say(ana, "remember that I like jazz")
        await env.say(ben, "remember that I like opera")
        assert [f.text for f in await env.facts(ana)] and [f.text for f in await env.facts(ben)]

        token = await env.slash(ana, "forget", {"what": "all"})
        question = one(env.fake.followups(token))
        assert "Reply yes to confirm" in question["content"] and question["flags"] & EPHEMERAL
        assert await env.facts(ana)  # nothing deleted before the button
        buttons = {b["label"]: b["custom_id"] for b in env.fake.buttons(int(question["id"]))}
        click = await env.fake.click(ana, int(question["id"]), buttons["Confirm"])
        done = await env.fake.wait_for(lambda: env.fake.find(
            "PATCH", rf"/webhooks/\d+/{re.escape(click)}/messages/@original$"))
        assert one(env.fake.callbacks(click)).body["type"] == 6  # deferred before deleting
        assert one(done).body["content"].startswith("Deleted everything I kept about you: 1 fact")
        assert one(done).body["components"] == []
        assert await env.facts(ana) == []
        assert [f.text for f in await env.facts(ben)]

        # Ben cancels; and a confirmation overtaken by another message is not run later
        token = await env.slash(ben, "forget", {"what": "all"})
        question = one(env.fake.followups(token))
        buttons = {b["label"]: b["custom_id"] for b in env.fake.buttons(int(question["id"]))}
        one(await env.say(ben, "actually, tell me a joke"))
        click = await env.fake.click(ben, int(question["id"]), buttons["Confirm"])
        done = await env.fake.wait_for(lambda: env.fake.find(
            "PATCH", rf"/webhooks/\d+/{re.escape(click)}/messages/@original$"))
        assert "expired" in one(done).body["content"]
        assert [f.status for f in await env.facts(ben)] == [FactStatus.ACTIVE]


async def test_a_slow_command_is_deferred_before_it_waits(tmp_path):
    model = ScriptedModel()
    model.gate = asyncio.Event()
    async with running(tmp_path, model=model) as (env, people):
        ana = people["ana"]
        dm = env.fake.dm_channel(ana)
        await env.fake.say(ana, "tell me a long story")
        await asyncio.wait_for(model.waiting.wait(), WAIT_S)  # the thread is busy
        token = await env.fake.slash(ana, "memories")
        callback = one(await env.fake.wait_for(lambda: env.fake.callbacks(token)))
        assert callback.body["type"] == 5  # acknowledged while the command still waits
        assert not model.gate.is_set() and env.fake.followups(token) == []
        model.gate.set()
        await until(lambda: env.fake.followups(token) and env.fake.sent(dm))
        assert env.fake.followups(token)[0]["content"].startswith("You have no saved memories")
        assert callback.n < min(c.n for c in env.fake.find("POST", r"^/webhooks/"))


async def test_allowed_users_keeps_others_out(tmp_path):
    async with running(tmp_path, model=ScriptedModel(),
                       env={"ALLOWED_USERS": lambda people, fake: f"discord:{people['ana']['id']}"}
                       ) as (env, people):
        ana, ben = people["ana"], people["ben"]
        assert await env.say(ben, "hello") == []
        assert one(await env.say(ana, "hello"))["content"] == "ok 1"
        token = await env.slash(ben, "memories")
        refused = one(env.fake.callbacks(token)).body
        assert refused["type"] == 4 and refused["data"]["flags"] == EPHEMERAL
        assert refused["data"]["content"] == NOT_ALLOWED
        assert await env.app.store.identities.find_user("discord", ben["id"]) is None


# ----------------------------------------------------------------- message-content intent


async def test_missing_message_content_intent_is_said_at_start_up_and_mentions_still_work(
        tmp_path, caplog):
    model = ScriptedModel()
    with caplog.at_level(logging.WARNING, logger="adapters.discord"):
        async with running(tmp_path, model=model, message_content=False) as (env, people):
            ana = people["ana"]
            assert any(r.getMessage() == CONTENT_INTENT_MISSING for r in caplog.records)
            assert not one(env.fake.identifies)["intents"] & (1 << 15)  # never asked for it
            assert len(env.fake.find("PUT", r"/commands$")) == 1
            assert one(await env.say(ana, "hi in a DM"))["content"] == "ok 1"
            assert one(await env.say(ana, "hi with a mention", where=env.general,
                                     mention=True))["content"] == "ok 2"
            # Discord sends no content without the intent: a hint, never an empty turn
            bot_thread = env.fake.channel(env.guild, "bot-thread")
            assert one(await env.say(ana, "", where=bot_thread))["content"] == NO_CONTENT_HINT
            assert len(model.calls) == 2
            assert await env.thread_turns(ThreadKey("discord", str(env.general),
                                                    str(bot_thread))) == []


async def test_intent_refused_by_the_gateway_reconnects_without_it(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="adapters.discord"):
        async with running(tmp_path, model=ScriptedModel(), message_content=False,
                           content_flag=True) as (env, people):
            # the portal flag said yes, the gateway said 4014: warned, then connected without it
            assert [bool(i["intents"] & (1 << 15)) for i in env.fake.identifies] == [True, False]
            assert any(r.getMessage() == CONTENT_INTENT_MISSING for r in caplog.records)
            assert len(env.fake.find("PUT", r"/commands$")) == 1 and env.adapter.logins == 2
            assert one(await env.say(people["ana"], "hi"))["content"] == "ok 1"


async def test_an_expired_command_still_runs_once_and_answers_in_the_dm(tmp_path):
    async with running(tmp_path, model=ScriptedModel()) as (env, people):
        ana = people["ana"]
        await env.say(ana, "remember that I like jazz")
        assert len(await env.facts(ana)) == 1
        env.fake.fail(r"^POST /interactions/\d+/[^/]+/callback$", status=404, code=10062)
        token = await env.slash(ana, "forget", {"what": "1"})
        assert await env.facts(ana) == []
        assert env.fake.followups(token) == []
        last = env.fake.sent(env.fake.dm_channel(ana))[-1]
        assert last["content"].startswith("Forgotten: ")


async def test_stop_lets_the_reply_in_progress_finish(tmp_path):
    model = ScriptedModel()
    model.gate = asyncio.Event()
    async with running(tmp_path, model=model) as (env, people):
        ana = people["ana"]
        await env.fake.say(ana, "a slow question")
        await asyncio.wait_for(model.waiting.wait(), WAIT_S)
        stopping = asyncio.get_running_loop().create_task(env.handle.stop())
        await until(lambda: not env.adapter.accepting)
        model.gate.set()
        await stopping
        assert one(env.fake.sent(env.fake.dm_channel(ana)))["content"] == "ok 1"
        assert env.handle.client.is_closed()


async def test_memory_bot_run_starts_discord_when_its_token_is_set(tmp_path):
    from bot.runner import STARTERS, AdapterStarter, run_platforms

    fake = FakeDiscord()
    fake.add_guild("Lab", ["general"])
    ana = fake.user("ana")
    await fake.start()
    try:
        settings = load_settings({"DISCORD_BOT_TOKEN": "t", "EMBEDDER": "hashing",
                                  "MEMORY_BOT_DATA_DIR": str(tmp_path / "data")}, env_file=None)
        assert [s.name for s in STARTERS if s.enabled(settings)] == ["discord"]
        started = []

        async def start(settings, app):  # the product starter, pointed at the fake
            started.append(await start_discord(settings, app, api_base=fake.api_base,
                                               gateway_url=fake.gateway_url,
                                               client_options={"guild_ready_timeout": 0.05}))
            return started[-1]

        stop = asyncio.Event()
        run = asyncio.get_running_loop().create_task(run_platforms(
            settings, stop=stop, starters=[AdapterStarter("discord", lambda s: True, start)]))
        await until(lambda: started)
        await started[0].wait_ready(WAIT_S)
        await fake.say(ana, "remember that I live in Graz")
        await until(lambda: fake.sent(fake.dm_channel(ana)))
        stop.set()
        assert await run == 0
        assert fake.sent(fake.dm_channel(ana))[0]["content"].startswith("Noted: ")
        assert started[0].client.is_closed()
        assert not any(c.status >= 400 for c in fake.calls)
    finally:
        await fake.close()


async def test_commands_about_memory_in_a_server_channel_answer_only_to_the_user(tmp_path):
    """Typed in a server channel, /forget (listing, number, all with its confirmation) and
    /stats answer in a direct message; as slash commands they answer ephemerally and their
    confirmation is not taken by a "yes" typed in the channel. Nothing of the user's memory
    reaches the channel."""
    async with running(tmp_path, model=ScriptedModel()) as (env, people):
        ana, ben = people["ana"], people["ben"]
        fake, general = env.fake, env.general
        dm = fake.dm_channel(ana)
        await env.say(ana, "remember that my secret hobby is Quilting")
        await env.say(ana, "remember that I live in Graz")
        notes = [one(await env.say(ana, text, where=general, mention=True))["content"]
                 for text in ("/forget Quilting", "/stats", "/forget 1", "/forget all")]
        assert notes == ["I sent you the answer to /forget in a direct message.",
                         "I sent you the answer to /stats in a direct message.",
                         "I sent you the answer to /forget in a direct message.",
                         "I sent you the answer to /forget in a direct message."]
        private = [m["content"] for m in fake.sent(dm)]
        assert any(t.startswith("Matching facts:\n1. The user's secret hobby is Quilting")
                   for t in private)
        assert any(t.startswith("Forgotten: The user's secret hobby is Quilting")
                   for t in private)
        assert private[-1].startswith("This will delete all 1 fact(s)")
        assert "Deleted everything" in one(await env.say(ana, "yes"))["content"]  # in the DM
        assert await env.facts(ana) == []

        await env.say(ana, "remember that I like Marzipan")
        token = await env.slash(ana, "forget", {"what": "all"}, where=general)
        question = one(fake.followups(token))
        assert question["flags"] & EPHEMERAL and "1 fact(s)" in question["content"]
        reply = one(await env.say(ana, "yes", where=general, mention=True))["content"]
        assert "Deleted" not in reply and "fact" not in reply  # the channel confirms nothing
        assert [f.text for f in await env.facts(ana)] == ["The user likes Marzipan"]
        for message in fake.sent(general):
            assert not re.search(r"quilting|graz|marzipan|fact\(s\)", message["content"], re.I)


async def test_a_server_command_about_memory_runs_only_when_a_dm_reaches_the_user(tmp_path):
    async with running(tmp_path, model=ScriptedModel()) as (env, people):
        ben = people["ben"]
        await env.say(ben, "remember that I like Marzipan")
        env.fake.fail(r"POST /channels/\d+/messages", status=403, code=50007)
        note = one(await env.say(ben, "/forget 1", where=env.general, mention=True))["content"]
        assert "nothing was shown or changed" in note and "marzipan" not in note.lower()
        assert [f.text for f in await env.facts(ben)] == ["The user likes Marzipan"]
