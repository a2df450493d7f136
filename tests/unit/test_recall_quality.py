"""Recall quality: excerpts of long rounds (``memory.excerpt``) and their use in
recall, on real SQLite (temporary folder) and the in-memory index."""

from __future__ import annotations

import pytest

from memory.excerpt import TurnLine, clip_sentences, excerpt, terms
from memory.policy import PREV_WEIGHT, REPLY_WEIGHT, ROUND_PROMPT_TOKENS, RecallPolicy
from memory.service import MemoryConfig
from memory.tokens import HeuristicTokenCounter
from memory.types import ChatKind, ItemKind, ModelReply

COUNT = HeuristicTokenCounter().count
FILLER = " ".join(f"Sentence {i} talks about the weather and nothing else." for i in range(60))


def test_terms_are_stemmed_content_words():
    assert terms("What running shoes did I buy?") == {"run", "shoe", "buy"}
    assert "咖啡" in terms("我喜欢喝咖啡")


def test_a_short_round_is_shown_whole_with_all_its_turns():
    turns = [TurnLine(1, "User", "I adopted a cat."), TurnLine(2, "Assistant", "Congratulations!")]
    line, ids = excerpt(turns, "cat", prefix="- (2024-01-02) ", limit=150, count=COUNT)
    assert line == "- (2024-01-02) User: I adopted a cat. / Assistant: Congratulations!"
    assert ids == (1, 2)


def test_a_long_round_shows_the_best_matching_turn_around_the_matching_sentence():
    answer = FILLER + " Your Corolla needs its first service at 5,000 miles. " + FILLER
    turns = [TurnLine(7, "User", "Tell me about car care."), TurnLine(8, "Assistant", answer)]
    line, ids = excerpt(turns, "When is the Corolla's first service due?", prefix="- ",
                        limit=60, count=COUNT)
    assert ids == (8,)
    assert "first service at 5,000 miles" in line and line.startswith("- Assistant: … ")
    assert COUNT(line) <= 60


def test_clip_cuts_a_single_overlong_sentence_at_a_word_boundary():
    text = " ".join(["word"] * 400)
    clipped = clip_sentences(text, {"word"}, lambda s: COUNT(s) <= 50)
    assert COUNT(clipped) <= 50 and clipped.endswith(" …")


def test_an_empty_round_is_an_error():
    with pytest.raises(ValueError):
        excerpt([], "q", prefix="", limit=10, count=COUNT)


class Verbose:
    """A scripted model whose replies are long (a ~700-token answer with one useful sentence)."""

    name = "verbose"

    async def complete(self, **kw):
        return ModelReply(FILLER + " The Lisbon hotel is booked for 12 April. " + FILLER, self.name)


async def test_recall_shows_a_long_round_as_an_excerpt_carrying_one_turn(tmp_path, clock):
    from tests.conftest import make_harness

    # the hashing test embedder gives a 700-token text a weak cosine: no threshold here
    h = await make_harness(tmp_path, clock, model=Verbose(), config=MemoryConfig(threshold=0.0))
    try:
        await h.say("Please confirm the hotel booking for the Lisbon trip.")
        await h.say("/new")
        ctx = await h.memory.context(h.message("x"))
        result = await h.memory.recall(ctx, "when is the Lisbon hotel booked?", touch=False)
        rounds = [i for i in result.ranked if i.kind is ItemKind.ROUND]
        assert rounds, result.ranked
        item = rounds[0]
        assert item.tokens <= ROUND_PROMPT_TOKENS and len(item.source_turn_ids) == 1
        assert "12 April" in item.text or "Lisbon trip" in item.text
    finally:
        await h.store.close()


