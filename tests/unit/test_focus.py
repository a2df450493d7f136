"""The question inside a chatty message: recall uses what follows "what I really want
to know is" / "我真正想问的是", and recalls each part of a question in several parts."""

from __future__ import annotations

import pytest

from memory.policy import RecallPolicy
from memory.focus import focus_question, question_parts, without_recall_words
from memory.recall import merge_parts
from memory.types import IndexHit, ItemKind


def test_the_question_after_a_chinese_marker_is_kept():
    chatter = "今天天气真好，听说有个活动特别有意思，就在深圳那边。哎，最近真是太忙了。"
    assert focus_question(chatter + "不好意思，我真正想问的是：那个地点是广东深圳的活动，规模是什么？") \
        == "那个地点是广东深圳的活动，规模是什么？"
    assert focus_question(chatter + "哦豁，我其实是想搞清楚，那个持续时间是六天的活动，地点是什么？") \
        == "那个持续时间是六天的活动，地点是什么？"
    assert focus_question(chatter + "额，实际上我那个问题是这个，我路过的公园怎么样？") == "我路过的公园怎么样？"
    assert focus_question(chatter + "我本来想说的是，我使用的手机怎么样？") == "我使用的手机怎么样？"
    assert focus_question(chatter + "等等，诶，等等，那个身高是169cm的人，姓名是什么？") \
        == "那个身高是169cm的人，姓名是什么？"


def test_the_question_after_an_english_marker_is_kept():
    assert focus_question("Lovely weather today, I might go hiking later. Anyway, what I really "
                          "want to know is: where is the Shanghai event?") \
        == "where is the Shanghai event?"
    assert focus_question("Busy week! My real question is, when is Ana's birthday?") \
        == "when is Ana's birthday?"


def test_plain_questions_and_empty_remainders_are_unchanged():
    for message in ("What is my sister's phone number?", "我妈妈今年多大年纪了？",
                    "What is my real question?", "我真正想问的是："):
        assert focus_question(message) == message


async def test_recall_of_a_chatty_question_finds_what_it_asks(harness, monkeypatch):
    await harness.say("My sister's phone number is 555-0101.")
    for i in range(4):
        await harness.say(f"The weather was sunny and the park was lovely on walk {i}.")
    await harness.say("/new")
    ctx = await harness.memory.context(harness.message("x"))
    question = ("The weather is sunny again and the park looks lovely, what a walk! Sunny "
                "weather, a lovely park, a long walk in the park in the sunny weather. "
                "Anyway, what I really want to know is: what is my sister's phone number?")

    async def first_round() -> str:
        result = await harness.memory.recall(ctx, question, touch=False)
        return next(i.text for i in result.ranked if i.kind is ItemKind.ROUND)

    assert "555-0101" in await first_round()
    harness.memory.policy = RecallPolicy(focus_question=False)
    assert "555-0101" not in await first_round()


def test_a_question_in_two_parts_is_split():
    assert question_parts("我同事有多高来着？另外，模型艺术盛宴的时间是什么？") == [
        "我同事有多高来着？", "模型艺术盛宴的时间是什么？"]
    assert question_parts("Where is Ana's office? Also, when is her exam?") == [
        "Where is Ana's office?", "when is her exam?"]
    for question in ("What is my sister's phone number?", "我妈妈今年多大年纪了？",
                     "Where is it? Also, x"):
        assert question_parts(question) == [question]


def _hit(item_id: int) -> IndexHit:
    return IndexHit(key=f"round:{item_id}", kind=ItemKind.ROUND, item_id=item_id,
                    cosine=None, bm25=None)


def test_each_parts_best_match_heads_the_merged_ranking():
    strong = [(_hit(1), 0.9), (_hit(2), 0.85), (_hit(3), 0.8)]
    weak = [(_hit(4), 0.45), (_hit(2), 0.3)]
    merged = merge_parts([strong, weak])
    assert [h.item_id for h, _ in merged][:2] == [4, 1]  # both parts' best first (tie: newer id)
    assert dict((h.item_id, s) for h, s in merged)[2] == pytest.approx(0.85)  # its higher score
    assert merge_parts([strong]) == strong and merge_parts([[], []]) == []


async def test_recall_of_a_two_part_question_finds_both_parts(harness, monkeypatch):
    await harness.say("Wei from work measures 164 cm, my colleague.")
    for i in range(8):
        await harness.say(f"When is the model art festival? The model art festival is in spring, note {i}.")
    await harness.say("/new")
    ctx = await harness.memory.context(harness.message("x"))
    question = "How tall is my colleague? Also, when is the model art festival?"

    async def rank_of_colleague() -> int:
        result = await harness.memory.recall(ctx, question, touch=False)
        rounds = [i.text for i in result.ranked if i.kind is ItemKind.ROUND]
        return next((k for k, text in enumerate(rounds) if "164 cm" in text), len(rounds))

    # the second part's many close matches no longer bury the first part's only one
    assert await rank_of_colleague() <= 1
    harness.memory.policy = RecallPolicy(split_questions=False)
    assert await rank_of_colleague() >= 5  # after the festival's rounds


@pytest.mark.parametrize("question, rest", [
    ("Do you remember that I'm vegetarian?", "I'm vegetarian?"),
    ("Can you recall when I moved to Linz?", "I moved to Linz?"),
    ("Remember that restaurant we talked about? What was it called?",
     "restaurant we talked about? What was it called?"),
    ("remember that", ""),
    ("你还记得我住在哪里吗？", "我住在哪里吗？"),
    # "remember" as what is asked about stays
    ("What does Joanna do to remember happy memories?",
     "What does Joanna do to remember happy memories?"),
    ("I remember the old days", "I remember the old days"),
])
def test_words_asking_to_remember_are_left_out_of_the_search(question, rest):
    assert without_recall_words(question) == rest


async def test_a_do_you_remember_question_does_not_recall_every_remember(harness):
    """A new user's trial: "Do you remember that I'm vegetarian?" recalled 11 items, every
    earlier "remember that ..." among them; a bare "remember that" recalled 8."""
    for text in ["Remember that my locker code is 4411.", "Remember that the plumber comes Monday.",
                 "Remember that Jonas likes chess.", "I'm vegetarian, remember that."]:
        await harness.say(text)
        await harness.say("/new")
    ctx = await harness.memory.context(harness.message("x"))

    async def recalled(question: str) -> list[str]:
        result = await harness.memory.recall(ctx, question, touch=False)
        threshold = harness.memory.config.threshold  # profile facts count where they matched
        return [i.text for i in result.blocks.items
                if not i.pinned or (i.profile and i.score >= threshold)]

    found = await recalled("Do you remember that I'm vegetarian?")
    assert any("vegetarian" in t for t in found), found
    assert not any("locker" in t or "plumber" in t or "chess" in t for t in found), found
    assert await recalled("remember that") == []
