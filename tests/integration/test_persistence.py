"""Real SQLite + LanceDB in a temporary folder: restarts, rebuilds and deletion."""

from __future__ import annotations

from pathlib import Path

from memory.types import FactStatus
from tests.conftest import make_harness


async def _close(h):
    await h.index.close()
    await h.store.close()


async def _recall_keys(h, user="alice", query="vector database Python"):
    ctx = await h.memory.context(h.message(query, user=user))
    result = await h.memory.recall(ctx, query, touch=False)
    return [(i.key, round(i.score, 4)) for i in result.blocks.items]


async def test_close_and_reopen_loses_nothing(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    await h.say("I'm a quant developer and I'm choosing a vector database.")
    await h.say("remember I mainly use Python")
    await h.say("/new")
    await h.say("this one is still open")
    before = await _recall_keys(h)
    turns_before = await h.store.count_rows("turns")
    await _close(h)

    h = await make_harness(tmp_path, clock, lance=True)
    try:
        assert await h.store.count_rows("turns") == turns_before
        user = await h.store.find_user("console", "alice")
        assert [f.text for f in await h.store.list_facts(user.id, [FactStatus.ACTIVE])] == [
            "The user mainly programs in Python"]
        assert await _recall_keys(h) == before
        ctx = await h.memory.context(h.message("x"))
        window = await h.memory.working_memory(ctx)
        assert [t.text for t in window][0] == "this one is still open"  # the open session survives
    finally:
        await _close(h)


async def test_index_rebuilt_from_sqlite_gives_the_same_recall(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        for topic in ("vector database benchmarks", "pancake recipes", "bike tyre repair"):
            await h.say(f"Let's talk about {topic} with Python")
            await h.say("/new")
        await h.say("remember I mainly use Python")
        before = await _recall_keys(h)
        assert before
        keys = sorted(await h.index.keys())
        await h.index.delete(keys)  # what `memory-bot reindex` does
        await h.index.compact()
        assert await h.index.keys() == set()
        added, removed = await h.memory.reconcile()
        assert (added, removed) == (len(keys), 0)
        assert await _recall_keys(h) == before
        assert await h.memory.reconcile() == (0, 0)
    finally:
        await _close(h)


def _files_containing(folder: Path, needle: bytes) -> list[Path]:
    hits = []
    for path in folder.rglob("*"):
        if path.is_file() and needle in path.read_bytes():
            hits.append(path)
    return hits


async def test_forget_all_is_physical_and_scoped_to_one_user(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await h.say("remember my locker code word is Zanzibarquux", user="alice")
        await h.say("We discussed Zanzibarquux plans for 2025-03-01", user="alice")
        await h.say("/new", user="alice")
        for i in range(3):
            await h.say(f"remember bob fact number {i} Qwertyplonk", user="bob")
        await h.say("/new", user="bob")
        assert _files_containing(tmp_path, b"Zanzibarquux")
        await h.say("/forget all", user="alice")
        reply = (await h.say("yes", user="alice"))[0]
        assert "1 fact(s)" in reply
        assert _files_containing(tmp_path, b"Zanzibarquux") == []
        bob = await h.store.find_user("console", "bob")
        assert len(await h.store.list_facts(bob.id, [FactStatus.ACTIVE])) == 3
        assert len(await h.memory.episodes_for(bob.id)) == 1
        assert _files_containing(tmp_path, b"Qwertyplonk")
        keys = await h.index.keys()
        assert sum(k.startswith("fact:") for k in keys) == 3
    finally:
        await _close(h)


async def test_first_message_on_empty_stores(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        replies = await h.say("hello")
        assert "Nothing from earlier conversations" in replies[0]
        assert "You have no saved memories." in (await h.say("/memories"))[0]
        assert (await h.say("/forget all", user="someone"))[0] == "Nothing to forget."
    finally:
        await _close(h)


async def test_concurrent_first_messages_of_one_user_create_one_user(tmp_path, clock):
    import asyncio

    h = await make_harness(tmp_path, clock, lance=True)
    try:
        replies = await asyncio.gather(*[h.say(f"hello from chat {i}", user="zoe", chat=f"c{i}")
                                         for i in range(5)])
        assert all(replies)
        assert await h.store.count_rows("users") == 1
        assert await h.store.count_rows("threads") == 5
    finally:
        await _close(h)
