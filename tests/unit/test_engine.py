"""The conversation engine over real SQLite (temporary folder) and the in-memory index."""

from __future__ import annotations

import re

from memory.errors import ModelUnavailable
from memory.types import ChatKind, FactStatus, ItemKind, Role
from tests.conftest import make_harness


async def test_explicit_fact_is_written_before_the_next_input(harness):
    replies = await harness.say("Remember that I prefer short answers.")
    assert replies[0] == "Noted: The user prefers short answers"
    user = await harness.store.identities.find_user("console", "alice")
    facts = await harness.store.facts.list_facts(user.id, [FactStatus.ACTIVE])
    assert [f.text for f in facts] == ["The user prefers short answers"]
    assert facts[0].origin_kind is ChatKind.PRIVATE
    assert "fact:%d" % facts[0].id in await harness.index.keys()
    # the very next message recalls it
    await harness.say("Do you keep short answers in mind?")
    record = await harness.store.records.load_prompt_record(facts[0].origin_thread_id, user.id)
    assert any(i["key"] == f"fact:{facts[0].id}" for i in record["items"])


async def test_restating_confirms_instead_of_adding_a_twin(harness):
    await harness.say("remember I am allergic to peanuts")
    await harness.say("/new")
    replies = await harness.say("Remember I'm allergic to peanuts")
    assert replies[0].startswith("I already had that")
    user = await harness.store.identities.find_user("console", "alice")
    facts = await harness.store.facts.list_facts(user.id, [FactStatus.ACTIVE])
    assert len(facts) == 1 and facts[0].confirmations == 2


async def test_new_closes_the_session_into_an_episode_and_rounds(harness):
    await harness.say("I'm choosing a vector database, budget is $500 per month.")
    await harness.say("We should start with a benchmark on 2024-06-01.")
    assert (await harness.say("/new"))[0].startswith("Started a new conversation. I saved")
    user = await harness.store.identities.find_user("console", "alice")
    episodes = await harness.memory.episodes_for(user.id)
    assert len(episodes) == 1
    episode = episodes[0]
    assert "vector database" in episode.summary
    assert any("$500" in k.text for k in episode.key_data)
    keys = await harness.index.keys()
    assert f"episode:{episode.id}" in keys
    assert sum(k.startswith("round:") for k in keys) == 2
    # the next session starts with the last episode of the thread, pinned
    await harness.say("hello again")
    record = await harness.store.records.load_prompt_record(1, user.id)
    assert record["items"][0]["key"] == f"episode:{episode.id}" and record["items"][0]["pinned"]


async def test_end_phrase_closes_and_replies_in_language(harness):
    await harness.say("我是做量化策略的")
    assert "下次见" in (await harness.say("先这样"))[0]
    user = await harness.store.identities.find_user("console", "alice")
    assert len(await harness.memory.episodes_for(user.id)) == 1
    assert (await harness.say("bye"))[0] == "Bye for now!"  # nothing open: no second episode
    assert len(await harness.memory.episodes_for(user.id)) == 1


async def test_secrets_are_redacted_before_storage_and_the_reply_says_so(harness):
    replies = await harness.say("my password is hunter22x, remember it")
    assert "did not keep the password" in replies[-1]
    session = await harness.store.conversations.open_session(1)
    turns = await harness.store.conversations.session_turns(session.id)
    assert all("hunter22x" not in t.text for t in turns)


async def test_memories_format_and_forget_n(harness):
    await harness.say("remember I live in Graz")
    await harness.say("remember I drink green tea")
    reply = (await harness.say("/memories"))[0]
    lines = reply.splitlines()
    assert lines[0] == "1. The user lives in Graz (2026-11-30, private chat)"
    assert lines[1] == "2. The user drinks green tea (2026-11-30, private chat)"
    assert lines[2].startswith("Earlier conversations: 0")
    assert (await harness.say("/forget 1"))[0] == ("Forgotten: The user lives in Graz (with the "
                                                    "1 message(s) it came from)")
    assert "Graz" not in (await harness.say("/memories"))[0]
    assert "no fact number 7" in (await harness.say("/forget 7"))[0]
    assert "2. The user drinks" not in (await harness.say("/forget tea"))[0]


async def test_forget_all_asks_first_and_other_lines_cancel(harness):
    await harness.say("remember I live in Graz")
    ask = (await harness.say("/forget all"))[0]
    assert "Reply yes to confirm" in ask
    replies = await harness.say("/memories")
    assert replies[0].startswith("Cancelled")
    assert "Graz" in replies[1]
    await harness.say("/forget all")
    done = (await harness.say("yes"))[0]
    assert done.startswith("Deleted everything") and "1 fact(s)" in done
    assert "You have no saved memories." in (await harness.say("/memories"))[0]
    assert await harness.index.keys() == set()
    assert (await harness.say("/forget all"))[0] == "Nothing to forget."


