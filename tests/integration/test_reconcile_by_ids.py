"""Start-up reconcile compares ids first and builds rows only for what the index lacks:
the rows it writes back are the rows the index had, and rows SQLite lacks go."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np

from bot.memtune import tune_allocator
from memory.types import IndexItem, ItemKind
from tests.conftest import make_harness


async def _rows(index) -> dict[str, dict]:
    table = await index._table.query().to_arrow()
    return {r["key"]: r for r in table.to_pylist()}


async def test_partial_reconcile_rewrites_exactly_the_missing_rows(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        for topic in ("vector database benchmarks", "pancake recipes", "bike tyre repair"):
            await h.say(f"Let's talk about {topic} with Python")
            await h.say("/new")
        await h.say("remember I mainly use Python")
        await h.say("remember my sister Anna lives in Graz")
        before = await _rows(h.index)
        kinds = {key.split(":")[0] for key in before}
        assert {"fact", "episode", "round"} <= kinds
        lost = sorted(next(k for k in before if k.startswith(f"{kind}:"))
                      for kind in ("fact", "episode", "round"))
        await h.index.delete(lost)
        stray = IndexItem(key="round:999999", kind=ItemKind.ROUND, item_id=999999, owner="",
                          scope="user:1", status="active", text="stray", search_text="stray",
                          vector=[1.0] + [0.0] * (h.memory.embedder.dim - 1),
                          created_at=datetime(2026, 1, 1, tzinfo=timezone.utc))
        await h.index.upsert([stray])

        assert await h.memory.reconcile() == (len(lost), 1)
        after = await _rows(h.index)
        assert after.keys() == before.keys()
        for key in lost:  # rebuilt from SQLite exactly as first written
            old, new = before[key], after[key]
            assert {c: old[c] for c in old if c != "vector"} == {
                c: new[c] for c in new if c != "vector"}
            assert np.allclose(old["vector"], new["vector"], atol=1e-6)
        assert await h.memory.reconcile() == (0, 0)
    finally:
        await h.index.close()
        await h.store.close()


def test_allocator_tuning_leaves_explicit_settings_alone():
    both = {"MALLOC_ARENA_MAX": "4", "MALLOC_MMAP_THRESHOLD_": "131072"}
    assert tune_allocator(both) is False  # the environment wins: nothing applied
    assert isinstance(tune_allocator({}), bool)  # True on glibc, False elsewhere
