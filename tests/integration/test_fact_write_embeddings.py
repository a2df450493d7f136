"""An explicit free-form fact ("Remember that ...") is checked against the user's stored facts
through the search index's vectors, so the texts embedded for it do not grow with the number
of facts the user has (comparing it with every active fact by embedding both texts again made
"remember ..." by a user with 5,000 facts embed 10,000 texts)."""

from __future__ import annotations

from memory.types import Scope
from tests.conftest import RecordingEmbedder, make_harness


class CountingEmbedder(RecordingEmbedder):
    """The hashing embedder, counting every text it embeds (documents and queries)."""

    def __init__(self):
        super().__init__()
        self.queries: list[str] = []

    async def embed_query(self, text):
        self.queries.append(text)
        return await super().embed_query(text)

    @property
    def texts(self) -> int:
        return len(self.documents) + len(self.queries)


async def _texts_embedded_by_a_request(tmp_path, clock, stored: int) -> tuple[int, list[str]]:
    """Texts embedded while a user with ``stored`` active free-form facts asks to remember a
    new one, and the user's active facts afterwards."""
    embedder = CountingEmbedder()
    h = await make_harness(tmp_path, clock, lance=True, embedder=embedder)
    try:
        await h.say("hello")
        user = await h.store.identities.find_user("console", "alice")
        scope = Scope.private(user.id)
        thread = await h.store.identities.get_thread(1)  # alice's private chat, made by "hello"
        assert thread is not None
        for n in range(stored):
            await h.store.facts.add_fact(
                user_id=user.id, kind="note", text=f"The user keeps box {n} of old letters in "
                f"the attic", topic=None, origin=thread, source_turn_ids=[], lang="en",
                scope=scope, now=clock.now())
        await h.memory.reconcile()  # the facts' index rows, embedded before counting
        before = embedder.texts
        await h.say("Remember that I keep the spare key under the blue flowerpot by the fridge.")
        texts = [f.text for f in await h.store.facts.active_facts(user.id, scope)]
        return embedder.texts - before, texts
    finally:
        await h.index.close()
        await h.store.close()


async def test_a_free_form_fact_embeds_the_same_texts_whatever_the_facts_stored(tmp_path, clock):
    few, few_facts = await _texts_embedded_by_a_request(tmp_path / "few", clock, 3)
    many, many_facts = await _texts_embedded_by_a_request(tmp_path / "many", clock, 300)
    assert len(few_facts) == 4 and len(many_facts) == 301  # written, not taken for a duplicate
    assert any("fridge" in t for t in many_facts)
    assert many == few, (few, many)
    assert many <= 4, many  # the recall query and the new fact's own vector, not one per fact
