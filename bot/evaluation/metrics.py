"""Packing, credit and recall arithmetic shared by every dataset runner.

Units: budgets and token counts are tokens by the product's counter; recall values are fractions
in [0, 1]; latencies are milliseconds.

Evidence recall at a budget B (per question) is the share of the question's evidence turns that
are covered by the *credited* source turns of the items packed into B tokens. Credit rules keep
a system from earning recall by pointing at many turns without showing them:

* ``round``: all its own source turns (the round's text is the turns themselves);
* ``fact`` / ``key_data``: at most its first ``FACT_CREDIT_LIMIT`` (3) source turns;
* ``episode``: none (a summary of a whole session is not evidence retrieval).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from bot.evaluation.target import EvalItem

#: Source turns a fact or key_data item is credited for, at most.
FACT_CREDIT_LIMIT = 3

_T = TypeVar("_T")

# "D3:7", also "D03:007" and the upstream typo "D:11:26"; case-insensitive.
_DIA_ID_RE = re.compile(r"^D:?(\d+):(\d+)$", re.IGNORECASE)
_EVIDENCE_SPLIT_RE = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class Packed:
    """The items that fit one budget.

    Attributes:
        items: packed items, pinned first, then in rank order.
        tokens: tokens of the packed block: the items' tokens plus the block overhead
            (0 when nothing was packed: an empty block is not rendered).
    """

    items: tuple[EvalItem, ...]
    tokens: int


def pack(items: Sequence[EvalItem], budget_tokens: int, *, block_overhead_tokens: int = 0) -> Packed:
    """Re-pack a ranked item list for a smaller budget, the way production packs it.

    Pinned items come first (in their given order), then the others in rank order; packing
    stops at the first item that would push the total over ``budget_tokens`` (it does not skip
    ahead to smaller items). Pinned items obey the same rule: they cost tokens like any other.

    Args:
        items: recalled items in rank order (pinned ones flagged, wherever they sit).
        budget_tokens: the budget in tokens.
        block_overhead_tokens: tokens of the rendered block's fixed parts (header, separators),
            charged once as soon as at least one item is packed. Default 0.

    Returns:
        The packed items and their total tokens including the overhead.
    """
    ordered = [item for item in items if item.pinned] + [item for item in items if not item.pinned]
    used = block_overhead_tokens
    chosen: list[EvalItem] = []
    for item in ordered:
        if used + item.tokens > budget_tokens:
            break
        chosen.append(item)
        used += item.tokens
    return Packed(tuple(chosen), used if chosen else 0)


def credited_turns(items: Iterable[EvalItem]) -> set[str]:
    """Return the source turns the items earn credit for (rules in the module docstring).

    Raises:
        ValueError: an item has a kind the harness does not know.
    """
    credited: set[str] = set()
    for item in items:
        if item.kind == "round":
            credited.update(item.source_message_ids)
        elif item.kind in ("fact", "key_data"):
            credited.update(item.source_message_ids[:FACT_CREDIT_LIMIT])
        elif item.kind != "episode":
            raise ValueError(f"unknown memory item kind {item.kind!r}")
    return credited


def evidence_recall(evidence: Iterable[str], covered: Container[str]) -> float:
    """Share of ``evidence`` turns found in ``covered`` (a fraction; 0.0 for no evidence)."""
    wanted = set(evidence)
    if not wanted:
        return 0.0
    return sum(1 for turn in wanted if turn in covered) / len(wanted)


def normalise_dia_id(raw: str) -> str | None:
    """Return the canonical ``D<session>:<turn>`` form of one LoCoMo id, or None if malformed.

    Leading zeros are stripped from both numbers (``"D30:05"`` -> ``"D30:5"``), and the
    upstream typo ``"D:11:26"`` reads as ``"D11:26"``.
    """
    match = _DIA_ID_RE.match(raw.strip())
    if match is None:
        return None
    return f"D{int(match.group(1))}:{int(match.group(2))}"


def normalise_evidence(raw: Iterable[str], valid_ids: Container[str]) -> tuple[list[str], int]:
    """Clean a LoCoMo ``evidence`` list.

    Each entry is split on ``;``, ``,`` and whitespace (upstream has ``"D8:6; D9:17"``), each
    piece normalised with ``normalise_dia_id``; pieces that are malformed or not a turn of the
    conversation are dropped. Duplicates are kept once, in first-seen order.

    Returns:
        (valid ids, number of dropped pieces).
    """
    kept: list[str] = []
    dropped = 0
    for entry in raw:
        for piece in _EVIDENCE_SPLIT_RE.split(str(entry)):
            if not piece:
                continue
            dia_id = normalise_dia_id(piece)
            if dia_id is None or dia_id not in valid_ids:
                dropped += 1
            elif dia_id not in kept:
                kept.append(dia_id)
    return kept, dropped


def stratified_sample(
    items: Sequence[_T], limit: int | None, *, key: Callable[[_T], tuple]
) -> list[_T]:
    """A fixed, category-stratified sample of ``limit`` items.

    Items are sorted by ``key`` (e.g. ``(category, conversation, index)``) and ``limit`` of them
    taken at evenly spaced positions ``floor((i + 0.5) * len / limit)``, so each category gets
    its proportional share and the choice does not depend on run order or a random seed.
    ``None`` or a limit >= len returns all items in sorted order.

    Raises:
        ValueError: ``limit`` < 1.
    """
    ordered = sorted(items, key=key)
    if limit is None or limit >= len(ordered):
        return ordered
    if limit < 1:
        raise ValueError("limit must be at least 1")
    size = len(ordered)
    return [ordered[math.floor((i + 0.5) * size / limit)] for i in range(limit)]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean, or None for no values."""
    return sum(values) / len(values) if values else None
