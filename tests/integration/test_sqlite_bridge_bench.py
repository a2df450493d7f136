"""The SQLite bridge benchmark (``python -m bot.bench.sqlite_bridge``) at a tiny size: every
side runs every call, and the sides write the same rows (checked inside ``measure``)."""

from __future__ import annotations

import pytest

pytest.importorskip("aiosqlite")

from bot.bench.sqlite_bridge import CALLS, measure  # noqa: E402


async def test_every_side_measures_every_call():
    rows = await measure(calls=6, rounds=3, tasks=2)
    assert {(r["side"], r["call"]) for r in rows} == {
        (side, call) for side in ("executor (store)", "executor (same SQL)",
                                  "aiosqlite (public API)") for call in CALLS}
    for row in rows:
        assert row["calls"] == 18 and 0 < row["p50_ms"] <= row["p95_ms"]
        assert row["cpu_ms_per_call"] >= 0
