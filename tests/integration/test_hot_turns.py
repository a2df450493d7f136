"""The in-process hot working memory (memory/stores/sqlite/hot.py) is never
served stale: after every kind of write, what the reply path sees equals what a second,
cache-less connection reads from the same database."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import pytest

from memory.stores.sqlite.hot import HotTurns
from memory.records import SessionRow
from memory.stores.sqlite import SQLiteStore
from memory.types import Role, Turn
from tests.conftest import make_harness

LIMIT = 60


async def _truth(harness, thread_id: int):
    """The thread's open session and newest turns read by a fresh connection (no cache)."""
    fresh = await SQLiteStore.open(harness.store.path)
    try:
        return await fresh.conversations.working_turns(thread_id, LIMIT)
    finally:
        await fresh.close()


async def _thread_id(harness, user: str = "alice") -> int:
    ctx = await harness.memory.context(harness.message("x", user=user))
    return ctx.thread.id


async def _assert_fresh(harness, thread_id: int) -> None:
    assert await harness.store.conversations.working_turns(thread_id, LIMIT) == await _truth(harness, thread_id)


async def test_turns_are_served_from_the_cache_and_equal_a_fresh_read(harness):
    await harness.say("hello there")
    tid = await _thread_id(harness)
    await _assert_fresh(harness, tid)
    hits = harness.store.hot.hits
    for n in range(4):
        await harness.say(f"question number {n}")
        await _assert_fresh(harness, tid)
    assert harness.store.hot.hits > hits  # the reply path read from the cache
    session, turns = await harness.store.conversations.working_turns(tid, LIMIT)
    assert [t.role for t in turns] == [Role.USER, Role.ASSISTANT] * 5
    assert session.last_turn_at == turns[-1].created_at


async def test_an_edit_is_never_served_stale(harness):
    await harness.say("my favourite colour is blue", message_id="m1")
    await harness.say("and something else", message_id="m2")
    tid = await _thread_id(harness)
    await harness.store.conversations.working_turns(tid, LIMIT)  # cached
    await harness.engine.edit(harness.message("my favourite colour is green", message_id="m1"))
    _, turns = await harness.store.conversations.working_turns(tid, LIMIT)
    assert "green" in turns[0].text and not any("blue" in t.text for t in turns)
    await _assert_fresh(harness, tid)
    window = await harness.memory.working_memory(await harness.memory.context(
        harness.message("x")))
    assert not any("blue" in t.text for t in window)


async def test_forget_all_is_never_served_stale(harness):
    await harness.say("remember I live in Graz")
    await harness.say("what a day")
    tid = await _thread_id(harness)
    assert (await harness.store.conversations.working_turns(tid, LIMIT))[1]
    await harness.say("/forget all")
    await harness.say("yes")
    await _assert_fresh(harness, tid)
    _, turns = await harness.store.conversations.working_turns(tid, LIMIT)
    assert not any("Graz" in t.text or "what a day" in t.text for t in turns)


async def test_forget_one_fact_and_memory_off_and_new_session(harness):
    await harness.say("remember I drink green tea")
    tid = await _thread_id(harness)
    await harness.say("/forget 1")
    await _assert_fresh(harness, tid)
    await harness.say("/memory_off")
    await harness.say("remember my cat is called Tom")
    await _assert_fresh(harness, tid)
    before, _ = await harness.store.conversations.working_turns(tid, LIMIT)
    await harness.say("/new")  # closes and consolidates: memory-off turns are deleted
    await _assert_fresh(harness, tid)
    await harness.say("/memory_on")
    await harness.say("a new start")
    after, turns = await harness.store.conversations.working_turns(tid, LIMIT)
    assert after.id != before.id and not any("Tom" in t.text for t in turns)
    await _assert_fresh(harness, tid)


async def test_a_fold_moves_the_window(tmp_path, clock):
    from memory.service import MemoryConfig

    h = await make_harness(tmp_path, clock, config=MemoryConfig(summary_trigger_messages=12))
    try:
        for n in range(10):
            await h.say(f"we talk about topic {n} today")
        await h.memory.drain()
        tid = await _thread_id(h)
        await _assert_fresh(h, tid)
        session, _ = await h.store.conversations.working_turns(tid, LIMIT)
        assert session.folded_through > 0  # a fold ran and the cache knows its mark
        window = await h.memory.working_memory(await h.memory.context(h.message("x")))
        assert all(t.id > session.folded_through for t in window)
    finally:
        await h.store.close()


