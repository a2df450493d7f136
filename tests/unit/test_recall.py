from memory.ports import SimilarityCalibration
from memory.recall import (
    EPISODIC_HEADER,
    SEMANTIC_HEADER,
    fused_score,
    pack,
    rank_hits,
)
from memory.tokens import HeuristicTokenCounter
from memory.types import IndexHit, ItemKind, RecalledItem

CAL = SimilarityCalibration(floor=0.2, ceiling=0.8)


def hit(i, cosine=None, bm25=None, kind=ItemKind.ROUND):
    return IndexHit(f"{kind.value}:{i}", kind, i, cosine=cosine, bm25=bm25)


def item(i, kind=ItemKind.ROUND, tokens=10, score=0.5, turns=None, pinned=False):
    return RecalledItem(f"{kind.value}:{i}", kind, f"- item {i}", score, tokens,
                        tuple(turns if turns is not None else [i]), pinned=pinned)


def test_fused_score_is_bounded_and_monotonic():
    assert fused_score(hit(1, cosine=-1.0), CAL) == 0.0
    assert fused_score(hit(1, cosine=1.0, bm25=1e9), CAL) <= 1.0
    assert fused_score(hit(1, cosine=0.5, bm25=3), CAL) > fused_score(hit(1, cosine=0.5), CAL)
    assert fused_score(hit(1, cosine=0.7), CAL) > fused_score(hit(1, cosine=0.5), CAL)


def test_threshold_cuts_and_ranks():
    ranked = rank_hits([hit(1, cosine=0.3), hit(2, cosine=0.8, bm25=10), hit(3, cosine=0.7)],
                       CAL, threshold=0.3)
    assert [h.item_id for h, _ in ranked] == [2, 3]


def test_pack_stops_at_first_item_over_budget():
    counter = HeuristicTokenCounter()
    header = counter.count(EPISODIC_HEADER)
    items = [item(1, tokens=20), item(2, tokens=50), item(3, tokens=5)]
    blocks = pack(items, budget_tokens=header + 30, top_k_facts=3, counter=counter)
    assert [i.key for i in blocks.items] == ["round:1"]  # round:3 would fit, but order rules
    assert blocks.tokens == header + 20
    assert blocks.episodic.startswith(EPISODIC_HEADER)


def test_pack_limits_facts_and_puts_pinned_first():
    counter = HeuristicTokenCounter()
    items = [item(i, ItemKind.FACT) for i in range(1, 6)]
    items.append(item(9, ItemKind.EPISODE, pinned=True, turns=[90, 91]))
    blocks = pack(items, budget_tokens=1000, top_k_facts=2, counter=counter)
    assert [i.key for i in blocks.items] == ["episode:9", "fact:1", "fact:2"]
    assert blocks.semantic.startswith(SEMANTIC_HEADER)
    assert blocks.tokens <= 1000


def test_pack_skips_repeats_of_the_same_turns():
    counter = HeuristicTokenCounter()
    items = [item(1, ItemKind.EPISODE, turns=[1, 2], pinned=True),
             item(5, ItemKind.ROUND, turns=[1, 2]),  # the one-round session's round
             item(6, ItemKind.ROUND, turns=[3, 4]), item(7, ItemKind.ROUND, turns=[5, 6]),
             item(2, ItemKind.EPISODE, turns=[3, 4, 5, 6])]  # all in packed rounds
    blocks = pack(items, budget_tokens=1000, top_k_facts=3, counter=counter)
    assert [i.key for i in blocks.items] == ["episode:1", "round:6", "round:7"]


