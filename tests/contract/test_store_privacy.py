"""Privacy: a deletion takes what was derived from what it deletes and leaves a purge record;
one user's forgetting never touches another's memory; every read stays in its scope."""

from __future__ import annotations

from memory.records import EpisodeDraft, PromptRecord, RoundDraft, TurnWrites, WorkOutcome
from memory.types import ChatKind, Role

from tests.contract.support import store  # noqa: F401 (every backend in turn)
from tests.contract.support import Chat, at


async def consolidate(chat: Chat, session_id: int, turns, text: str | None = None) -> None:
    """Close the session and write its episode and one round per user turn."""
    store = chat.store
    await store.conversations.close_session(session_id, chat.now(), "new")
    job = next(w for w in await store.work.pending_work() if w.session_id == session_id)
    rounds = []
    for n, turn in enumerate(turns):
        if turn.role is Role.USER:
            held = [turn] + [t for t in turns[n + 1:n + 2] if t.role is Role.ASSISTANT]
            rounds.append(RoundDraft(tuple(t.id for t in held),
                                     "\n".join(f"{t.speaker}: {t.text}" for t in held),
                                     turn.created_at))
    await store.work.complete_work(job.id, WorkOutcome(
        session_id=session_id, scope=chat.scope, rounds=tuple(rounds),
        episode=EpisodeDraft(text or " ".join(t.text for t in turns), (),
                             tuple(t.id for t in turns)),
        started_at=turns[0].created_at, ended_at=turns[-1].created_at, now=chat.now()))


async def test_forgetting_a_fact_takes_its_history_sources_and_what_derived_from_them(store):
    ada = await Chat.open(store)
    said = await ada.say("I live in Graz")
    reply = await ada.reply("Graz is lovely.")
    kept = await ada.say("I like chess")
    await ada.reply("Chess is a fine game.")
    old = await ada.fact("The user lives in Graz", turn=said, topic="home")
    await consolidate(ada, said.session_id,
                      await store.conversations.session_turns(said.session_id))
    moved = await ada.say("I moved to Linz")
    new = await ada.fact("The user lives in Linz", turn=moved, topic="home", supersedes=[old.id])
    echo = await ada.reply("You live in Linz.", writes=TurnWrites(recalled=(f"fact:{new.id}",)))
    await store.records.save_prompt_record(PromptRecord(
        ada.thread.id, ada.user.id, {"items": [{"key": f"fact:{new.id}"}]}, at(99)))
    assert [t.text for t in await store.privacy.fact_with_history(ada.user.id, new.id)] == [
        "The user lives in Linz", "The user lives in Graz"]
    assert await store.privacy.fact_deletion_messages(ada.user.id, new.id) == [
        "I live in Graz", "I moved to Linz"]

    result = await store.privacy.delete_fact(ada.user.id, new.id, at(100))
    assert (result.facts, result.episodes, result.rounds) == (2, 1, 1)
    assert result.fact_texts == ("The user lives in Linz", "The user lives in Graz")
    assert set(result.index_keys) >= {f"fact:{new.id}", f"fact:{old.id}"}
    assert result.resummarise == (said.session_id,)  # its closed episode cited a source
    left = {t.id for t in await store.conversations.get_turns(
        [said.id, reply.id, kept.id, moved.id, echo.id])}
    assert left == {kept.id}  # sources, the reply in their round and the echo are gone
    assert await store.facts.list_facts(ada.user.id, list(type(old.status))) == []
    assert await store.records.load_prompt_record(ada.thread.id, ada.user.id) is None
    (purge,) = await store.privacy.pending_purges()
    assert purge.id == result.purge_id and purge.index_keys == result.index_keys
    await store.privacy.purge_done(purge.id)
    assert await store.privacy.pending_purges() == []


async def test_forgetting_a_fact_of_another_user_deletes_nothing(store):
    ada, bob = await Chat.open(store), await Chat.open(store, "bob")
    fact = await ada.fact("The user lives in Graz", turn=await ada.say("I live in Graz"))
    result = await store.privacy.delete_fact(bob.user.id, fact.id, at(5))
    assert (result.facts, result.purge_id) == (0, None)
    assert await store.facts.get_facts([fact.id]) != {}


