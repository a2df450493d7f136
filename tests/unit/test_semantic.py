"""Semantic memory behaviour, table-driven, English and Chinese, through the engine on real
SQLite (temporary folder), the in-memory index and a hand-driven clock.

Each case is a list of sessions (lists of user messages); sessions are separated by /new and
one day apart. The expectation is the set of active facts and of superseded facts afterwards.
"""

from __future__ import annotations

import pytest

from memory.types import FactStatus, Role
from tests.conftest import make_harness

CASES = {
    "restatement (one fact)": (
        [["remember I'm allergic to peanuts"], ["Just so you know, remember I'm allergic to peanuts"]],
        ["The user is allergic to peanuts"], []),
    "restatement zh": (
        [["记住我对花生过敏"], ["记住：我对花生过敏"]], ["用户对花生过敏"], []),
    "paraphrased restatement (one fact)": (
        [["remember I live in Graz"], ["remember that I'm based in Graz"]],
        ["The user lives in Graz"], []),
    "paraphrased restatement zh": (
        [["记住我住在成都"], ["记住，我现在住在成都"]], ["用户住在成都"], []),
    "changed value on a known topic": (
        [["remember I live in Graz"], ["I've moved to Linz"]],
        ["The user lives in Linz"], ["The user lives in Graz"]),
    "changed value zh": (
        [["记住我主要用 Python"], ["我现在改用Go了"]], ["用户主要用Go编程"], ["用户主要用Python编程"]),
    "contradiction": (
        [["remember I love sushi"], ["I've gone off sushi completely, I can't stand it now."]],
        ["The user dislikes sushi"], ["The user likes sushi"]),
    "contradiction zh": (
        [["记住我喜欢寿司"], ["我现在不喜欢寿司了"]], ["用户不喜欢寿司"], ["用户喜欢寿司"]),
    "unrelated facts in a row (both kept)": (
        [["remember I want to travel the world"], ["remember I like late-night snacks at weekends"]],
        ["The user wants to travel the world", "The user likes late-night snacks at weekends"], []),
    "unrelated facts zh": (
        [["记住我想环游世界"], ["记住我周末喜欢吃夜宵"]], ["用户想环游世界", "用户喜欢夜宵"], []),
    "additive statement retires nothing": (
        [["remember I work as a nurse at St. Elena Hospital"],
         ["I've also started volunteering on St. Elena's ethics committee."]],
        ["The user works at St Elena Hospital", "The user's job is nurse"], []),
    "third-party statement keeps its subject": (
        [["remember my friend Jonas hates football"]],
        ["The user's friend Jonas hates football"], []),
    "third-party zh": (
        [["记住我朋友小李不吃香菜"]], ["用户朋友小李不吃香菜"], []),
    "chit-chat writes nothing": (
        [["nice weather today"], ["nice weather today"], ["haha ok"]], [], []),
    "chit-chat zh": (
        [["今天天气不错"], ["今天天气不错"]], [], []),
    "repetition across sessions writes one fact": (
        [["I mainly use Python for work"], ["I mainly use Python, by the way"]],
        ["The user mainly programs in Python"], []),
    "repetition of a free statement": (
        [["I have two cats named Tom and Jerry"], ["I have two cats named Tom and Jerry"]],
        ["The user has two cats named Tom and Jerry"], []),
    "said once is not remembered": (
        [["I mainly use Python for work"]], [], []),
    "repetition within one session is not repetition": (
        [["I have two cats", "I have two cats"]], [], []),
    "passing states are not facts": (
        [["I'm tired today"], ["I'm tired today"]], [], []),
    "ended fact": (
        [["remember I drink green tea every morning"], ["I quit green tea."],
         ["remember I switched to black coffee"]],
        ["The user drinks black coffee in the morning"],
        ["The user drinks green tea in the morning"]),
    "every statement of a request is written": (
        [["Remember that my favourite colour is blue and I like jazz."]],
        ["The user likes jazz", "The user's favourite colour is blue"], []),
    "every statement of a request is written zh": (
        [["记住我不吃辣，我老婆叫Maria。"]], ["用户不吃辣", "用户的妻子叫Maria"], []),
    "not allergic ends the allergy and the new one is kept": (
        [["remember I'm allergic to peanuts"],
         ["Actually I am not allergic to peanuts, I am allergic to shrimp."]],
        ["The user is allergic to shrimp"], ["The user is allergic to peanuts"]),
    "not allergic ends the allergy zh": (
        [["记住我对花生过敏"], ["其实我对花生不过敏，是对虾过敏。"]],
        ["用户对虾过敏"], ["用户对花生过敏"]),
    "no longer allergic zh": (
        [["记住我对花生过敏"], ["我对花生不过敏了。"]], [], ["用户对花生过敏"]),
    "not eating something does not end an allergy": (
        [["remember I'm allergic to peanuts"], ["I don't eat peanuts anymore."]],
        ["The user is allergic to peanuts"], []),
    "corrections in Chinese with time words and shared subjects": (
        [["记住我住在北京"], ["其实我上个月搬到上海了。"], ["记住我老婆叫王芳。"],
         ["不对，我老婆叫王芳芳，不是王芳。"], ["记住我在百度工作"], ["我换工作了，现在在腾讯。"]],
        ["用户住在上海", "用户的妻子叫王芳芳", "用户在腾讯工作"],
        ["用户住在北京", "用户的妻子叫王芳", "用户在百度工作"]),
    "a job and an employer in one request zh": (
        [["我是一名软件工程师，在百度工作，记住了。"]],
        ["用户在百度工作", "用户的职业是软件工程师"], []),
    "our daughter is the user's daughter zh": (
        [["记住我老婆叫王芳，我们有一个女儿叫小雨。"]],
        ["用户有一个女儿叫小雨", "用户的妻子叫王芳"], []),
    "a standing instruction after a statement zh": (
        [["我喜欢吃饺子，以后都推荐饺子馆。"]], ["以后都推荐饺子馆", "用户喜欢饺子"], []),
    "a standing instruction after a statement": (
        [["I love dumplings, from now on suggest dumpling places."]],
        ["From now on suggest dumpling places", "The user likes dumplings"], []),
    "not vegetarian anymore ends the diet": (
        [["Don't forget that I'm vegetarian."], ["I'm not vegetarian anymore."]],
        [], ["The user's diet: vegetarian"]),
    "an ended thing must be the fact's value as whole words": (
        [["remember I drink tea every morning"], ["I don't eat steak anymore."],
         ["I'm not sure anymore."]],
        ["The user drinks tea in the morning"], []),
    "correction writes at once": (
        [["No, I live in Linz, not Graz"]], ["The user lives in Linz"], []),
    "correction zh": (
        [["不对，我住在上海"]], ["用户住在上海"], []),
    "a new allergy adds, not replaces": (
        [["remember I'm allergic to peanuts"], ["remember I'm allergic to shellfish"]],
        ["The user is allergic to peanuts", "The user is allergic to shellfish"], []),
    "question states nothing": (
        [["remember I live in Graz"], ["Do I live in Linz?"]], ["The user lives in Graz"], []),
    "a question opening with remember writes nothing": (
        [["Remember that restaurant we talked about? What was it called?"],
         ["Remember that time we went to Rome?"]], [], []),
    "a question opening with remember zh": (
        [["记得我上次说的那家餐厅吗？"]], [], []),
    "a request in a later sentence is written at once": (
        [["Great, thanks! Remember that I prefer tea. Can you suggest a cafe?"]],
        ["The user prefers tea"], []),
    "a request asked as a question is written at once": (
        [["Can you remember that I like jazz?"], ["Remember that I'm vegan, okay?"]],
        ["The user likes jazz", "The user's diet: vegan"], []),
    "a request asked as a question zh": (
        [["你能记住我不吃辣吗？"]], ["用户不吃辣"], []),
    "a task with 记得 is not a fact": (
        [["记得明天带伞"], ["记得给妈妈打电话，好吗？"]], [], []),
    "moving or switching to something is not a morning drink": (
        [["remember I live in Graz"], ["Actually I moved to Linz."],
         ["I switched to Go, remember that."], ["I changed to the night shift, remember that"]],
        ["The user lives in Linz", "The user mainly programs in Go",
         "The user changed to the night shift"], ["The user lives in Graz"]),
    "a new answer length replaces the old one": (
        [["From now on answer briefly."], ["From now on give detailed answers."]],
        ["The user prefers detailed answers"], ["The user prefers brief answers"]),
    "a request in a later sentence zh": (
        [["谢谢！记住我不吃辣。"]], ["用户不吃辣"], []),
    "a new age replaces the old one": (
        [["By the way, I just turned 32 last month. Remember that."],
         ["Actually I'm 33 now, remember that"]],
        ["The user is 33 years old"], ["The user is 32 years old"]),
    "an age said in passing twice zh": (
        [["我上个月刚满32岁"], ["我上个月刚满32岁"]], ["用户32岁"], []),
    "a request after a quit keeps its verb": (
        [["I quit tea. Remember that I now drink coffee."]], ["The user now drinks coffee"], []),
    "several facts in one Chinese request": (
        [["记住：我叫李明，我在成都做护士，我不吃辣"]],
        ["称呼用户为李明", "用户的职业是护士", "用户不吃辣"], []),
}