async def test_import_replace_and_idle_close_are_never_served_stale(harness):
    await harness.say("remember I live in Graz")
    tid = await _thread_id(harness)
    user = await harness.store.identities.find_user("console", "alice")
    doc = await harness.memory.export_user(user.id)
    await harness.say("one more thing")
    await harness.store.conversations.working_turns(tid, LIMIT)
    await harness.memory.import_user(doc, replace=True)
    await _assert_fresh(harness, tid)
    harness.clock.advance(7200)
    await harness.memory.close_idle_sessions(timeout_seconds=60)
    await _assert_fresh(harness, tid)
    assert (await harness.store.conversations.working_turns(tid, LIMIT)) == (None, [])


async def test_a_read_racing_a_write_does_not_fill_the_cache(harness, monkeypatch):
    await harness.say("first message", message_id="m1")
    tid = await _thread_id(harness)
    ctx = await harness.memory.context(harness.message("x"))
    harness.store.hot.begin_write(None)  # empty the cache
    harness.store.hot.end_write(None)
    read_done, edited = asyncio.Event(), asyncio.Event()
    real = harness.store.conversations.session_turns

    async def slow_read(*args, **kw):  # the read returns old rows after the edit committed
        rows = await real(*args, **kw)
        read_done.set()
        await edited.wait()
        return rows

    monkeypatch.setattr(harness.store.conversations, "session_turns", slow_read)
    reader = asyncio.ensure_future(harness.store.conversations.working_turns(tid, LIMIT))
    await read_done.wait()
    await harness.memory.edit_user_turn(ctx, "m1", "edited message", derive_facts=False)
    edited.set()
    _, old = await reader
    assert old[0].text == "first message"  # this caller saw the read's own moment...
    monkeypatch.setattr(harness.store.conversations, "session_turns", real)
    _, turns = await harness.store.conversations.working_turns(tid, LIMIT)
    assert turns[0].text == "edited message"  # ...but it was not cached
    await _assert_fresh(harness, tid)


async def test_a_failed_write_drops_the_cache(harness):
    await harness.say("hello")
    tid = await _thread_id(harness)
    await harness.store.conversations.working_turns(tid, LIMIT)
    with pytest.raises(RuntimeError):
        async with harness.store.db.tx(hot=()):
            raise RuntimeError("boom")
    assert harness.store.hot.session(tid) == (False, None)


# ----------------------------------------------------------------- the cache alone

T = datetime(2026, 11, 30, tzinfo=timezone.utc)


def _session(sid: int, thread: int = 1) -> SessionRow:
    return SessionRow(id=sid, thread_id=thread, started_at=T, last_turn_at=T, closed_at=None,
                      folded_through=0)


def _turn(tid: int, sid: int = 1, thread: int = 1) -> Turn:
    return Turn(id=tid, thread_id=thread, session_id=sid, role=Role.USER, text=f"t{tid}",
                created_at=T + timedelta(seconds=tid))


def test_bounds_threads_and_turns():
    hot = HotTurns(max_threads=2, max_turns=3)
    for thread in (1, 2, 3):
        hot.put_turns(thread, _session(thread, thread), [_turn(1, thread, thread)], 3, 0)
    assert hot.session(1) == (False, None) and hot.session(3)[0]  # least recently used left
    hot.put_turns(9, _session(9, 9), [_turn(1, 9, 9), _turn(2, 9, 9)], 3, 0)
    for n in (3, 4):
        hot.turn_added(9, _turn(n, 9, 9), opened=None, at=T + timedelta(seconds=n))
    assert [t.id for t in hot.turns(9, 9, 3)] == [2, 3, 4]
    assert hot.turns(9, 9, 2) == [_turn(3, 9, 9), _turn(4, 9, 9)]
    assert hot.turns(9, 9, 4) is None  # trimmed: no longer every turn of the session
    assert hot.session(9)[1].last_turn_at == T + timedelta(seconds=4)


def test_fills_during_or_across_a_write_are_dropped():
    hot = HotTurns()
    generation = hot.generation
    hot.begin_write(())
    hot.put_session(1, _session(1), generation)  # started before the write
    hot.put_session(1, _session(1), hot.generation)  # while it runs
    hot.end_write(())
    assert hot.session(1) == (False, None)
    hot.put_session(1, _session(1), hot.generation)
    assert hot.session(1) == (True, _session(1))
    hot.begin_write((7,))  # another session's write keeps this entry
    hot.end_write((7,))
    assert hot.session(1)[0]
    hot.begin_write((1,))
    hot.end_write((1,))
    assert hot.session(1) == (False, None)


def test_a_turn_for_another_session_drops_the_entry():
    hot = HotTurns()
    hot.put_turns(1, _session(1), [_turn(1)], 60, 0)
    hot.turn_added(1, _turn(2, sid=2), opened=None, at=T)
    assert hot.session(1) == (False, None)
    hot.turn_added(1, _turn(3, sid=3), opened=_session(3), at=T)
    assert hot.turns(1, 3, 60) == [_turn(3, sid=3)]
