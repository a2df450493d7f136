"""The language of a reply: the user's ``/language`` (stored), else the language of the
message, else the platform's hint, else English; through the engine on real SQLite."""

from __future__ import annotations

from dataclasses import replace

from i18n import say
from memory.types import ChatKind
from memory.stores.sqlite import SQLiteStore
from tests.conftest import make_harness


async def _ask(h, text: str, *, hint: str | None = None) -> list[str]:
    return await h.engine.handle(replace(h.message(text), language=hint))


async def test_the_message_language_then_the_platform_hint_then_english(tmp_path, clock):
    h = await make_harness(tmp_path, clock)
    try:
        assert await _ask(h, "/new") == [say("en", "new.nothing")]
        assert await _ask(h, "/new", hint="zh-CN") == [say("zh", "new.nothing")]
        assert await _ask(h, "/new", hint="zh-hans") == [say("zh", "new.nothing")]
        assert await _ask(h, "/new", hint="de") == [say("en", "new.nothing")]
        # a command's keyword argument is no language; Chinese words in it are
        assert (await _ask(h, "/memories all", hint="zh-TW"))[0].endswith(
            say("zh", "memories.episode_count", count=0))
        assert (await _ask(h, "/forget 茶"))[0] == say("zh", "forget.no_match", words="茶")
        # an ordinary message speaks its own language, whatever the hint
        assert (await _ask(h, "bye", hint="zh-CN")) == [say("en", "engine.bye.nothing")]
        assert (await _ask(h, "先这样"))[0] == say("zh", "engine.bye.nothing")
    finally:
        await h.memory.store.close()


async def test_language_is_stored_per_user_and_wins_over_message_and_hint(tmp_path, clock):
    h = await make_harness(tmp_path, clock)
    try:
        assert (await _ask(h, "/language"))[0] == say("en", "language.automatic")
        assert await _ask(h, "/language zh") == [
            say("zh", "language.set", language=say("zh", "language.name.zh"))]
        assert await _ask(h, "/new") == [say("zh", "new.nothing")]
        assert await _ask(h, "bye", hint="en-US") == [say("zh", "engine.bye.nothing")]
        other = await h.engine.handle(h.message("/new", user="bob"))
        assert other == [say("en", "new.nothing")]  # another user's setting is their own
        assert (await _ask(h, "/language xx"))[0] == say("zh", "language.unknown", code="xx")
        assert (await _ask(h, "/language"))[0] == say(
            "zh", "language.current", language=say("zh", "language.name.zh"), code="zh")
    finally:
        await h.memory.store.close()
    store = await SQLiteStore.open(tmp_path / "memory.db")  # kept across a restart
    try:
        assert (await store.identities.find_user("console", "alice")).language == "zh"
        assert (await store.identities.find_user("console", "bob")).language is None
    finally:
        await store.close()


async def _in(h, text: str, *, hint: str | None = None, **kw) -> list[str]:
    return await h.engine.handle(replace(h.message(text, **kw), language=hint))


async def test_a_command_without_text_speaks_the_authors_latest_language_in_the_thread(
        tmp_path, clock):
    h = await make_harness(tmp_path, clock)
    try:
        await _in(h, "我最近在学做意大利面")
        assert await _in(h, "/new") == [say("zh", "new.saved")]
        # the session is closed: the language is still the one the author last wrote in
        assert await _in(h, "/new") == [say("zh", "new.nothing")]
        assert await _in(h, "👍👍") != []  # no language of its own either
        assert (await _in(h, "/memories all"))[-1].endswith(
            say("zh", "memories.episode_count", count=1))
        # the platform's hint comes after the author's own latest language
        assert await _in(h, "/new", hint="en-US") == [say("zh", "new.saved")]
        # a later message in English changes it; someone else's Chinese in a group does not
        await _in(h, "I live in Vienna", chat="lab", kind=ChatKind.GROUP)
        await _in(h, "我住在格拉茨", chat="lab", kind=ChatKind.GROUP, user="bob")
        assert await _in(h, "/new", chat="lab", kind=ChatKind.GROUP) == [
            say("en", "new.saved")]
        assert await _in(h, "/new", chat="lab", kind=ChatKind.GROUP, user="bob") == [
            say("zh", "new.nothing")]
        # and another thread of the same author has its own latest message
        assert await _in(h, "/new") == [say("zh", "new.nothing")]
    finally:
        await h.memory.store.close()


async def test_the_latest_language_is_read_from_the_open_session_after_a_restart(
        tmp_path, clock):
    h = await make_harness(tmp_path, clock)
    try:
        await _in(h, "记住我对花生过敏", hint="en-US")
        await _in(h, "I'm going to Graz tomorrow", user="bob", hint="zh-CN")
    finally:
        await h.memory.store.close()
    h = await make_harness(tmp_path, clock)  # a new process: it has seen no message yet
    try:
        assert await _in(h, "/new", hint="en-US") == [say("zh", "new.saved")]
        assert await _in(h, "/new", user="bob", hint="zh-CN") == [say("en", "new.saved")]
        # nothing to go by: the platform's hint
        assert await _in(h, "/new", user="carol", hint="zh-CN") == [say("zh", "new.nothing")]
    finally:
        await h.memory.store.close()