async def run_sessions(h, sessions, user="alice"):
    for n, session in enumerate(sessions):
        if n:
            await h.say("/new", user=user)
            h.clock.advance(86400)
        for text in session:
            await h.say(text, user=user)


async def facts_of(h, user="alice"):
    u = await h.store.identities.find_user("console", user)
    active = await h.store.facts.list_facts(u.id, [FactStatus.ACTIVE])
    old = await h.store.facts.list_facts(u.id, [FactStatus.SUPERSEDED])
    return active, old


@pytest.mark.parametrize("name", list(CASES))
async def test_write_policy(harness, name):
    sessions, want_active, want_superseded = CASES[name]
    await run_sessions(harness, sessions)
    active, old = await facts_of(harness)
    assert sorted(f.text for f in active) == sorted(want_active)
    assert sorted(f.text for f in old) == sorted(want_superseded)
    for fact in old:  # superseded facts keep their dates, as history
        assert fact.valid_to is not None and fact.valid_to > fact.valid_from


async def test_restating_never_reduces_facts_and_counts_confirmations(harness):
    await run_sessions(harness, [["remember I'm allergic to peanuts", "remember I live in Graz"],
                                 ["remember I'm allergic to peanuts"], ["I live in Graz"]])
    active, _ = await facts_of(harness)
    assert len(active) == 2
    by_text = {f.text: f for f in active}
    assert by_text["The user is allergic to peanuts"].confirmations == 2
    assert by_text["The user lives in Graz"].confirmations == 2


