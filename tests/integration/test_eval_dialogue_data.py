"""The BM25 baselines on the real shared LongMemEval and MemDaily data, to keep them honest.

Measured with the heuristic-v1 counter, round lines "(28 May 2023) User: text", no block
overhead (whole split: LongMemEval 100 questions, MemDaily 971, see docs/evaluation.md):
LongMemEval, the 10-question stratified sample: evidence recall 0.25 @400, 0.65 @1000,
0.80 @4000, session recall@5 1.0; MemDaily as one history, 100-question sample: 0.262 @400,
0.385 @1000, 0.535 @4000.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.evaluation.longmemeval import run_longmemeval
from bot.evaluation.memdaily import load_memdaily, run_memdaily
from memory.tokens import HeuristicTokenCounter

DATA = (Path(__file__).parents[2] / ".." / "shared" / "data").resolve()
LME = DATA / "longmemeval" / "longmemeval_s_shared.json.xz"
MEMDAILY = DATA / "memdaily"

pytestmark = pytest.mark.data


@pytest.mark.skipif(not LME.is_file(), reason=f"LongMemEval data not found at {LME}")
async def test_longmemeval_bm25_on_a_sample() -> None:
    report = await run_longmemeval([LME], target_factory=None, embedder=None,
                                   counter=HeuristicTokenCounter(), progress=None, limit=10)
    bm25 = report["systems"]["bm25"]["overall"]
    assert report["questions"] == 10
    assert bm25["evidence_recall@400"] == pytest.approx(0.25, abs=0.05)
    assert bm25["evidence_recall@1000"] == pytest.approx(0.65, abs=0.05)
    assert bm25["session_recall@5"] == pytest.approx(1.0, abs=0.05)
    assert 140_000 <= report["full_history_tokens_mean"] <= 165_000


@pytest.mark.skipif(not MEMDAILY.is_dir(), reason=f"MemDaily data not found at {MEMDAILY}")
async def test_memdaily_bm25_on_a_sample() -> None:
    _, history, counts = load_memdaily([MEMDAILY])
    assert (len(history.sessions), len(history.messages), len(history.questions)) == (988, 8780, 971)
    assert counts["error"] == 17
    report = await run_memdaily([MEMDAILY], target_factory=None, embedder=None,
                                counter=HeuristicTokenCounter(), progress=None, limit=100)
    bm25 = report["systems"]["bm25"]["overall"]
    assert bm25["evidence_recall@400"] == pytest.approx(0.262, abs=0.05)
    assert bm25["evidence_recall@1000"] == pytest.approx(0.385, abs=0.05)