async def test_forget_all_prompt_counts_the_history_it_deletes(harness):
    await harness.say("remember I live in Graz")
    await harness.say("/new")
    await harness.say("No, I live in Linz")
    user = await harness.store.identities.find_user("console", "alice")
    every = list(FactStatus)
    stored = await harness.store.facts.list_facts(user.id, every)
    assert {f.status for f in stored} == {FactStatus.ACTIVE, FactStatus.SUPERSEDED}
    ask = (await harness.say("/forget all"))[0]
    done = (await harness.say("yes"))[0]
    asked = int(re.search(r"delete all (\d+) fact\(s\)", ask).group(1))
    deleted = int(re.search(r"(\d+) fact\(s\)", done).group(1))
    assert asked == deleted == len(stored) == 2
    assert "including 1 earlier version(s)" in ask
    assert await harness.store.facts.list_facts(user.id, every) == []


async def test_forget_all_prompt_counts_group_conversations_it_deletes(harness):
    from memory.types import ChatKind

    group = {"chat": "team", "kind": ChatKind.GROUP}
    await harness.say("I booked the venue for Friday", user="alice", **group)
    await harness.say("/new", user="alice", **group)  # a group episode citing alice's turn
    await harness.say("I'll bring the cake", user="bob", **group)
    await harness.say("/new", user="bob", **group)  # bob's alone: not alice's to delete
    alice = await harness.store.identities.find_user("console", "alice")
    assert await harness.memory.episodes_for(alice.id) == []  # private episodes only
    ask = (await harness.say("/forget all", user="alice"))[0]
    done = (await harness.say("yes", user="alice"))[0]
    asked = int(re.search(r"fact\(s\), (\d+) earlier conversation", ask).group(1))
    deleted = int(re.search(r"(\d+) earlier conversation", done).group(1))
    assert asked == deleted == 1


async def test_forget_all_in_a_group_with_only_others_turns_has_nothing(harness):
    from memory.types import ChatKind

    group = {"chat": "team", "kind": ChatKind.GROUP}
    await harness.say("I'll bring the cake", user="bob", **group)
    assert (await harness.say("/forget all", user="alice", **group))[0] == "Nothing to forget."


async def test_forget_all_with_nothing(harness):
    assert (await harness.say("/forget all", user="newbie"))[0] == "Nothing to forget."


async def test_memory_off_keeps_nothing_and_on_resumes(harness):
    await harness.say("remember I live in Graz")
    await harness.say("/new")
    assert "Memory is off" in (await harness.say("/memory_off"))[0]
    await harness.say("remember my cat is called Tom")
    listing = (await harness.say("/memories"))[0]
    assert listing.startswith("Memory is OFF") and "Tom" not in listing
    await harness.say("/new")
    user = await harness.store.identities.find_user("console", "alice")
    assert len(await harness.memory.episodes_for(user.id)) == 1  # the off session left nothing
    assert await harness.store.count_rows("turns") == 2  # the first session's turns only
    await harness.say("/memory_on")
    await harness.say("is Graz nice?")
    record = await harness.store.records.load_prompt_record(1, user.id)
    assert any(i["kind"] == "fact" for i in record["items"])


async def test_with_memory_off_no_reply_claims_anything_was_kept(harness):
    await harness.say("/memory_off")
    out = await harness.say("Remember that my boat is called Seeigel.")
    assert any("Memory is off, so I won't keep this" in line for line in out)
    assert (await harness.say("bye")) == [
        "Bye for now! Memory is off, so nothing of this conversation was kept."]
    await harness.say("记住我的船叫海胆。")
    # /new has no words: it speaks the language of the user's latest message
    assert (await harness.say("/new")) == ["已开始新的对话。记忆已关闭，上一次对话没有保存。"]
    user = await harness.store.identities.find_user("console", "alice")
    assert await harness.memory.episodes_for(user.id) == []
    await harness.say("/memory_on")
    await harness.say("I like sailing")
    assert (await harness.say("bye")) == ["Bye for now! I saved a summary of this conversation."]
    assert len(await harness.memory.episodes_for(user.id)) == 1


async def test_duplicate_platform_message_gets_one_reply(harness):
    first = await harness.say("hello", message_id="m1")
    again = await harness.say("hello", message_id="m1")
    assert first and again == []
    assert await harness.store.count_rows("turns") == 2


async def test_model_failure_apologises_and_stores_no_reply(tmp_path, clock):
    class Down:
        name = "down"

        async def complete(self, **kw):
            raise ModelUnavailable("503")

    h = await make_harness(tmp_path, clock, model=Down())
    try:
        replies = await h.say("hello")
        assert "can't reach the model" in replies[-1] and "message is saved" in replies[-1]
        session = await h.store.conversations.open_session(1)
        roles = [t.role for t in await h.store.conversations.session_turns(session.id)]
        assert roles == [Role.USER]
    finally:
        await h.store.close()


