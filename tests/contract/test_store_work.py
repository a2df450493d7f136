"""The work queue: a session's close job is recorded once, a fold job past the bounds only
while none is pending, and a job's outcome is written exactly once, all of it or nothing."""

from __future__ import annotations

import pytest

from memory.errors import StoreError
from memory.records import EpisodeDraft, FactOp, RoundDraft, WorkOutcome
from memory.types import FactStatus, KeyDatum

from tests.contract.support import store  # noqa: F401 (every backend in turn)
from tests.contract.support import Chat, at


def outcome(chat: Chat, session_id: int, turns, **kw) -> WorkOutcome:
    draft = EpisodeDraft(summary=kw.pop("summary", "Talked about bees."),
                         key_data=(KeyDatum("12 hives", turns[0].id),),
                         turn_ids=tuple(t.id for t in turns), open_tasks=("buy a smoker",))
    return WorkOutcome(session_id=session_id, scope=chat.scope, episode=draft,
                       rounds=(RoundDraft((turns[0].id,), "Ada: I keep bees", at(1)),),
                       started_at=turns[0].created_at, ended_at=turns[-1].created_at,
                       now=at(90), **kw)


async def test_a_close_job_is_done_exactly_once(store):
    ada = await Chat.open(store)
    turns = [await ada.say("I keep bees"), await ada.reply("How many hives?")]
    session = turns[0].session_id
    assert await store.conversations.close_session(session, at(60), "new")
    assert not await store.conversations.close_session(session, at(61), "new")  # once
    (job,) = await store.work.pending_work(thread_id=ada.thread.id)
    assert (job.kind, job.session_id, job.attempts) == ("close", session, 0)
    first = await store.work.complete_work(job.id, outcome(ada, session, turns))
    assert first.done and first.episode is not None and len(first.rounds) == 1
    again = await store.work.complete_work(job.id, outcome(ada, session, turns, summary="twice"))
    assert not again.done and again.episode is None and again.rounds == ()
    assert await store.work.work_done(job.id) and await store.work.pending_work() == []
    (episode,) = await store.episodes.episodes_in_scope(ada.scope)
    assert episode.summary == "Talked about bees." and episode.status == "closed"
    assert episode.key_data == (KeyDatum("12 hives", turns[0].id),)
    assert episode.open_tasks == ("buy a smoker",)
    assert len(await store.episodes.all_rounds()) == 1
    assert await store.episodes.last_episode(ada.thread.id) == episode


async def test_folds_update_the_running_episode_and_the_close_finishes_it(store):
    ada = await Chat.open(store)
    bounds = (3, 10_000, 1)  # more than 3 unfolded turns: a fold job
    turns = [await ada.say(f"message {n}", fold_after=bounds) for n in range(4)]
    session = turns[0].session_id
    (fold,) = await store.work.pending_work(thread_id=ada.thread.id)
    assert (fold.kind, fold.seq) == ("fold", 1)
    await ada.say("one more", fold_after=bounds)  # one fold pending: no second
    assert len(await store.work.pending_work()) == 1
    done = await store.work.complete_work(fold.id, outcome(ada, session, turns[:2],
                                                           folded_through=turns[1].id))
    assert done.episode.status == "running" and done.episode.folds == 1
    assert (await store.conversations.get_session(session)).folded_through == turns[1].id
    await store.conversations.close_session(session, at(80), "idle")
    (close,) = await store.work.pending_work(due_at=at(80))
    closed = await store.work.complete_work(close.id, outcome(ada, session, turns,
                                                              summary="All of it."))
    (episode,) = await store.episodes.all_episodes()  # one episode per session
    assert episode.id == done.episode.id == closed.episode.id
    assert (episode.status, episode.folds, episode.summary) == ("closed", 1, "All of it.")


async def test_a_failed_job_waits_until_its_retry_time(store):
    ada = await Chat.open(store)
    turn = await ada.say("hello")
    await store.conversations.close_session(turn.session_id, at(10), "new")
    (job,) = await store.work.pending_work()
    await store.work.fail_work(job.id, "ModelUnavailable: down", retry_after=at(40))
    assert await store.work.pending_work(due_at=at(39)) == []
    (later,) = await store.work.pending_work(due_at=at(40))
    assert later.attempts == 1 and later.retry_after == at(40)
    assert len(await store.work.pending_work()) == 1  # without due_at: every pending job


async def test_the_model_decisions_are_applied_with_the_job_and_skip_a_fact_gone_meanwhile(store):
    ada = await Chat.open(store)
    said = await ada.say("I live in Graz")
    home = await ada.fact("The user lives in Graz", turn=said, topic="home")
    jazz = await ada.fact("The user likes jazz", turn=said)
    moved = await ada.say("I moved to Linz last week")
    await store.facts.end_fact(jazz.id, ada.user.id, at(20))  # changed meanwhile
    await store.conversations.close_session(moved.session_id, at(30), "new")
    (job,) = await store.work.pending_work()
    ops = (FactOp("supersede", ada.user.id, ada.scope, ada.thread, moved.id, kind="profile",
                  text="The user lives in Linz", topic="home", valid_from=at(25),
                  target_id=home.id),
           FactOp("supersede", ada.user.id, ada.scope, ada.thread, moved.id,
                  text="The user likes blues", target_id=jazz.id),
           FactOp("confirm", ada.user.id, ada.scope, ada.thread, moved.id, target_id=home.id))
    result = await store.work.complete_work(job.id, outcome(ada, moved.session_id, [moved],
                                                            fact_ops=ops, episode_source="llm"))
    assert result.episode.source == "llm"
    new_id = next(i for i in result.changed_facts if i != home.id)
    assert sorted(result.changed_facts) == sorted([new_id, home.id])
    facts = await store.facts.get_facts([home.id, new_id, jazz.id])
    assert facts[home.id].status is FactStatus.SUPERSEDED and facts[home.id].valid_to == at(25)
    assert facts[new_id].mode == "llm" and facts[new_id].valid_from == at(25)
    assert facts[home.id].confirmations == 1  # confirm of a fact no longer active: nothing
    assert [f.text for f in await store.facts.active_facts(ada.user.id, ada.scope)] == [
        "The user lives in Linz"]


async def test_a_failing_outcome_writes_nothing_and_leaves_the_job_pending(store):
    ada = await Chat.open(store)
    turn = await ada.say("I keep bees")
    await store.conversations.close_session(turn.session_id, at(10), "new")
    (job,) = await store.work.pending_work()
    bad = (FactOp("add", ada.user.id, ada.scope, ada.thread, turn.id, text=""),)  # no text
    with pytest.raises(StoreError):
        await store.work.complete_work(job.id, outcome(ada, turn.session_id, [turn],
                                                       fact_ops=bad, episode_source="llm"))
    assert await store.episodes.all_episodes() == [] and await store.episodes.all_rounds() == []
    assert not await store.work.work_done(job.id)


async def test_memory_off_turns_are_dropped_with_the_job(store):
    ada = await Chat.open(store)
    kept = await ada.say("I keep bees")
    off = await ada.say("a secret", memory_off=True)
    await store.conversations.close_session(kept.session_id, at(10), "new")
    (job,) = await store.work.pending_work()
    await store.work.complete_work(job.id, outcome(ada, kept.session_id, [kept],
                                                   drop_turn_ids=(off.id,)))
    assert [t.id for t in await store.conversations.session_turns(kept.session_id)] == [kept.id]
