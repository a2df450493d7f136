"""``memory-bot bench --quick``: the report has the documented shape (docs/benchmarks.md)
(run here on a tiny size with the hashing embedder, real SQLite and LanceDB in a temp folder)."""

from __future__ import annotations

import dataclasses
import json

from bot.bench.runner import QUICK, format_markdown, run_bench
from bot.bench.seed import skewed_counts
from bot.bench.stats import median_of, percentiles
from bot.cli import _parser

TINY = dataclasses.replace(
    QUICK, sizes=(60,), users=6, turns=6, warmup=2, largest_turns=2, recalls=2, pool_size=40,
    throughput_size=60, throughput_conversations=3, throughput_turns=2, baseline_turns=3,
    baseline_largest_turns=1, ingest_sizes=(60,), ingest_sessions=2, ingest_exchanges=2,
    startup_runs=1, pg_sizes=(), pg_workers=())  # PostgreSQL: test_bench_postgres.py

SIZE_KEYS = {"facts", "users", "rounds", "overhead_ms", "overhead_ms_excl_embed", "embed_ms",
             "recall_ms", "rss_peak_mib", "data_dir_mib", "data_dir_mib_after_maintenance"}


async def test_quick_report_has_the_contract_shape(tmp_path):
    report = await run_bench(TINY, embedder="hashing", cache_dir=tmp_path / "cache",
                             work_dir=tmp_path, lme_path=None)
    assert report["schema"] == "memory-bot-bench/1"
    assert report["machine"]["cpus"] >= 1
    assert isinstance(report["embedder"], str) and report["embedder"]
    (size,) = report["sizes"]
    assert SIZE_KEYS <= size.keys()
    assert size["facts"] == 60 and size["users"] == 6 and size["rounds"] == 60
    assert set(size["overhead_ms"]) == {"p50", "p95", "p99"}
    assert set(size["overhead_ms_excl_embed"]) == {"p50", "p95", "p99"}
    assert set(size["embed_ms"]) == {"p50", "p95"} and set(size["recall_ms"]) == {"p50", "p95"}
    assert size["measured_turns"] == 6
    assert 0 < size["overhead_ms_excl_embed"]["p50"] <= size["overhead_ms"]["p99"]
    assert size["rss_peak_mib"] > 0 and size["data_dir_mib"] > 0
    assert set(report["throughput_turns_per_s"]) == {"default_embedder", "cheap_embedder"}
    assert all(v > 0 for v in report["throughput_turns_per_s"].values())
    assert report["consolidation_backlog_after_s"] is not None  # the backlog drained
    assert report["startup_to_first_reply_s"] > 0
    (base,) = report["baseline_json_file"]["sizes"]
    assert base["facts"] == 60 and set(base["overhead_ms"]) == {"p50", "p95", "p99"}
    # ingest: per message on the seeded folder; no replay data here
    assert set(report["ingest"]) >= {"messages_per_s", "per_message_ms_at"}
    assert report["ingest"]["messages_per_s"] is None
    assert set(report["ingest"]["per_message_ms_at"]) == {"60"}
    assert report["ingest"]["per_message_ms_at"]["60"] > 0
    assert report["reference"] == {} and report["ratios"] == {}
    assert report["postgres"]["error"] and report["postgres"]["sizes"] == []  # not configured
    json.dumps(report)  # serialisable as the --out file
    assert "| 60 |" in format_markdown(report)
    assert not list(tmp_path.glob("memory-bot-bench-*"))  # temporary folders removed


def test_cli_takes_quick_out_and_against():
    args = _parser().parse_args(["bench", "--quick", "--out", "report.json"])
    assert args.command == "bench" and args.quick and str(args.out) == "report.json"
    assert args.against is None
    assert _parser().parse_args(["bench", "--against", "9514400"]).against == "9514400"


def test_an_unknown_reference_is_reported_not_fatal(tmp_path):
    from bot.bench.reference import export_reference

    tree, why = export_reference("no-such-revision-anywhere", tmp_path / "ref")
    assert tree is None and why


def test_a_reference_tree_runs_the_same_jobs_with_its_own_code(tmp_path):
    from bot.bench.reference import export_reference
    from bot.bench.runner import _worker

    tree, why = export_reference("HEAD", tmp_path / "ref")
    assert tree is not None, why
    assert (tree / "memory" / "service.py").exists() and (tree / "bot" / "bench" / "ingest.py").exists()
    seeded = _worker({"task": "seed", "folder": str(tmp_path / "data"), "facts": 30, "users": 3,
                      "pool_size": 40, "embedder": "hashing", "cache_dir": str(tmp_path / "c")},
                     code=tree)
    assert seeded["facts"] == 30 and (tmp_path / "data" / "memory.db").exists()
    result = _worker({"task": "startup", "folder": str(tmp_path / "data"), "embedder": "hashing",
                      "users": 3}, code=tree)
    assert result["startup_to_first_reply_s"] > 0
    assert result["code"] == str(tree.resolve())  # the reference's own code ran


def test_skew_gives_the_largest_user_its_share():
    counts = skewed_counts(100_000, 1000, 0.05)
    assert sum(counts) == 100_000 and counts[0] == 5000 and min(counts) >= 1
    assert counts[0] == max(counts)
    assert sum(skewed_counts(60, 6, 0.05)) == 60


def test_percentiles_and_medians():
    values = list(range(1, 101))
    assert percentiles(values) == {"p50": 50.0, "p95": 95.0, "p99": 99.0}
    assert percentiles([]) == {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    runs = [{"a": 1, "b": {"c": 5.0}, "s": "x"}, {"a": 3, "b": {"c": 1.0}, "s": "y"},
            {"a": 2, "b": {"c": 3.0}, "s": "z"}]
    assert median_of(runs) == {"a": 2, "b": {"c": 3.0}, "s": "x"}