async def test_two_users_never_see_each_other(harness):
    await harness.say("remember I love sushi", user="alice")
    await harness.say("I'm planning a trip to Kyoto", user="alice")
    await harness.say("/new", user="alice")
    await harness.say("what food do I love? any trip plans to Kyoto?", user="bob")
    bob = await harness.store.identities.find_user("console", "bob")
    thread = await harness.store.identities.thread_for_key(
        harness.message("x", user="bob").thread, ChatKind.PRIVATE, None, clock_now(harness))
    record = await harness.store.records.load_prompt_record(thread.id, bob.id)
    assert record["items"] == []


def clock_now(h):
    return h.clock.now()


async def test_group_facts_stay_in_their_group(harness):
    await harness.say("remember I am vegetarian", user="ana", chat="g1", kind=ChatKind.GROUP)
    await harness.say("what do I eat?", user="ana")  # her private chat
    ana = await harness.store.identities.find_user("console", "ana")
    private = await harness.store.identities.thread_for_key(
        harness.message("x", user="ana").thread, ChatKind.PRIVATE, None, clock_now(harness))
    record = await harness.store.records.load_prompt_record(private.id, ana.id)
    assert all(i["kind"] != ItemKind.FACT.value for i in record["items"])
    # and Ben in the group does not get Ana's fact
    await harness.say("what do I eat?", user="ben", chat="g1", kind=ChatKind.GROUP)
    ben = await harness.store.identities.find_user("console", "ben")
    group = await harness.store.identities.thread_for_key(
        harness.message("x", user="ben", chat="g1").thread, ChatKind.GROUP, "g1",
        clock_now(harness))
    record = await harness.store.records.load_prompt_record(group.id, ben.id)
    assert all(i["kind"] != "fact" for i in record["items"])


async def test_why_tokens_add_up(harness):
    await harness.say("remember I live in Graz")
    await harness.say("/new")
    await harness.say("where do I live?")
    why = (await harness.say("/why"))[0]
    total, items, headings = map(int, re.search(
        r"(\d+) of 1000 memory tokens \((\d+) in the items, (\d+) in headings\)", why).groups())
    listed = sum(int(n) for n in re.findall(r"score [\d.]+, (\d+) tokens", why))
    assert items == listed and total == items + headings and headings > 0


async def test_why_and_help_and_unknown(harness):
    assert "haven't replied" in (await harness.say("/why"))[0]
    await harness.say("hello")
    assert (await harness.say("/why"))[0].startswith("For my last reply I recalled")
    help_text = (await harness.say("/help"))[0]
    from bot.commands import COMMANDS

    assert all(f"/{name}" in help_text for name in COMMANDS if name != "start")  # all listed
    assert "Unknown command /frobnicate" in (await harness.say("/frobnicate"))[0]
    assert (await harness.say("   "))[0].startswith("(empty message")


async def test_timezone_in_any_case_and_memory_on_when_already_on(harness):
    assert (await harness.say("/timezone europe/vienna"))[0].startswith("Time zone set to Europe/Vienna")
    user = await harness.store.identities.find_user("console", "alice")
    assert user.timezone == "Europe/Vienna"
    assert (await harness.say("/memory_on"))[0].startswith("Memory is already on")
    await harness.say("/memory_off")
    assert (await harness.say("/memory_on"))[0].startswith("Memory is on again")


async def test_forget_in_a_plain_message_points_to_the_command_and_deletes_nothing(harness):
    await harness.say("remember I prefer tea")
    out = await harness.say("Forget that I prefer tea.")
    assert any(line.startswith("To delete something I remember, send /forget") for line in out)
    assert any("要删除我记住的内容" in line for line in await harness.say("忘掉我喜欢喝茶"))
    user = await harness.store.identities.find_user("console", "alice")
    assert [f.text for f in await harness.memory.facts_for(user.id)] == ["The user prefers tea"]
    assert not any("/forget" in line for line in await harness.say("I forget things a lot"))


async def test_invisible_direction_marks_do_not_hide_a_request(harness):
    out = await harness.say("\u202eRemember that I live in Wien\u202c")
    assert any(line.startswith("Noted: The user lives in Wien") for line in out), out


async def test_memories_episodes_shows_open_tasks(harness):
    await harness.say("I'm planning the Lisbon trip. I still need to book the hotel.")
    await harness.say("/new")
    listing = (await harness.say("/memories episodes"))[0]
    assert "Open tasks: I still need to book the hotel." in listing


async def test_forget_words_names_the_command_to_send(harness):
    await harness.say("remember I live in Graz")
    await harness.say("remember I'm allergic to peanuts")
    await harness.say("remember that peanuts are my least favourite snack")
    one = (await harness.say("/forget Graz"))[0]
    assert one.endswith("Send /forget 1 to delete it.")
    several = (await harness.say("/forget peanuts"))[0]
    assert "2. The user is allergic to peanuts" in several
    assert several.endswith("(for example /forget 2) to delete it.")
