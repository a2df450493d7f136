"""Packing, credit, evidence normalisation, date parsing and sampling of the eval harness."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from bot.evaluation.locomo import parse_locomo_datetime
from bot.evaluation.metrics import (
    credited_turns,
    evidence_recall,
    normalise_dia_id,
    normalise_evidence,
    pack,
    percentile,
    stratified_sample,
)
from bot.evaluation.target import EvalItem


def item(kind: str, tokens: int, *ids: str, pinned: bool = False) -> EvalItem:
    return EvalItem(kind=kind, text=f"{kind} {ids}", tokens=tokens, source_message_ids=ids, pinned=pinned)


def test_pack_stops_at_first_overflow_without_skipping_to_smaller_items() -> None:
    items = [item("round", 100, "D1:1"), item("round", 250, "D1:2"), item("round", 10, "D1:3")]
    packed = pack(items, 300)
    assert [i.source_message_ids for i in packed.items] == [("D1:1",)]
    assert packed.tokens == 100


def test_pack_exact_fit_is_included() -> None:
    items = [item("round", 100, "D1:1"), item("round", 200, "D1:2")]
    assert pack(items, 300).tokens == 300


def test_pinned_items_come_first_and_cost_tokens() -> None:
    items = [item("round", 100, "D1:1"), item("episode", 250, "D1:2", pinned=True), item("round", 60, "D1:3")]
    packed = pack(items, 360)
    assert [i.kind for i in packed.items] == ["episode", "round"]
    assert packed.tokens == 350
    assert pack(items, 200).items == ()  # the pinned item alone overflows: nothing fits after it


def test_block_overhead_is_charged_once_and_only_for_a_non_empty_block() -> None:
    items = [item("round", 100, "D1:1"), item("round", 100, "D1:2")]
    assert pack(items, 250, block_overhead_tokens=40).tokens == 240
    assert len(pack(items, 250, block_overhead_tokens=40).items) == 2
    assert len(pack(items, 239, block_overhead_tokens=40).items) == 1
    assert pack(items, 120, block_overhead_tokens=40) == pack([], 120, block_overhead_tokens=40)
    assert pack([], 120, block_overhead_tokens=40).tokens == 0


def test_credit_rules() -> None:
    assert credited_turns([item("round", 1, "D1:1", "D1:2", "D1:3", "D1:4", "D1:5")]) == {
        "D1:1", "D1:2", "D1:3", "D1:4", "D1:5"
    }
    assert credited_turns([item("fact", 1, "D1:1", "D1:2", "D1:3", "D1:4")]) == {"D1:1", "D1:2", "D1:3"}
    assert credited_turns([item("key_data", 1, "D2:1", "D2:2", "D2:3", "D2:4")]) == {"D2:1", "D2:2", "D2:3"}
    assert credited_turns([item("episode", 1, "D1:1", "D1:2")]) == set()
    with pytest.raises(ValueError):
        credited_turns([item("summary", 1, "D1:1")])


def test_evidence_recall_is_the_covered_share() -> None:
    assert evidence_recall(["D1:1", "D1:2"], {"D1:2", "D9:9"}) == 0.5
    assert evidence_recall(["D1:1"], set()) == 0.0


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("D3:7", "D3:7"), ("D30:05", "D30:5"), ("d03:007", "D3:7"), ("D:11:26", "D11:26"),
     (" D1:2 ", "D1:2"), ("D", None), ("3:7", None), ("D3-7", None)],
)
def test_normalise_dia_id(raw: str, expected: str | None) -> None:
    assert normalise_dia_id(raw) == expected


def test_normalise_evidence_splits_strips_and_drops_unknown() -> None:
    valid = {"D8:6", "D9:17", "D30:5", "D1:1"}
    ids, dropped = normalise_evidence(["D8:6; D9:17", "D30:05", "D99:1", "D", "D1:1,D1:1"], valid)
    assert ids == ["D8:6", "D9:17", "D30:5", "D1:1"]
    assert dropped == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)),
        ("12:48 am on 1 February, 2023", datetime(2023, 2, 1, 0, 48, tzinfo=timezone.utc)),
        ("12:09 pm on 13 September, 2023", datetime(2023, 9, 13, 12, 9, tzinfo=timezone.utc)),
        ("10:04 AM on 19 December 2023", datetime(2023, 12, 19, 10, 4, tzinfo=timezone.utc)),
        ("7 pm on 3rd Sept, 2022", datetime(2022, 9, 3, 19, 0, tzinfo=timezone.utc)),
        ("8 May, 2023", datetime(2023, 5, 8, tzinfo=timezone.utc)),
    ],
)
def test_parse_locomo_datetime(text: str, expected: datetime) -> None:
    assert parse_locomo_datetime(text) == expected


@pytest.mark.parametrize("text", ["", "yesterday", "13:00 pm on 8 May, 2023", "1:56 pm on 8 Mayo, 2023"])
def test_parse_locomo_datetime_rejects_garbage(text: str) -> None:
    with pytest.raises(ValueError):
        parse_locomo_datetime(text)


def test_stratified_limit_is_deterministic_and_proportional() -> None:
    pool = [(cat, i) for cat, size in ((1, 30), (2, 20), (4, 40), (5, 10)) for i in range(size)]
    key = lambda x: x  # noqa: E731 - (category, index)
    first = stratified_sample(list(reversed(pool)), 10, key=key)
    again = stratified_sample(pool, 10, key=key)
    assert first == again
    assert len(first) == 10 and len(set(first)) == 10
    per_cat = {cat: sum(1 for c, _ in first if c == cat) for cat in (1, 2, 4, 5)}
    assert per_cat == {1: 3, 2: 2, 4: 4, 5: 1}
    assert stratified_sample(pool, None, key=key) == sorted(pool)
    assert stratified_sample(pool, 1000, key=key) == sorted(pool)
    with pytest.raises(ValueError):
        stratified_sample(pool, 0, key=key)


def test_percentile_interpolates() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([0.0, 10.0], 95) == pytest.approx(9.5)