async def test_forget_all_takes_one_user_and_leaves_the_others(store):
    ada, bob = await Chat.open(store), await Chat.open(store, "bob")
    group_ada = await Chat.open(store, "ada", chat="club", kind=ChatKind.GROUP)
    group_bob = Chat(store, bob.user, group_ada.thread)
    mine = [await ada.say("I keep bees"), await ada.reply("Nice.")]
    await ada.fact("The user keeps bees", turn=mine[0])
    theirs = [await bob.say("I keep goats"), await bob.reply("Fine.")]
    bobs = await bob.fact("The user keeps goats", turn=theirs[0])
    in_group = [await group_ada.say("ada in the club"), await group_bob.say("bob in the club")]
    await consolidate(ada, mine[0].session_id, mine)
    await consolidate(bob, theirs[0].session_id, theirs)
    preview = await store.privacy.forget_all_preview(ada.user.id)
    result = await store.privacy.forget_all(ada.user.id, at(200))
    assert (preview.facts, preview.episodes, preview.rounds, preview.turns) == (
        result.facts, result.episodes, result.rounds, result.turns) == (1, 1, 1, 3)
    assert await store.facts.list_facts(ada.user.id, [bobs.status]) == []
    assert await store.conversations.get_turns([t.id for t in mine]) == []
    assert [t.text for t in await store.conversations.get_turns(
        [in_group[0].id, in_group[1].id])] == ["bob in the club"]
    assert [f.id for f in await store.facts.active_facts(bob.user.id, bob.scope)] == [bobs.id]
    assert len(await store.episodes.episodes_in_scope(bob.scope)) == 1
    assert len(await store.conversations.get_turns([t.id for t in theirs])) == 2
    (purge,) = await store.privacy.pending_purges()
    assert purge.user_id == ada.user.id and set(purge.index_keys) == set(result.index_keys)


async def test_reads_stay_in_their_scope(store):
    ada = await Chat.open(store)
    group = await Chat.open(store, "ada", chat="club", kind=ChatKind.GROUP)
    bob = await Chat.open(store, "bob")
    private = await ada.fact("The user keeps bees", turn=await ada.say("I keep bees"))
    public = await group.fact("The user chairs the club", turn=await group.say("I chair it"))
    await bob.fact("The user keeps goats", turn=await bob.say("I keep goats"))
    assert [f.id for f in await store.facts.active_facts(ada.user.id, ada.scope)] == [private.id]
    assert [f.id for f in await store.facts.facts_in_scope(ada.user.id, group.scope)] == [
        public.id]
    assert await store.facts.active_facts(bob.user.id, ada.scope) == []
    assert [f.id for f in await store.facts.facts_of_thread(group.thread.id)] == [public.id]
    turns = [await ada.say("more"), await ada.reply("ok")]
    await consolidate(ada, turns[0].session_id,
                      await store.conversations.session_turns(turns[0].session_id))
    assert len(await store.episodes.episodes_in_scope(ada.scope)) == 1
    assert await store.episodes.episodes_in_scope(group.scope) == []
    assert await store.episodes.episodes_in_scope(bob.scope) == []


async def test_retention_deletes_old_consolidated_turns_with_their_rounds(store):
    ada = await Chat.open(store)
    old = [await ada.say("an old message"), await ada.reply("an old answer")]
    await consolidate(ada, old[0].session_id, old)
    fresh = await ada.say("a message of the open session")
    result = await store.privacy.delete_consolidated_turns(at(500), at(501))
    assert (result.turns, result.rounds, len(result.index_keys)) == (2, 1, 1)
    assert [t.id for t in await store.conversations.get_turns(
        [*(t.id for t in old), fresh.id])] == [fresh.id]
    assert len(await store.episodes.all_episodes()) == 1  # episodes stay
    again = await store.privacy.delete_consolidated_turns(at(500), at(502))
    assert (again.turns, again.rounds) == (0, 0)


async def test_an_edit_drops_replies_quoting_the_old_text_and_rewrites_its_round(store):
    ada = await Chat.open(store)
    said = await ada.say("My dog is called Rex", pmid="m1")
    quoting = await ada.reply("Rex is a good name.")
    other = await ada.say("I like walks")
    await consolidate(ada, said.session_id, [said, quoting, other])
    edited = await store.conversations.edit_user_turn(ada.thread.id, "m1",
                                                      "My dog is called Max", at(300))
    assert edited is not None and edited[0].text.endswith("Rex") and edited[1].text.endswith("Max")
    cascade = await store.privacy.drop_derived_from_edit(
        ada.user.id, said.id, {"rex"}, at(301),
        round_text=lambda turns: "\n".join(f"{t.speaker}: {t.text}" for t in turns))
    assert cascade.replies == 1 and len(cascade.rebuilt) == 1
    assert await store.conversations.get_turns([quoting.id]) == []
    (rebuilt,) = (await store.episodes.get_rounds(cascade.rebuilt)).values()
    assert rebuilt.turn_ids == (said.id,) and rebuilt.text == "Ada: My dog is called Max"
    assert await store.episodes.all_episodes() == []  # the episode citing it goes
    assert cascade.resummarise == (said.session_id,)
    assert [p.id for p in await store.privacy.pending_purges()] == [cascade.purge_id]