async def test_supersession_dates_come_from_the_messages(harness):
    await run_sessions(harness, [["remember I mainly use Python"], ["I switched to Go"]])
    active, old = await facts_of(harness)
    assert active[0].valid_from == old[0].valid_to
    assert (active[0].valid_from - old[0].valid_from).days >= 1


async def test_relative_dates_are_resolved_against_the_message_time(harness):
    # the harness clock starts on 2026-11-30 09:00 UTC
    await harness.say("remember my exam is tomorrow")
    await harness.say("记住我下周五去北京出差")
    active, _ = await facts_of(harness)
    texts = sorted(f.text for f in active)
    assert texts == ["The user's exam is on 2026-12-01", "用户2026-12-11去北京出差"]


async def test_time_zone_of_the_user_is_used(harness):
    harness.clock.advance(11 * 3600)  # 2026-11-30 20:00 UTC = 2026-12-01 04:00 in Shanghai
    assert "Asia/Shanghai" in (await harness.say("/timezone Asia/Shanghai"))[0]
    assert "not a time zone" in (await harness.say("/timezone Mars/Olympus"))[0]
    await harness.say("remember my flight is tomorrow")
    active, _ = await facts_of(harness)
    assert active[0].text == "The user's flight is on 2026-12-02"


async def test_over_long_request_is_condensed_not_stored_whole(harness):
    lease = ("Remember this: my lease at 12 Elm Street runs until 2027-03-31, the rent is $1,450 "
             "a month, the deposit was two months, pets are allowed with written consent, "
             "and the landlord must give 60 days notice. " * 20)
    await harness.say(lease)
    active, _ = await facts_of(harness)
    assert len(active) == 1
    text = active[0].text
    assert len(text.split()) <= 20 and len(text) <= 200
    assert "12 Elm Street" in text or "2027-03-31" in text


