"""In a group, a question that names one member ranks that member's messages first (on
LoCoMo 96% of the evidence of such questions is the named speaker's own words)."""

from __future__ import annotations

from memory import recaller
from memory.policy import SPEAKER_WEIGHT, RecallPolicy
from memory.types import ChatKind, ItemKind

GROUP = dict(chat="g", kind=ChatKind.GROUP)


async def _ranked(harness, question: str, **chat) -> list[str]:
    ctx = await harness.memory.context(harness.message("x", user="ana", **chat))
    result = await harness.memory.recall(ctx, question, touch=False)
    return [i.text for i in result.ranked if i.kind is ItemKind.ROUND]


async def test_the_named_members_message_ranks_first(harness, monkeypatch):
    ingest = harness.engine.ingest
    # Ana's question shares more of the question's words than Ben's answer does
    await ingest(harness.message("How does Ben destress these days? Ben, do tell me how you "
                                 "destress.", user="ana", name="Ana", **GROUP))
    await ingest(harness.message("Pottery is how I destress.", user="ben", name="Ben", **GROUP))
    await harness.say("/new", user="ana", **GROUP)
    question = "How does Ben destress?"
    harness.memory.policy = RecallPolicy(speaker_weight=1.0)
    assert "Ana:" in (await _ranked(harness, question, **GROUP))[0]
    harness.memory.policy = RecallPolicy(speaker_weight=0.8)
    assert "Ben: Pottery" in (await _ranked(harness, question, **GROUP))[0]


async def test_no_weighting_without_exactly_one_named_speaker(harness):
    ingest = harness.engine.ingest
    await ingest(harness.message("I destress by running daily.", user="ana", name="Ana", **GROUP))
    await ingest(harness.message("Pottery is how I destress.", user="ben", name="Ben", **GROUP))
    await harness.say("/new", user="ana", **GROUP)
    ctx = await harness.memory.context(harness.message("x", user="ana", **GROUP))
    result = await harness.memory.recall(ctx, "How do people here destress?", touch=False)
    ranked = list(result.ranked)
    assert {i.text.split(") ", 1)[1].split(":")[0] for i in ranked
            if i.kind is ItemKind.ROUND} == {"Ana", "Ben"}
    for question in ("How do Ana and Ben destress?", "How do people here destress?"):
        assert recaller.named_speaker_first(ranked, question) == ranked
    weighted = recaller.named_speaker_first(ranked, "How does ana destress?")  # any case
    bens = [i.key for i in ranked if i.kind is ItemKind.ROUND and "Ben:" in i.text]
    assert bens and {i.key: i.score for i in weighted if i.key in bens} == {
        i.key: i.score * SPEAKER_WEIGHT for i in ranked if i.key in bens}
