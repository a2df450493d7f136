"""Episodic memory: folding long sessions, episode content, durable exactly-once consolidation,
on real SQLite (temporary folder), the in-memory index and a hand-driven clock."""

from __future__ import annotations

import asyncio

from memory.service import MemoryConfig
from memory.types import ChatKind, ModelReply, Role
from tests.conftest import make_harness


class Brief:
    """A scripted model with short replies (the offline model echoes memory, which is long)."""

    name = "brief"

    async def complete(self, **kw):
        return ModelReply("Noted, thanks.", self.name)


async def _session_episode(h, session_id=1):
    return await h.store.episodes.session_episode(session_id)


async def test_a_120_turn_session_folds_three_times_and_keeps_everything(tmp_path, clock):
    h = await make_harness(tmp_path, clock, config=MemoryConfig(summary_trigger_messages=40),
                           model=Brief())
    try:
        for i in range(60):  # 60 messages + 60 offline replies = 120 turns
            if i == 1:
                text = "The total budget for the Lisbon trip is $4,200 and we fly on 2027-04-12."
            elif i == 24:
                text = "Let's go with the riverside hotel in Alfama for all five nights."
            elif i == 30:
                text = "We still need to book the airport transfer."
            else:
                text = f"Here is small talk number {i} about nothing in particular."
            await h.say(text)
            await h.memory.drain()  # background folds finish before the next message
        episode = await _session_episode(h)
        assert episode.status == "running" and episode.folds == 3
        texts = [k.text for k in episode.key_data]
        assert any("$4,200" in t for t in texts)  # key data of the first fold is still there
        assert any("riverside hotel" in d for d in episode.decisions)
        assert any("airport transfer" in t for t in episode.open_tasks)
        session = await h.store.conversations.open_session(1)
        assert session.folded_through > 0
        ctx = await h.memory.context(h.message("x"))
        window = await h.memory.working_memory(ctx)
        assert 10 <= len(window) <= 41 and all(t.id > session.folded_through for t in window)
        # at turn 121 both the early fact and the decision are in the prompt
        await h.say("What was the budget, and which hotel did we pick?")
        record = await h.store.records.load_prompt_record(1, ctx.user.id)
        prompt_memory = "\n".join(i["text"] for i in record["items"])
        assert "$4,200" in prompt_memory and "riverside hotel" in prompt_memory
        assert record["items"][0]["pinned"]
        # every turn is still stored; rounds of folded turns are indexed
        assert await h.store.count_rows("turns") == 122
        assert any(k.startswith("round:") for k in await h.index.keys())
    finally:
        await h.store.close()


async def test_closing_after_folds_finishes_the_same_episode(tmp_path, clock):
    h = await make_harness(tmp_path, clock, config=MemoryConfig(summary_trigger_messages=6))
    try:
        for i in range(8):
            await h.say(f"Message {i}: the flight number is LH{1000 + i}.")
            await h.memory.drain()
        await h.say("/new")
        assert await h.store.count_rows("episodes") == 1
        episode = await _session_episode(h)
        assert episode.status == "closed" and episode.folds >= 1
        assert any("LH1000" in k.text for k in episode.key_data)
        assert any("LH1007" in k.text for k in episode.key_data)
        rounds = await h.store.episodes.all_rounds()
        covered = sorted(t for r in rounds for t in r.turn_ids)
        assert covered == list(range(1, 17))  # every turn in exactly one round
    finally:
        await h.store.close()


async def test_open_tasks_stay_open_across_episodes_until_done(harness):
    await harness.say("We still need to book the hotel in Porto.")
    await harness.say("/new")
    await harness.say("I looked at train times today.")
    await harness.say("/new")
    second = await harness.store.episodes.session_episode(2)
    assert any("book the hotel" in t for t in second.open_tasks)
    await harness.say("Good news: I booked the hotel in Porto already.")
    await harness.say("/new")
    third = await harness.store.episodes.session_episode(3)
    assert not any("hotel" in t for t in third.open_tasks)


async def test_duplicate_and_racing_triggers_leave_one_episode(harness):
    await harness.say("Planning a trip to Kyoto in 2027.")
    ctx = await harness.memory.context(harness.message("x"))
    session = await harness.store.conversations.open_session(ctx.thread.id)
    assert await harness.store.conversations.close_session(session.id, harness.clock.now(), "idle")
    assert not await harness.store.conversations.close_session(session.id, harness.clock.now(), "new")
    done = await asyncio.gather(*[harness.memory.consolidate_pending() for _ in range(4)])
    assert sum(done) == 1
    assert await harness.store.count_rows("episodes") == 1
    assert await harness.store.work.pending_work() == []


async def test_first_turn_of_the_next_session_sees_the_previous_episode(harness):
    await harness.say("I'm comparing LanceDB and pgvector for the quant platform.")
    ctx = await harness.memory.context(harness.message("x"))
    session = await harness.store.conversations.open_session(ctx.thread.id)
    # the idle timer closed the session but its consolidation has not run yet
    await harness.store.conversations.close_session(session.id, harness.clock.now(), "idle")
    harness.clock.advance(0.5)
    await harness.say("so which one did we prefer?")
    record = await harness.store.records.load_prompt_record(ctx.thread.id, ctx.user.id)
    assert record["items"] and record["items"][0]["pinned"]
    assert "LanceDB" in record["items"][0]["text"]