async def test_the_assistants_words_never_become_facts(tmp_path, clock):
    class Suggests:
        name = "scripted"

        async def complete(self, **kw):
            from memory.types import ModelReply
            return ModelReply("Remember that you love sushi and you live in Paris. I'm vegan.",
                              "scripted")

    h = await make_harness(tmp_path, clock, model=Suggests())
    try:
        for session in (["what should I eat?"], ["ok"], ["what should I eat?"]):
            for text in session:
                await h.say(text)
            await h.say("/new")
        u = await h.store.identities.find_user("console", "alice")
        assert await h.store.facts.list_facts(u.id, list(FactStatus)) == []
        sessions = await h.store.conversations.session_turns(1)
        assert any(t.role is Role.ASSISTANT for t in sessions)
    finally:
        await h.store.close()


async def test_a_redacted_secret_is_not_turned_into_a_fact(harness):
    replies = await harness.say("remember that my key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz")
    active, _ = await facts_of(harness)
    assert active == []
    assert "did not keep the api key" in replies[-1]


async def test_history_is_recalled_only_for_questions_about_the_past(harness):
    await run_sessions(harness, [["remember I mainly use Python"], ["I switched to Go"]])
    u = await harness.store.identities.find_user("console", "alice")
    ctx = await harness.memory.context(harness.message("x"))
    now = await harness.memory.recall(ctx, "which programming language do I use: Python or Go?",
                                      touch=False)
    past = await harness.memory.recall(ctx, "which language did I use before, Python?",
                                       touch=False)
    now_facts = [i.text for i in now.blocks.items if i.kind.value == "fact"]
    past_facts = [i.text for i in past.blocks.items if i.kind.value == "fact"]
    assert any("Go" in t for t in now_facts) and not any("Python" in t for t in now_facts)
    assert any("Python" in t and "no longer current" in t for t in past_facts)
    assert u is not None


async def test_memories_all_shows_history_with_dates(harness):
    await run_sessions(harness, [["remember I mainly use Python"], ["I switched to Go"]])
    listing = (await harness.say("/memories all"))[0]
    assert "1. The user mainly programs in Go (2026-12-01, private chat)" in listing
    assert "Superseded and archived:\n2. The user mainly programs in Python (valid 2026-11-30 to 2026-12-01)" in listing


async def test_notes_tell_the_user_what_changed(harness):
    assert (await harness.say("remember I live in Graz"))[0] == "Noted: The user lives in Graz"
    await harness.say("/new")
    reply = await harness.say("I moved to Linz")
    assert reply[0] == "Updated: The user lives in Linz (before: the user lives in Graz)"


async def test_bulk_forget_deletes_every_fact_in_one_go(harness):
    u = await harness.memory.context(harness.message("hi"))
    for i in range(250):
        await harness.store.facts.add_fact(
            user_id=u.user.id, kind="note", text=f"fact number {i}", topic=None,
            origin=u.thread, source_turn_ids=[], lang="en", scope=u.scope, now=harness.clock.now())
    await harness.say("remember I live in Graz")
    await harness.say("/forget all")
    reply = (await harness.say("yes"))[0]
    assert "251 fact(s)" in reply
    active, _ = await facts_of(harness)
    assert active == []