def test_a_recalled_fact_whose_turns_a_packed_round_shows_is_not_packed_twice():
    counter = HeuristicTokenCounter()
    header = counter.count(SEMANTIC_HEADER) + counter.count(EPISODIC_HEADER)
    profile = [RecalledItem("fact:9", ItemKind.FACT, "- profile", 0.0, 5, (7,), pinned=True,
                            profile=True)]
    items = [item(1, ItemKind.FACT, tokens=10, turns=[7]),  # before its round: refunded
             item(2, ItemKind.FACT, tokens=10, turns=[8]),  # its round is not packed
             item(3, ItemKind.FACT, tokens=10, turns=[7, 8]),  # turn 8 is in no round
             item(4, ItemKind.ROUND, tokens=30, turns=[7]),
             item(5, ItemKind.FACT, tokens=10, turns=[7]),  # after its round: skipped
             item(6, ItemKind.FACT, tokens=10, turns=[6]),  # takes the refunded slot
             item(7, ItemKind.ROUND, tokens=20, turns=[5])]
    # 5 + 10 + 10 + 10 + 30 = 65 before the refund; 55 after, so round:7 fits
    blocks = pack(items, budget_tokens=header + 5 + 10 + 10 + 30 + 10 + 20, top_k_facts=3,
                  counter=counter, profile=profile)
    assert [i.key for i in blocks.items] == ["fact:9", "fact:2", "fact:3", "round:4", "fact:6",
                                             "round:7"]
    assert blocks.tokens == header + 5 + 10 + 10 + 30 + 10 + 20
    # the profile's fact stays although round:4 shows its turn: the block is stable
    assert blocks.profile == "- profile"


def test_a_semantic_block_emptied_by_repeats_gives_its_header_back():
    counter = HeuristicTokenCounter()
    items = [item(1, ItemKind.FACT, tokens=10, turns=[7]),
             item(2, ItemKind.ROUND, tokens=30, turns=[7])]
    blocks = pack(items, budget_tokens=1000, top_k_facts=3, counter=counter)
    assert [i.key for i in blocks.items] == ["round:2"]
    assert blocks.semantic == ""
    assert blocks.tokens == counter.count(EPISODIC_HEADER) + 30


def test_empty_pack():
    blocks = pack([], budget_tokens=100, top_k_facts=3, counter=HeuristicTokenCounter())
    assert blocks.items == () and blocks.tokens == 0 and blocks.semantic == blocks.episodic == ""


def _line(key, kind, text, turns, tokens=20, pinned=False):
    return RecalledItem(key, kind, text, 0.5, tokens, tuple(turns), pinned=pinned)


def test_a_recalled_episode_that_says_only_what_packed_rounds_say_is_a_repeat():
    counter = HeuristicTokenCounter()
    said = "- (2024-04-02) 我将要参加的快递行业年度盛典，它的规模是八千人。 我同事的名字叫李明杰。"
    more = "- (2024-04-03) Caroline: I went to a support group. Open tasks: call the clinic; …"
    items = [
        _line("episode:1", ItemKind.EPISODE, said, [1, 2, 3], pinned=True),  # pinned: stays
        _line("episode:2", ItemKind.EPISODE, said.replace("04-02", "04-05"), [4, 5, 6]),
        _line("round:4", ItemKind.ROUND, "- (2024-04-05) User: 我将要参加的快递行业年度盛典，它的规模是八千人。", [4]),
        _line("episode:3", ItemKind.EPISODE, more, [7, 8, 9]),  # says more than the round below
        _line("round:5", ItemKind.ROUND, "- (2024-04-05) User: 我同事的名字叫李明杰。", [5]),
        _line("round:7", ItemKind.ROUND, "- (2024-04-03) Caroline: I went to a support group.", [7]),
        _line("episode:4", ItemKind.EPISODE, "- (2024-04-05) 我同事的名字叫李明杰。 …", [10, 11]),
    ]
    blocks = pack(items, budget_tokens=1000, top_k_facts=3, counter=counter)
    # episode:2 was packed before its sentences' rounds and taken out again after round:5;
    # episode:4 (cut, its one sentence shown by round:5) is skipped
    assert [i.key for i in blocks.items] == ["episode:1", "round:4", "episode:3", "round:5",
                                             "round:7"]
    assert blocks.tokens == counter.count(EPISODIC_HEADER) + 5 * 20
    assert "call the clinic" in blocks.episodic
