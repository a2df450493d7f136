"""``memory-bot bench``'s PostgreSQL column on its quick path: tiny sizes, real PostgreSQL (the
test server, scratch schemas the bench creates and drops), the report's shape, not timings."""

from __future__ import annotations

import dataclasses

import asyncpg
import pytest

from bot.bench.runner import QUICK, _start_postgres, format_markdown, run_bench

pytestmark = pytest.mark.postgres

TINY_PG = dataclasses.replace(
    QUICK, sizes=(60,), users=6, turns=4, warmup=1, largest_turns=2, recalls=2, pool_size=40,
    throughput_size=60, throughput_conversations=3, throughput_turns=2, baseline_turns=2,
    baseline_largest_turns=1, ingest_sizes=(), pg_sizes=(60,), pg_workers=(2,),
    pg_throughput_embedders=("cheap_embedder",))


async def _bench_schemas(url: str) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        return [r["nspname"] for r in await conn.fetch(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench\\_%'")]
    finally:
        await conn.close()


async def test_the_postgres_column_measures_turns_and_shared_throughput(tmp_path,
                                                                        postgres_server):
    report = await run_bench(TINY_PG, embedder="hashing", cache_dir=tmp_path / "cache",
                             work_dir=tmp_path, lme_path=None, postgres_url=postgres_server)
    pg = report["postgres"]
    assert pg["error"] is None, pg["error"]
    assert pg["source"] == "DATABASE_URL" and pg["version"].startswith("16")
    (size,) = pg["sizes"]
    assert size["facts"] == 60 and size["users"] == 6 and size["runs"] == 1
    assert size["measured_turns"] == 4
    assert set(size["overhead_ms"]) == {"p50", "p95", "p99"}
    assert set(size["recall_ms"]) == {"p50", "p95"}
    assert 0 < size["overhead_ms_excl_embed"]["p50"] <= size["overhead_ms"]["p99"]
    assert size["seed_s"] > 0 and size["startup_to_first_reply_s"] > 0
    assert "data_dir_mib" not in size  # the folder holds no store on PostgreSQL
    (shared,) = pg["throughput"]["cheap_embedder"]  # two processes on one database
    assert shared["workers"] == 2 and shared["conversations"] == 3
    assert shared["turns"] == 3 * 2  # every conversation ran, split over the processes
    assert shared["turns_per_s"] > 0 and shared["worker_cpu_s_per_turn"] > 0
    assert shared["server_cpu_s_per_turn"] > 0  # the test server runs on this machine
    assert shared["consolidation_backlog_after_s"] is not None
    assert pg["throughput_facts"] == 60
    text = format_markdown(report)
    assert "PostgreSQL 16" in text and "| cheap_embedder | 2 |" in text
    assert await _bench_schemas(postgres_server) == []  # every scratch schema dropped


async def test_without_a_server_the_column_says_why():
    server, report = await _start_postgres(TINY_PG, "postgresql://bench@127.0.0.1:1/none")
    assert server is None
    assert report["error"].startswith("no PostgreSQL server")
    assert report["sizes"] == [] and report["throughput"] == {}
