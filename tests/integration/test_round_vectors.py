"""A round whose text holds the assistant's reply gets a vector leaning to what the user said
(``RecallPolicy.round_user_weight``): the normalised sum of the round's vector and
its user turn's, written the same way by the live path and by reconcile (``reindex``)."""

from __future__ import annotations

import numpy as np

from memory.indexing import embed_head
from memory.policy import ROUND_EMBED_CHARS, RecallPolicy
from memory.types import ModelReply
from tests.conftest import RecordingEmbedder, make_harness

USER = "I adopted a grey cat called Miso last week"
REPLY = ("Congratulations! Here are ten dog breeds that are good with children: Labrador, "
         "Beagle, Poodle, Boxer, Collie, Pug, Havanese, Vizsla, Newfoundland, Bulldog.")


class Replying:
    name = "scripted"

    async def complete(self, **kw):
        return ModelReply(REPLY, self.name)


async def _closed_round(tmp_path, clock, **kw):
    """A harness on LanceDB after one exchange and /new, and the round it indexed."""
    embedder = RecordingEmbedder()
    h = await make_harness(tmp_path, clock, lance=True, embedder=embedder, **kw)
    await h.say(USER)
    await h.say("/new")
    [rnd] = (await h.store.episodes.get_rounds([1])).values()
    return h, embedder, rnd


async def _round_vector(h) -> np.ndarray:
    table = await h.index._table.query().to_arrow()
    [row] = [r for r in table.to_pylist() if r["key"].startswith("round:")]
    return np.asarray(row["vector"], dtype=np.float32)


async def test_the_vector_leans_to_the_users_turn_and_reconcile_writes_the_same(tmp_path, clock):
    h, embedder, rnd = await _closed_round(tmp_path, clock, model=Replying())
    try:
        assert REPLY in rnd.text and f"Alice: {USER}" in embedder.documents
        whole, user = np.asarray(await embedder.embed_documents([rnd.text, f"Alice: {USER}"]),
                                 dtype=np.float32)
        expected = (whole + user) / np.linalg.norm(whole + user)
        stored = await _round_vector(h)
        assert np.allclose(stored, expected, atol=1e-5)
        assert not np.allclose(stored, whole, atol=1e-3)  # not the plain round vector

        await h.index.delete([f"round:{rnd.id}"])  # rebuilt from SQLite: the same vector
        await h.memory.reconcile()
        assert np.allclose(await _round_vector(h), expected, atol=1e-5)
    finally:
        await h.index.close()
        await h.store.close()


async def test_rounds_without_a_reply_in_their_text_cost_no_second_embedding(tmp_path, clock):
    h, embedder, rnd = await _closed_round(tmp_path, clock)  # the offline model
    try:
        assert rnd.text == f"Alice: {USER}"  # the offline model's reply is not in the round
        assert embedder.documents.count(rnd.text) == 1
        plain = np.asarray((await embedder.embed_documents([rnd.text]))[0], dtype=np.float32)
        assert np.allclose(await _round_vector(h), plain, atol=1e-5)
    finally:
        await h.index.close()
        await h.store.close()


async def test_weight_zero_keeps_the_rounds_own_vector(tmp_path, clock, monkeypatch):
    h, embedder, rnd = await _closed_round(tmp_path, clock, model=Replying(),
                                           policy=RecallPolicy(round_user_weight=0.0))
    try:
        whole = np.asarray((await embedder.embed_documents([rnd.text]))[0], dtype=np.float32)
        assert np.allclose(await _round_vector(h), whole, atol=1e-5)
    finally:
        await h.index.close()
        await h.store.close()


class Essay:
    """A model that answers with a long essay (a LongMemEval-like reply)."""

    name = "essay"

    async def complete(self, **kw):
        return ModelReply(" ".join(f"Point {i}: keep the cat's bowl clean and fresh."
                                   for i in range(60)), self.name)


class CountingEmbedder(RecordingEmbedder):
    def __init__(self):
        super().__init__()
        self.calls: list[list[str]] = []

    async def embed_documents(self, texts):
        self.calls.append(list(texts))
        return await super().embed_documents(texts)


async def test_a_long_round_is_embedded_from_its_start_alone(tmp_path, clock):
    embedder = CountingEmbedder()
    h = await make_harness(tmp_path, clock, lance=True, embedder=embedder, model=Essay())
    try:
        await h.say("I adopted a grey cat called Miso last week, what should she eat?")
        await h.say("/new")
        [rnd] = (await h.store.episodes.get_rounds([1])).values()
        assert len(rnd.text) > 3 * ROUND_EMBED_CHARS
        assert all(len(t) <= ROUND_EMBED_CHARS for t in embedder.documents)
        head = embed_head(rnd.text)
        assert rnd.text.startswith(head) and "Assistant: Point 0" in head  # user turn + start
        plain = np.asarray((await embedder.embed_documents([head]))[0], dtype=np.float32)
        assert np.allclose(await _round_vector(h), plain, atol=1e-5)
        # the whole text stays searchable by its words: a word of the essay's end finds it
        table = await h.index._table.query().to_arrow()
        [row] = [r for r in table.to_pylist() if r["key"] == f"round:{rnd.id}"]
        assert "59" in row["search_text"]
        await h.index.delete([f"round:{rnd.id}"])  # rebuilt from SQLite: the same vector
        await h.memory.reconcile()
        assert np.allclose(await _round_vector(h), plain, atol=1e-5)
    finally:
        await h.index.close()
        await h.store.close()


async def test_a_closed_session_is_embedded_in_one_call(tmp_path, clock):
    embedder = CountingEmbedder()
    h = await make_harness(tmp_path, clock, lance=True, embedder=embedder, model=Replying())
    try:
        for text in ("I adopted a grey cat called Miso", "She sleeps in a cardboard box",
                     "Remind me to buy cat food on Friday"):
            await h.say(text)
        before = len(embedder.calls)
        await h.say("/new")
        await h.memory.drain()
        consolidation = embedder.calls[before:]
        # three rounds (each its text and its user turn) and the episode: one call
        assert len(consolidation) == 1 and len(consolidation[0]) >= 3 * 2 + 1
        assert len(await h.index.keys()) >= 4
    finally:
        await h.index.close()
        await h.store.close()
