"""``memory-bot bench``: seed production stores at several sizes and measure them.

For each size: seed a temporary data folder (SQLite + the LanceDB table of each embedder
measured, vectors from the cached pool), then run the ``turns`` job of
:mod:`bot.bench.worker` ``runs`` times, each in a fresh process on a fresh copy of the seeded
folder (copying takes seconds, seeding again a minute), and keep the median of every number.
Then the throughput job with the default and the cheapest embedder, each on its own copy of
the ``throughput_size`` folder (10,000 facts), and the JSON-file baseline at every size. Then
ingest (:mod:`bot.bench.ingest`): the cost per ingested message on copies of folders seeded with
1,000, 10,000 and 100,000 facts (cheapest embedder), and one LongMemEval_S haystack replayed
with the default embedder and no embedding cache, when the data is beside the checkout. With
``against`` (a git revision, :mod:`bot.bench.reference`), start-up and the default embedder's
throughput are measured for that code too, in the same run, and reported as ratios. The
PostgreSQL column (:mod:`bot.bench.postgres`, ``pg_*`` of :class:`BenchConfig`): the same
seeded rows in scratch schemas, the ``turns`` job at ``pg_sizes`` and the throughput job in
1, 2 and 3 processes sharing one database, with CPU seconds per turn. The report has the shape
described in docs/benchmarks.md, "What is measured"; progress goes to stderr.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bot.bench.baseline import run_baseline
from bot.bench.reference import export_reference
from bot.bench.pool import load_pool
from bot.bench.postgres import PgServer, shared_throughput
from bot.bench.seed import SeedPlan, seed
from bot.bench.stats import median_of, percentiles
from bot.bench.worker import job_env

SCHEMA = "memory-bot-bench/1"
CHEAP_EMBEDDER = "hashing"


@dataclass(frozen=True)
class BenchConfig:
    """What to measure and how much.

    Attributes:
        sizes: fact counts (rounds as many; users ``users``).
        users: users per size.
        runs: measurement runs per size (the report keeps the median).
        turns: measured turns per run (random users), after ``warmup`` turns; percentiles
            pool the turns of all runs (:data:`POOLED`).
        largest_turns: measured turns of the largest user per run.
        recalls: recall-only measurements per run.
        pool_size: texts in the embedded pool.
        throughput_size: the seeded size the throughput jobs run on (a copy of it).
        throughput_conversations: concurrent conversations in the throughput job.
        throughput_turns: turns per conversation.
        baseline_turns: measured turns of the JSON-file design per size (random users);
            ``baseline_largest_turns`` of its largest user.
        ingest_sizes: seeded sizes (facts) the cost per ingested message is measured at.
        ingest_sessions: sessions ingested per size (the first one a warm-up), each of
            ``ingest_exchanges`` exchanges (a user message and its reply).
        startup_runs: start-up measurements of this code and of the reference, alternated.
        pg_sizes: sizes (of ``sizes``) whose per-turn overhead is measured on PostgreSQL too
            (``runs`` runs on one copy of the store, :mod:`bot.bench.postgres`).
        pg_workers: worker process counts of the PostgreSQL throughput job (on a copy of the
            ``throughput_size`` store each).
        pg_throughput_embedders: which of ``default_embedder`` and ``cheap_embedder`` the
            PostgreSQL throughput job runs with.
    """

    sizes: tuple[int, ...] = (1000, 10000, 100000)
    users: int = 1000
    runs: int = 3
    turns: int = 350
    warmup: int = 30
    largest_turns: int = 100
    recalls: int = 100
    pool_size: int = 2000
    throughput_size: int = 10000
    throughput_conversations: int = 50
    throughput_turns: int = 10
    baseline_turns: int = 100
    baseline_largest_turns: int = 10
    embedders: tuple[str, ...] = field(default=())
    ingest_sizes: tuple[int, ...] = (1000, 10000, 100000)
    ingest_sessions: int = 6
    ingest_exchanges: int = 10
    startup_runs: int = 3
    pg_sizes: tuple[int, ...] = (10000, 100000)
    pg_workers: tuple[int, ...] = (1, 2, 3)
    pg_throughput_embedders: tuple[str, ...] = ("default_embedder", "cheap_embedder")


FULL = BenchConfig()
QUICK = BenchConfig(sizes=(1000, 10000), runs=1, turns=200, warmup=20, largest_turns=30,
                    recalls=30, pool_size=600, throughput_turns=6, baseline_turns=30,
                    baseline_largest_turns=5, pg_sizes=(10000,),
                    pg_throughput_embedders=("cheap_embedder",))

#: Report keys of a size that say nothing on PostgreSQL (the data folder holds no store; no
#: maintenance runs, since the runs share one copy of the store).
PG_DROPPED = ("data_dir_mib", "data_dir_mib_after_maintenance", "data_dir_mib_per_1000_turns",
              "data_dir_mib_per_1000_turns_after_maintenance", "maintenance_s", "index_folds")

#: The LongMemEval_S file whose first haystack the ingest measurement replays (beside the
#: checkout, as the evaluation reads it; skipped when absent).
LME_PATH = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "longmemeval" / \
    "longmemeval_s_shared.json.xz"

#: Percentiles are taken over the measured turns of all runs together (at least 1,000 turns
#: in the full run); every other number is the median of the runs.
POOLED = {"overhead_ms": (50, 95, 99), "overhead_ms_excl_embed": (50, 95, 99),
          "embed_ms": (50, 95), "overhead_ms_largest_user": (50, 95, 99),
          "overhead_ms_excl_embed_largest_user": (50, 95, 99), "recall_ms": (50, 95)}


def _say(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def _worker(job: dict, timeout: float = 900, code: Path | None = None) -> dict:
    """Run one job of :mod:`bot.bench.worker` in a fresh process (of the checkout ``code``
    when given, :mod:`bot.bench.reference`) and return its result."""
    job = {**job, "t0": time.time()}
    env = job_env(code)
    # ``-m`` puts the working folder first on sys.path: run a reference from its own tree
    proc = subprocess.run([sys.executable, "-m", "bot.bench.worker", json.dumps(job)],
                          capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=str(code) if code is not None else None)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"bench worker failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(lines[-1])


async def run_bench(config: BenchConfig, *, embedder: str, cache_dir: Path | None,
                    work_dir: Path | None = None, against: str | None = None,
                    lme_path: Path | None = LME_PATH, postgres_url: str | None = None) -> dict:
    """Run the benchmark and return the report (docs/benchmarks.md, "What is measured").

    Args:
        config: sizes and counts (:data:`FULL` or :data:`QUICK`).
        embedder: the default embedder's name (``EMBEDDER``).
        cache_dir: where the embedded pools are cached (None: a temporary folder).
        work_dir: parent of the temporary data folders (default: the system's temp folder).
        against: a git revision to measure start-up and throughput against (None: none).
        lme_path: the LongMemEval_S file of the replay measurement (None or absent: skipped).
        postgres_url: the database the PostgreSQL column's scratch schemas go into (None: a
            server started with pgserver); without a server the column says why
            (``postgres.error``) and the rest is measured.
    """
    from adapters.embedders import make_embedder

    started = time.perf_counter()
    pool_dir = Path(tempfile.mkdtemp(prefix="memory-bot-pools-", dir=work_dir))
    names = tuple(dict.fromkeys((*(config.embedders or (embedder,)), CHEAP_EMBEDDER)))
    pools = {}
    for name in names:
        emb = make_embedder(name)
        t0 = time.perf_counter()
        pools[name] = (emb.name, emb.dim, await load_pool(emb, size=config.pool_size,
                                                          cache_dir=cache_dir or pool_dir))
        _say(f"pool of {config.pool_size} texts for {name} ready in "
             f"{time.perf_counter() - t0:.1f}s")
        close = getattr(emb, "close", None)
        if close is not None:
            close()
    root = Path(tempfile.mkdtemp(prefix="memory-bot-bench-", dir=work_dir))
    pool_cache = cache_dir if cache_dir is not None else pool_dir
    sizes, baselines, seeded = [], [], {}
    throughput: dict = {}
    per_message: dict[int, dict] = {}
    reference: dict = {"revision": against} if against else {}
    startup: dict = {"this": [], "reference": []}
    pg, pg_report = await _start_postgres(config, postgres_url)
    pg_urls: dict = {}  # "turns" or (embedder label, workers) -> the URL of a scratch schema
    try:
        tp_size = (config.throughput_size if config.throughput_size in config.sizes
                   else max(config.sizes))
        for facts in config.sizes:
            plan = SeedPlan(facts=facts, users=config.users)
            folder = root / f"size-{facts}"
            wanted = {embedder: pools[embedder]}
            if facts == tp_size or facts in config.ingest_sizes:
                wanted = pools
            urls = {}  # the PostgreSQL stores seeded with this size, with their embedders
            if pg is not None and facts in config.pg_sizes:
                urls["turns"] = (await pg.create_schema(), (embedder,))
            if pg is not None and facts == tp_size:
                for key in itertools.product(config.pg_throughput_embedders, config.pg_workers):
                    name = embedder if key[0] == "default_embedder" else CHEAP_EMBEDDER
                    urls[key] = (await pg.create_schema(), (name,))
            pg_urls.update((key, url) for key, (url, _) in urls.items())
            t0 = time.perf_counter()
            seeded[facts] = await seed(folder, plan, wanted, postgres_urls=dict(urls.values()))
            _say(f"seeded {facts} facts in {time.perf_counter() - t0:.1f}s (PostgreSQL copies "
                 f"{seeded[facts].get('postgres_s', [])} s)")
            if facts == tp_size:  # the throughput jobs get the folder as seeded
                shutil.copytree(folder, root / "throughput")
            runs = []
            for run in range(config.runs):
                # every run starts from the seeded folder as seeded: a copy (seconds) instead
                # of seeding again (a minute at 100,000 facts), and the runs stay comparable
                t0 = time.perf_counter()
                run_folder = root / f"run-{facts}"
                shutil.rmtree(run_folder, ignore_errors=True)
                shutil.copytree(folder, run_folder)
                copy_s = time.perf_counter() - t0
                try:
                    runs.append(_worker({
                        "task": "turns", "folder": str(run_folder), "embedder": embedder,
                        "users": config.users, "warmup": config.warmup, "turns": config.turns,
                        "largest_turns": config.largest_turns, "recalls": config.recalls,
                        "pool_size": config.pool_size, "seed": run + 1}))
                finally:
                    shutil.rmtree(run_folder, ignore_errors=True)
                _say(f"size {facts} run {run + 1}: copied the seeded folder in {copy_s:.1f}s")
                _say(f"size {facts} run {run + 1}: overhead p95 "
                     f"{runs[-1]['overhead_ms']['p95']} ms (excl. embedding "
                     f"{runs[-1]['overhead_ms_excl_embed']['p95']} ms)")
            merged = _pooled(runs)
            sizes.append({"facts": facts, "users": config.users, "rounds": plan.round_count,
                          **merged, "runs": len(runs), "seed": seeded[facts]})
            if "turns" in pg_urls:
                url = pg_urls.pop("turns")
                try:
                    pg_report["sizes"].append({"facts": facts, "users": config.users,
                                               "rounds": plan.round_count,
                                               **_pg_turns(url, root, facts, config, embedder),
                                               "seed_s": seeded[facts]["postgres_s"][0]})
                except Exception as exc:  # noqa: BLE001 - reported; the rest is measured
                    pg_report["error"] = f"per-turn overhead at {facts}: {exc}"[:500]
                    _say(f"PostgreSQL: {pg_report['error']}")
                await pg.drop_schema(url)
            base = run_baseline(root / f"json-{facts}", plan, pools[embedder][2],
                                turns=config.baseline_turns,
                                largest_turns=config.baseline_largest_turns)
            ours = merged["overhead_ms_excl_embed"]["p95"]
            base["ratio_p95_vs_ours_excl_embed"] = (round(base["overhead_ms"]["p95"] / ours, 1)
                                                    if ours else None)
            baselines.append(base)
            shutil.rmtree(root / f"json-{facts}", ignore_errors=True)
            _say(f"json-file baseline at {facts}: p95 {base['overhead_ms']['p95']} ms")
            if facts in config.ingest_sizes:
                per_message[facts] = _ingest_at(root, folder, config)
            shutil.rmtree(folder, ignore_errors=True)  # free the disk (420 MB at 100,000)
        for facts in config.ingest_sizes:  # sizes the turns are not measured at
            if facts in per_message:
                continue
            folder = root / f"ingest-{facts}"
            t0 = time.perf_counter()
            await seed(folder, SeedPlan(facts=facts, users=config.users),
                       {CHEAP_EMBEDDER: pools[CHEAP_EMBEDDER]})
            _say(f"seeded {facts} facts for ingest in {time.perf_counter() - t0:.1f}s")
            per_message[facts] = _ingest_at(root, folder, config)
            shutil.rmtree(folder, ignore_errors=True)
        code = None
        if against:
            code, why = export_reference(against, root / "reference-code")
            if code is None:
                reference["error"] = why
                _say(f"reference {against} unavailable: {why}")
            else:
                t0 = time.perf_counter()
                reference["seed"] = _worker({
                    "task": "seed", "folder": str(root / "reference"), "facts": tp_size,
                    "users": config.users, "pool_size": config.pool_size, "embedder": embedder,
                    "cache_dir": str(pool_cache)}, code=code)
                _say(f"reference {against}: seeded {tp_size} facts in "
                     f"{time.perf_counter() - t0:.1f}s")
        for label, name in (("default_embedder", embedder), ("cheap_embedder", CHEAP_EMBEDDER)):
            folder = root / f"throughput-{label}"  # each job on the folder as seeded
            shutil.copytree(root / "throughput", folder)
            throughput[label] = _worker({
                "task": "throughput", "folder": str(folder), "embedder": name,
                "users": config.users, "conversations": config.throughput_conversations,
                "turns_per_conversation": config.throughput_turns,
                "pool_size": config.pool_size})
            shutil.rmtree(folder, ignore_errors=True)
            _say(f"throughput {label} ({name}): {throughput[label]['turns_per_s']} turns/s")
            if code is not None and label == "default_embedder":  # the same job, right after
                folder = root / "reference-throughput"
                shutil.copytree(root / "reference", folder)
                reference["throughput"] = _worker({
                    "task": "throughput", "folder": str(folder), "embedder": name,
                    "users": config.users, "conversations": config.throughput_conversations,
                    "turns_per_conversation": config.throughput_turns,
                    "pool_size": config.pool_size}, code=code)
                shutil.rmtree(folder, ignore_errors=True)
                _say(f"throughput {label} of {against}: "
                     f"{reference['throughput']['turns_per_s']} turns/s")
        for (label, workers), url in list(pg_urls.items()):
            name = embedder if label == "default_embedder" else CHEAP_EMBEDDER
            try:
                result = await shared_throughput(pg, url, workers, {
                    "embedder": name, "users": config.users,
                    "conversations": config.throughput_conversations,
                    "turns_per_conversation": config.throughput_turns,
                    "pool_size": config.pool_size}, root / f"pg-throughput-{label}-{workers}")
                pg_report["throughput"].setdefault(label, []).append(result)
                _say(f"PostgreSQL throughput {label} ({name}), {workers} workers: "
                     f"{result['turns_per_s']} turns/s, CPU s/turn workers "
                     f"{result['worker_cpu_s_per_turn']}, server {result['server_cpu_s_per_turn']}")
            except Exception as exc:  # noqa: BLE001 - reported; the rest is measured
                pg_report["error"] = f"throughput {label} with {workers} workers: {exc}"[:500]
                _say(f"PostgreSQL: {pg_report['error']}")
            await pg.drop_schema(pg_urls.pop((label, workers)))
        for _ in range(config.startup_runs if code is not None else 0):  # alternated
            for which, source, tree in (("this", root / "throughput", None),
                                        ("reference", root / "reference", code)):
                folder = root / f"startup-{which}"
                shutil.copytree(source, folder)
                startup[which].append(_worker({"task": "startup", "folder": str(folder),
                                               "embedder": embedder, "users": config.users},
                                              code=tree)["startup_to_first_reply_s"])
                shutil.rmtree(folder, ignore_errors=True)
        if code is not None:
            _say(f"start-up to first reply: {startup['this']} s, {against}: "
                 f"{startup['reference']} s")
        replay = None
        if lme_path is not None and Path(lme_path).exists():
            replay = _worker({"task": "replay", "path": str(lme_path),
                              "folder": str(root / "replay"), "embedder": embedder},
                             timeout=3600)
            shutil.rmtree(root / "replay", ignore_errors=True)
            _say(f"replayed {replay['history']}: {replay['messages']} messages in "
                 f"{replay['elapsed_s']} s, {replay['messages_per_s']} messages/s")
        else:
            _say(f"replay skipped: {lme_path} is absent")
    finally:
        if pg is not None:
            try:
                for url in pg_urls.values():  # left by a failure
                    await pg.drop_schema(url)
            finally:
                pg.stop()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(pool_dir, ignore_errors=True)
    by_size = {s["facts"]: s for s in sizes}
    ratios = {}
    if reference.get("throughput") and throughput.get("default_embedder"):
        old = reference["throughput"]["turns_per_s"]
        ratios["throughput_default_embedder"] = (
            round(throughput["default_embedder"]["turns_per_s"] / old, 2) if old else None)
    if startup["this"] and startup["reference"]:
        reference["startup_to_first_reply_s"] = statistics.median(startup["reference"])
        ratios["startup_to_first_reply"] = round(
            statistics.median(startup["this"]) / statistics.median(startup["reference"]), 2)
    return {
        "schema": SCHEMA,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "load_avg_at_end": _loadavg()},
        "embedder": pools[embedder][0],
        "cheap_embedder": pools.get(CHEAP_EMBEDDER, pools[embedder])[0],
        "quick": config.runs == 1,
        "sizes": sizes,
        "throughput_turns_per_s": {k: v["turns_per_s"] for k, v in throughput.items()},
        "throughput": throughput,
        "throughput_facts": tp_size,
        "consolidation_backlog_after_s": max(
            (v["consolidation_backlog_after_s"] for v in throughput.values()
             if v["consolidation_backlog_after_s"] is not None), default=None),
        "startup_to_first_reply_s": by_size[max(by_size)]["startup_to_first_reply_s"],
        "baseline_json_file": {"sizes": baselines},
        "ingest": {
            "messages_per_s": replay["messages_per_s"] if replay else None,
            "per_message_ms_at": {str(k): v["per_message_ms"]
                                  for k, v in sorted(per_message.items())},
            "per_message_embedder": pools[CHEAP_EMBEDDER][0],
            "replay": replay,
        },
        "startup": {"this_s": startup["this"], "reference_s": startup["reference"]},
        "reference": reference,
        "ratios": ratios,
        "postgres": {**pg_report, "throughput_facts": tp_size},
        "elapsed_s": round(time.perf_counter() - started, 1),
    }


def _pooled(runs: list[dict]) -> dict:
    """The runs of the ``turns`` job merged: :data:`POOLED` percentiles over every run's
    turns, the median of the runs for the rest."""
    samples = [r.pop("samples") for r in runs]
    merged = median_of(runs)
    for key, points in POOLED.items():
        merged[key] = percentiles([v for s in samples for v in s[key]], points)
    merged["measured_turns"] = sum(len(s["overhead_ms"]) for s in samples)
    return merged


async def _start_postgres(config: BenchConfig, url: str | None) -> tuple[PgServer | None, dict]:
    """The server of the PostgreSQL column and the column's report so far: ``source``
    (``pgserver`` or ``DATABASE_URL``), ``version``, ``error`` (why nothing or not everything
    was measured; None), ``sizes`` and ``throughput`` (filled in later)."""
    report = {"source": None, "version": None, "error": None, "sizes": [], "throughput": {}}
    if not (config.pg_sizes or config.pg_workers):
        report["error"] = "not measured: no sizes or worker counts configured"
        return None, report
    try:
        server = await PgServer.start(url)
    except Exception as exc:  # noqa: BLE001 - no server: the column says why, the rest runs
        report["error"] = f"no PostgreSQL server: {type(exc).__name__}: {exc}"[:500]
        _say(f"PostgreSQL column skipped: {report['error']}")
        return None, report
    report.update(source=server.source, version=server.version)
    _say(f"PostgreSQL {server.version} from {server.source}")
    return server, report


def _pg_turns(url: str, root: Path, facts: int, config: BenchConfig, embedder: str) -> dict:
    """The ``turns`` job ``config.runs`` times on the PostgreSQL store of ``url`` (one copy of
    the seeded store: each run adds its ~500 turns, and no maintenance runs), merged as
    :func:`_pooled`, without the keys of :data:`PG_DROPPED`."""
    runs = []
    for run in range(config.runs):
        folder = root / f"pg-run-{facts}"
        folder.mkdir(parents=True, exist_ok=True)
        try:
            runs.append(_worker({
                "task": "turns", "folder": str(folder), "embedder": embedder,
                "database_url": url, "maintenance": False, "users": config.users,
                "warmup": config.warmup, "turns": config.turns,
                "largest_turns": config.largest_turns, "recalls": config.recalls,
                "pool_size": config.pool_size, "seed": run + 1}))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        _say(f"PostgreSQL size {facts} run {run + 1}: overhead p95 "
             f"{runs[-1]['overhead_ms']['p95']} ms (excl. embedding "
             f"{runs[-1]['overhead_ms_excl_embed']['p95']} ms)")
    merged = _pooled(runs)
    for key in PG_DROPPED:
        merged.pop(key, None)
    return {**merged, "runs": len(runs)}


def _ingest_at(root: Path, folder: Path, config: BenchConfig) -> dict:
    """The ingest job on a copy of the seeded ``folder`` (cheapest embedder)."""
    copy = root / "ingest-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)
    try:
        result = _worker({"task": "ingest", "folder": str(copy), "embedder": CHEAP_EMBEDDER,
                          "sessions": config.ingest_sessions,
                          "exchanges": config.ingest_exchanges, "pool_size": config.pool_size})
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    _say(f"ingest into {folder.name}: {result['per_message_ms']} ms per message")
    return result


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def format_markdown(report: dict) -> str:
    """The report as a Markdown table (one row per size), as printed by the command."""
    lines = [
        f"embedder {report['embedder']}, {report['machine']['cpus']} CPUs"
        + (", quick" if report.get("quick") else ", median of runs"),
        "",
        "| facts | overhead p50/p95/p99 ms | excl. embedding p50/p95/p99 ms | embed p50/p95 ms "
        "| largest user excl. embed p95 ms | recall p50/p95 ms | RSS peak MiB "
        "| data MiB per 1k turns (after maint.) | start-up s | JSON-file p95 ms |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    base = {b["facts"]: b for b in report["baseline_json_file"]["sizes"]}
    for s in report["sizes"]:
        o, x, e, r = (s["overhead_ms"], s["overhead_ms_excl_embed"], s["embed_ms"],
                      s["recall_ms"])
        b = base.get(s["facts"], {}).get("overhead_ms", {}).get("p95", "-")
        lines.append(
            f"| {s['facts']:,} | {o['p50']}/{o['p95']}/{o['p99']} | {x['p50']}/{x['p95']}/"
            f"{x['p99']} | {e['p50']}/{e['p95']} | "
            f"{s['overhead_ms_excl_embed_largest_user']['p95']} | {r['p50']}/{r['p95']} | "
            f"{s['rss_peak_mib']} | {s['data_dir_mib_per_1000_turns']} "
            f"({s['data_dir_mib_per_1000_turns_after_maintenance']}) | "
            f"{s['startup_to_first_reply_s']} | {b} |")
    tp = report["throughput_turns_per_s"]
    lines += ["", f"throughput (50 conversations, offline model): {tp.get('default_embedder')} "
              f"turns/s with the default embedder, {tp.get('cheap_embedder')} with "
              f"{report['cheap_embedder']}; backlog drained "
              f"{report['consolidation_backlog_after_s']} s after the load; "
              f"bench took {report['elapsed_s']} s"]
    ingest = report.get("ingest") or {}
    at = ingest.get("per_message_ms_at") or {}
    replay = ingest.get("replay") or {}
    lines.append(
        f"ingest: {ingest.get('messages_per_s')} messages/s replaying "
        f"{replay.get('history', 'no LongMemEval_S haystack')} with the default embedder and "
        f"no embedding cache ({replay.get('messages')} messages in {replay.get('elapsed_s')} s); "
        "per ingested message " + ", ".join(f"{v} ms at {int(k):,} facts" for k, v in at.items())
        + f" ({ingest.get('per_message_embedder')})")
    ref, ratios = report.get("reference") or {}, report.get("ratios") or {}
    if ref.get("revision"):
        if ref.get("error"):
            lines.append(f"reference {ref['revision']}: unavailable ({ref['error']})")
        else:
            lines.append(
                f"against {ref['revision']} in the same run: throughput with the default "
                f"embedder {(ref.get('throughput') or {}).get('turns_per_s')} turns/s then, "
                f"ratio {ratios.get('throughput_default_embedder')}; start-up to first reply "
                f"{report['startup']['this_s']} s now, {report['startup']['reference_s']} s "
                f"then, ratio {ratios.get('startup_to_first_reply')}")
    return "\n".join(lines + _pg_markdown(report.get("postgres") or {}))


def _pg_markdown(pg: dict) -> list[str]:
    """The PostgreSQL column: per-turn overhead per size, throughput per worker count."""
    lines = ["", f"PostgreSQL {pg.get('version')} ({pg.get('source')})"
             + (f": {pg['error']}" if pg.get("error") else "")]
    if pg.get("sizes"):
        lines += ["", "| facts | overhead p50/p95/p99 ms | excl. embedding p50/p95/p99 ms "
                  "| largest user excl. embed p95 ms | recall p50/p95 ms | RSS peak MiB "
                  "| start-up s |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for s in pg["sizes"]:
            o, x, r = s["overhead_ms"], s["overhead_ms_excl_embed"], s["recall_ms"]
            lines.append(
                f"| {s['facts']:,} | {o['p50']}/{o['p95']}/{o['p99']} | {x['p50']}/{x['p95']}/"
                f"{x['p99']} | {s['overhead_ms_excl_embed_largest_user']['p95']} | "
                f"{r['p50']}/{r['p95']} | {s['rss_peak_mib']} | {s['startup_to_first_reply_s']} |")
    if pg.get("throughput"):
        lines += ["", f"| embedder | workers | turns/s | worker CPU s/turn "
                  f"| PostgreSQL CPU s/turn | backlog s | ({pg.get('throughput_facts'):,} facts)",
                  "| --- | --- | --- | --- | --- | --- |"]
        for label, results in pg["throughput"].items():
            for t in results:
                lines.append(f"| {label} | {t['workers']} | {t['turns_per_s']} | "
                             f"{t['worker_cpu_s_per_turn']} | {t['server_cpu_s_per_turn']} | "
                             f"{t['consolidation_backlog_after_s']} |")
    return lines