async def test_a_follow_up_right_after_new_sees_the_episode(harness):
    await harness.say("Remember the plan: migrate the billing service to Go 1.23 by 2027-01-15.")
    await harness.say("/new")
    await harness.say("ok, what was the plan?")
    ctx = await harness.memory.context(harness.message("x"))
    record = await harness.store.records.load_prompt_record(ctx.thread.id, ctx.user.id)
    assert any("billing service" in i["text"] and i["pinned"] for i in record["items"])


async def test_group_episodes_name_participants_and_stay_in_their_thread(harness):
    await harness.say("Let's meet at 7pm at the station.", user="ana", chat="g", kind=ChatKind.GROUP)
    await harness.say("I'll bring the tickets for 2 people.", user="ben", chat="g", kind=ChatKind.GROUP)
    await harness.say("/new", user="ana", chat="g", kind=ChatKind.GROUP)
    episode = await harness.store.episodes.session_episode(1)
    assert set(episode.participants) == {"Ana", "Ben"}
    assert episode.scope.kind == "thread"
    # not recalled in Ana's private chat
    await harness.say("when do we meet at the station?", user="ana")
    ana = await harness.store.identities.find_user("console", "ana")
    private = await harness.memory.context(harness.message("x", user="ana"))
    record = await harness.store.records.load_prompt_record(private.thread.id, ana.id)
    assert record["items"] == []


async def test_round_keys_are_expanded_with_facts_and_dates(harness):
    harness.clock.set(harness.clock.now().replace(year=2023, month=5, day=8))
    await harness.say("I went to a support group yesterday and it helped a lot.")
    await harness.say("remember I live in Graz")
    await harness.say("/new")
    rows = {k: v for k, v in harness.index.rows.items() if k.startswith("round:")}
    keys = " ".join(r.search_text for r in rows.values())
    assert "2023 05 07" in keys and "may 2023 sunday" in keys  # "yesterday", resolved
    assert "graz" in keys and "lives" in keys  # the fact drawn from the round
    assert all(r.text for r in rows.values())
    turns = await harness.store.conversations.get_turns(range(1, 10))
    assert [t.role for t in turns][:2] == [Role.USER, Role.ASSISTANT]


async def test_the_pinned_episode_is_brief_unless_the_message_relates_to_it(harness):
    await harness.say("I'm repainting the garden shed in dark green this weekend. "
                      "The hardware store on Elm Street sells the varnish.")
    await harness.say("We still need to buy sandpaper for the shed.")
    await harness.say("/new")
    ctx = await harness.memory.context(harness.message("x"))
    threshold = harness.memory.config.threshold

    await harness.say("Any tips for a sourdough starter?")
    record = await harness.store.records.load_prompt_record(ctx.thread.id, ctx.user.id)
    pinned = record["items"][0]
    assert pinned["pinned"] and pinned["kind"] == "episode" and pinned["score"] < threshold
    # unrelated: the first sentence of its summary, what the last session was about
    assert "repainting the garden shed" in pinned["text"]
    assert "Open tasks" not in pinned["text"] and "Elm Street" not in pinned["text"]
    assert pinned["parts"]["cut"] and pinned["parts"]["text"].startswith("I'm repainting")
    assert pinned["tokens"] <= harness.memory.recaller.policy.pinned_unrelated_tokens
    brief_tokens = pinned["tokens"]

    # in the same session: the same pinned episode, now related to the message
    await harness.say("Which colour am I repainting the garden shed, and where is the varnish sold?")
    record = await harness.store.records.load_prompt_record(ctx.thread.id, ctx.user.id)
    related = [i for i in record["items"] if i["pinned"] and i["kind"] == "episode"][0]
    assert related["key"] == pinned["key"] and related["score"] >= threshold
    assert "Open tasks" in related["text"] and related["tokens"] > brief_tokens


async def test_a_brief_pinned_episode_without_spaces_is_cut_by_characters(harness):
    first = "其他南京警务年度盛典的主要内容是总结过去一年南京警务工作，表彰优秀干警，展望新年工作计划，提升团队凝聚力。"
    await harness.say(first + "我同事的名字叫李明杰。")
    await harness.say("/new")
    ctx = await harness.memory.context(harness.message("x"))
    await harness.say("Any tips for a sourdough starter?")
    record = await harness.store.records.load_prompt_record(ctx.thread.id, ctx.user.id)
    pinned = record["items"][0]
    assert pinned["pinned"] and pinned["kind"] == "episode"
    assert pinned["score"] < harness.memory.config.threshold
    limit = harness.memory.recaller.policy.pinned_unrelated_tokens
    assert limit - 3 <= pinned["tokens"] <= limit  # filled up to the bound, not left empty
    assert "其他南京警务年度盛典" in pinned["text"] and pinned["text"].endswith(" …")
    assert "李明杰" not in pinned["text"]
    assert first.startswith(pinned["parts"]["text"]) and pinned["parts"]["cut"]
