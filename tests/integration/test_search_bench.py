"""The search benchmark (``python -m bot.bench.search_backends``) at a tiny size, against the
PostgreSQL the tests start: every backend measured, the scratch schema gone afterwards."""

from __future__ import annotations

import asyncpg
import pytest

from bot.bench.search_backends import run

pytestmark = pytest.mark.postgres


async def test_the_search_benchmark_measures_each_backend_and_cleans_up(postgres_server):
    report = await run([400], 8, postgres_server)
    assert [r["backend"] for r in report] == ["LanceIndex", "PgSearchIndex exact",
                                              "PgSearchIndex HNSW"]
    for row in report:
        assert row["rows"] == 400 and 0 < row["p50_ms"] <= row["p95_ms"]
    assert 0 < report[2]["dense_recall_at_20"] <= 1
    conn = await asyncpg.connect(postgres_server)
    try:
        assert not await conn.fetch("SELECT 1 FROM pg_namespace WHERE nspname LIKE 'bench_%'")
    finally:
        await conn.close()
