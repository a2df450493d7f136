"""Real SQLite + LanceDB in a temporary folder: restarts, rebuilds and deletion."""

from __future__ import annotations

from pathlib import Path

from adapters.embedders import HashingEmbedder
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
        user = await h.store.identities.find_user("console", "alice")
        assert [f.text for f in await h.store.facts.list_facts(user.id, [FactStatus.ACTIVE])] == [
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
        for attribute in ("bike's name", "wifi name", "boat's name"):  # three statements about bob
            await h.say(f"remember that my {attribute} is Qwertyplonk", user="bob")
        await h.say("/new", user="bob")
        assert _files_containing(tmp_path, b"Zanzibarquux")
        await h.say("/forget all", user="alice")
        reply = (await h.say("yes", user="alice"))[0]
        assert "1 fact(s)" in reply
        assert _files_containing(tmp_path, b"Zanzibarquux") == []
        bob = await h.store.identities.find_user("console", "bob")
        assert len(await h.store.facts.list_facts(bob.id, [FactStatus.ACTIVE])) == 3
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
        assert "Nothing I remember seems related" in replies[0]  # also right for a new user
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


def _files_containing_any_case(folder: Path, needle: bytes) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle.lower() in p.read_bytes().lower()]


class _DenseHashing(HashingEmbedder):
    """The hashing embedder plus a small dense term drawn from the text's digest: every stored
    vector has distinct bytes everywhere (plain hashing vectors are sparse and share values,
    so a slice of them would match other rows)."""

    name = "hashing-dense-test"

    async def embed_documents(self, texts):
        import hashlib

        import numpy as np

        out = []
        for text, vec in zip(texts, await super().embed_documents(texts)):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            v = np.asarray(vec) + 0.05 * np.random.default_rng(seed).standard_normal(self.dim)
            out.append((v / np.linalg.norm(v)).tolist())
        return out


async def _vector_slice(h, key: str) -> bytes:
    """32 bytes from the middle of a stored vector."""
    import numpy as np

    rows = (await h.index._table.query().where(f"key = '{key}'").to_arrow()).to_pylist()
    return np.asarray(rows[0]["vector"], dtype=np.float32)[100:108].tobytes()


async def test_forget_n_is_physical_with_vector_bytes_and_citing_episodes(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True, embedder=_DenseHashing())
    try:
        await h.say("remember my locker code word is Vexmarrowind", user="alice")
        await h.say("what is my locker code word?", user="alice")
        await h.say("remember I mainly use Python", user="alice")
        await h.say("/new", user="alice")  # an episode now cites the marker's turns
        await h.say("remember bob likes Qwertyplonk tea", user="bob")
        alice = await h.store.identities.find_user("console", "alice")
        facts = await h.store.facts.list_facts(alice.id, [FactStatus.ACTIVE])
        marked = next(f for f in facts if "Vexmarrowind" in f.text)
        vector = await _vector_slice(h, f"fact:{marked.id}")
        assert _files_containing_any_case(tmp_path, b"VEXMARROWIND")
        assert _files_containing(tmp_path, vector)
        n = [f.id for f in facts].index(marked.id) + 1
        reply = (await h.say(f"/forget {n}", user="alice"))[0]
        assert reply.startswith("Forgotten:")
        assert _files_containing_any_case(tmp_path, b"vexmarrowind") == []
        assert _files_containing(tmp_path, vector) == []
        assert [f.text for f in await h.store.facts.list_facts(alice.id, [FactStatus.ACTIVE])] == [
            "The user mainly programs in Python"]
        assert "Vexmarrowind" not in (await h.say("/memories episodes", user="alice"))[0]
        (episode,) = await h.memory.episodes_for(alice.id)  # re-summarised from what is left
        assert "Python" in episode.summary and f"episode:{episode.id}" in await h.index.keys()
        assert _files_containing(tmp_path, b"Qwertyplonk")  # bob untouched
    finally:
        await _close(h)


async def test_forget_all_removes_text_and_vector_bytes(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True, embedder=_DenseHashing())
    try:
        await h.say("remember my favourite word is Glimmerquonk", user="alice")
        await h.say("We talked about glimmerquonk pies", user="alice")
        await h.say("/new", user="alice")
        await h.say("remember bob fact Qwertyplonk", user="bob")
        alice = await h.store.identities.find_user("console", "alice")
        (fact,) = await h.store.facts.list_facts(alice.id, [FactStatus.ACTIVE])
        vector = await _vector_slice(h, f"fact:{fact.id}")
        assert _files_containing(tmp_path, vector)
        await h.say("/forget all", user="alice")
        await h.say("yes", user="alice")
        assert _files_containing_any_case(tmp_path, b"glimmerquonk") == []
        assert _files_containing(tmp_path, vector) == []
        assert _files_containing(tmp_path, b"Qwertyplonk")
    finally:
        await _close(h)


async def test_forget_all_reaches_group_turns_and_replies_quoting_them(tmp_path, clock):
    from memory.types import ChatKind

    h = await make_harness(tmp_path, clock, lance=True, embedder=_DenseHashing())
    group = {"chat": "team", "kind": ChatKind.GROUP}
    try:
        await h.say("remember I always sit near Flumbertown window", user="alice", **group)
        await h.say("where do I sit near the window?", user="alice", **group)
        await h.say("remember I like Qwertyplonk biscuits", user="bob", **group)
        await h.say("/new", user="bob", **group)
        assert _files_containing_any_case(tmp_path, b"flumbertown")
        await h.say("/forget all", user="alice")
        await h.say("yes", user="alice")
        assert _files_containing_any_case(tmp_path, b"flumbertown") == []
        bob = await h.store.identities.find_user("console", "bob")
        assert len(await h.store.facts.list_facts(bob.id, [FactStatus.ACTIVE])) == 1
    finally:
        await _close(h)
