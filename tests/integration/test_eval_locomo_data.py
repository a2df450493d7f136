"""BM25 baseline on real LoCoMo data (conversation 30), to keep the baseline honest.

Measured on ../shared/data/locomo/30.json with the heuristic-v1 counter and round
lines "(8 May 2023) Speaker: text [shares a photo: ...]": evidence recall 0.623 @400,
0.716 @1000, 0.848 @4000, R@10 0.676 (81 questions of categories 1-4).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.evaluation.locomo import run_locomo
from memory.tokens import HeuristicTokenCounter

DATA = (Path(__file__).parents[2] / ".." / "shared" / "data" / "locomo").resolve()
CONVERSATION_30 = DATA / "30.json"

pytestmark = [
    pytest.mark.data,
    pytest.mark.skipif(
        not CONVERSATION_30.is_file(),
        reason=f"LoCoMo data not found at {CONVERSATION_30} (shared/data beside the checkout)",
    ),
]


async def test_bm25_baseline_on_conversation_30() -> None:
    report = await run_locomo([CONVERSATION_30], target_factory=None, embedder=None,
                              counter=HeuristicTokenCounter(), progress=None)
    bm25 = report["systems"]["bm25"]["overall"]
    assert report["questions"] == 105
    assert report["systems"]["bm25"]["by_type"]["adversarial"]["n"] == 24
    assert bm25["evidence_recall@1000"] == pytest.approx(0.716, abs=0.05)
    assert bm25["evidence_recall@400"] == pytest.approx(0.623, abs=0.05)
    assert bm25["recall@10"] == pytest.approx(0.676, abs=0.05)
    assert 900 <= bm25["memory_tokens_mean"] <= 1000
