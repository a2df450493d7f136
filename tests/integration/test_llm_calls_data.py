"""Model calls of LLM consolidation per 100 turns on LoCoMo conversation 30, replayed through the
production pipeline with a scripted model that counts its calls (target: under
10). Measured: 19 calls for 369 turns in 19 sessions = 5.15 per 100 turns (one call per session
close, no fold; group replay 18 candidates sent, private replay 82)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.evaluation.llm_calls import count_calls

CONVERSATION_30 = (Path(__file__).parents[2] / ".." / "shared" / "data" / "locomo" / "30.json"
                   ).resolve()

pytestmark = [
    pytest.mark.data,
    pytest.mark.skipif(not CONVERSATION_30.is_file(),
                       reason=f"LoCoMo data not found at {CONVERSATION_30}"),
]


async def test_consolidation_calls_per_100_turns_under_10(tmp_path) -> None:
    result = await count_calls(CONVERSATION_30, private=True, work_dir=tmp_path)
    assert result.turns == 369 and result.sessions == 19
    assert result.calls <= result.sessions  # at most one call per close (sessions < 40 turns)
    assert result.per_100_turns < 10
