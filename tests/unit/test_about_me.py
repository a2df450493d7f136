"""'What do you remember about me?' names no subject a memory could match: recall adds the
speaker's own facts."""

from __future__ import annotations

import pytest

from memory.focus import asks_about_the_user
from memory.types import ItemKind


@pytest.mark.parametrize(("question", "about_me"), [
    ("what do you remember about me?", True),
    ("Tell me everything you have saved about me", True),
    ("who am I?", True),
    ("你都记得我什么？", True),
    ("关于我你知道什么", True),
    ("what do you remember about the trip?", False),
    ("where do I live?", False),
    ("what did I tell you about my sister?", False),
])
def test_questions_about_the_user(question, about_me):
    assert asks_about_the_user(question) is about_me


async def test_a_question_about_me_recalls_my_facts_and_only_mine(harness):
    await harness.say("remember that I live in Graz")
    await harness.say("remember that I work at Siemens")
    await harness.say("remember that I live in Oslo", user="bob")  # another user's fact
    await harness.say("/new")
    ctx = await harness.memory.context(harness.message("x"))
    facts = [i.text for i in (await harness.memory.recall(
        ctx, "what do you remember about me?", touch=False)).blocks.items
        if i.kind is ItemKind.FACT]
    assert any("Graz" in f for f in facts) and any("Siemens" in f for f in facts)
    assert not any("Oslo" in f for f in facts)
    other = [i for i in (await harness.memory.recall(
        ctx, "what do you remember about the quarterly report?", touch=False)).blocks.items
        if i.kind is ItemKind.FACT and not i.profile]
    assert other == []  # an ordinary question recalls facts only when they match it
    # (the profile block holds who the user is in every prompt: memory.profile)