async def test_a_recalled_message_brings_the_reply_to_it(harness, monkeypatch):
    harness.memory.policy = RecallPolicy(speaker_weight=1.0)  # the question names Ben
    # a recorded conversation between two people (no assistant replies): one turn per round
    g = dict(chat="g", kind=ChatKind.GROUP)
    ingest = harness.engine.ingest
    await ingest(harness.message("Which instrument are you learning these days, Ben?",
                                 user="ana", **g))
    await ingest(harness.message("The cello, since March. Lessons on Tuesdays.", user="ben", **g))
    for i in range(6):
        await ingest(harness.message(f"Unrelated chatter number {i} about lunch plans.",
                                     user="ana", **g))
    await harness.say("/new", user="ana", **g)
    ctx = await harness.memory.context(harness.message("x", user="ana", **g))
    result = await harness.memory.recall(ctx, "which instrument is Ben learning?", touch=False)
    texts = [i.text for i in result.ranked if i.kind is ItemKind.ROUND]
    asked = next(k for k, t in enumerate(texts) if "Which instrument" in t)
    assert "cello" in texts[asked + 1]  # the reply follows the message it answers
    rounds = [i for i in result.ranked if i.kind is ItemKind.ROUND]
    reply = next(i for i in rounds if "cello" in i.text)
    question = next(i for i in rounds if "Which instrument" in i.text)
    assert reply.score == pytest.approx(REPLY_WEIGHT * question.score)


async def test_a_recalled_reply_brings_the_message_it_answers(harness, monkeypatch):
    harness.memory.policy = RecallPolicy(speaker_weight=1.0)  # the question names Ben
    # the matching words are in the reply; the message before it (what it answers) comes along
    g = dict(chat="g", kind=ChatKind.GROUP)
    ingest = harness.engine.ingest
    await ingest(harness.message("What did you do over the weekend?", user="ana", **g))
    await ingest(harness.message("I climbed the granite boulders at Fontainebleau with Theo.",
                                 user="ben", **g))
    for i in range(6):
        await ingest(harness.message(f"Unrelated chatter number {i} about lunch plans.",
                                     user="ana", **g))
    await harness.say("/new", user="ana", **g)
    ctx = await harness.memory.context(harness.message("x", user="ana", **g))
    result = await harness.memory.recall(ctx, "where did Ben climb granite boulders?", touch=False)
    rounds = [i for i in result.ranked if i.kind is ItemKind.ROUND]
    answer = next(i for i in rounds if "Fontainebleau" in i.text)
    before = next(i for i in rounds if "over the weekend" in i.text)
    assert before.score >= PREV_WEIGHT * answer.score - 1e-9
    assert rounds.index(answer) < rounds.index(before)


async def test_repeated_statements_are_shown_once_with_their_dates(harness):
    await harness.say("My sister's phone number is 555-0101.")
    await harness.say("/new")
    harness.clock.advance(2 * 86400)
    await harness.say("My sister's phone number is 555-0101.")
    await harness.say("/new")
    ctx = await harness.memory.context(harness.message("x"))
    result = await harness.memory.recall(ctx, "what is my sister's phone number?", touch=False)
    rounds = [i for i in result.ranked if i.kind is ItemKind.ROUND and "555-0101" in i.text]
    assert len(rounds) == 1
    assert rounds[0].text.startswith("- (2026-11-30, 2026-12-02) ") or \
        rounds[0].text.startswith("- (2026-12-02, 2026-11-30) ")
    assert len(rounds[0].source_turn_ids) == 4  # both user turns and both replies


def test_episodes_rank_below_rounds_that_match_as_well():
    from memory.recall import KIND_WEIGHT, rank_hits
    from memory.ports import SimilarityCalibration
    from memory.types import IndexHit

    cal = SimilarityCalibration(floor=0.0, ceiling=1.0)
    hits = [IndexHit("episode:1", ItemKind.EPISODE, 1, cosine=0.8, bm25=5.0),
            IndexHit("round:1", ItemKind.ROUND, 1, cosine=0.8, bm25=5.0)]
    ranked = rank_hits(hits, cal, threshold=0.0)
    assert [h.kind for h, _ in ranked] == [ItemKind.ROUND, ItemKind.EPISODE]
    assert ranked[1][1] == pytest.approx(ranked[0][1] * KIND_WEIGHT[ItemKind.EPISODE])
