"""One benchmark measurement in a fresh process (``python -m bot.bench.worker JOB_JSON``).

A fresh process per measurement gives honest start-up times and peak resident memory (the
``VmHWM`` of this process, which serves one seeded data folder). The job is a JSON object;
the result is printed as one JSON line on standard output.

Jobs (``"database_url"`` in a job puts the store, index and locks in that PostgreSQL schema;
the folder then only holds what a worker keeps locally):
- ``{"task": "turns", ...}``: start the app on the folder (start-up to first reply), then
  per-turn memory overhead through ``ConversationEngine.handle`` with a timed offline model
  (its time is subtracted, so no model call is counted) and a timed embedder (reported beside
  it and subtracted for ``overhead_ms_excl_embed``), for random users and for the largest user;
  recall alone; data folder size before and after the turns and after maintenance
  (``"maintenance": false``: none, when later runs share the store).
- ``{"task": "throughput", ...}``: 50 concurrent conversations through the whole engine with
  the offline model and a short idle timeout, so sessions close and consolidate in the
  background meanwhile; turns per second, then seconds until the consolidation backlog drains;
  a share of the conversations when several processes share one PostgreSQL
  (:func:`run_throughput`).
- ``{"task": "startup", ...}``: start the app on the folder and answer one message: seconds
  from launching this process to the reply.
- ``{"task": "seed", ...}``: seed a folder (:func:`bot.bench.seed.seed`, pool from the cache);
  run under another checkout's code it makes a folder that code opens as its own.
- ``{"task": "replay", ...}`` and ``{"task": "ingest", ...}``: :mod:`bot.bench.ingest`.

Jobs use only the product's front doors (``build_app``, ``ConversationEngine.handle``, the
stores' reads), so the same jobs also measure an earlier checkout of the code
(:mod:`bot.bench.reference`).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from bot.bench.stats import dir_mib, peak_rss_mib, percentiles


def job_env(code: Path | None = None) -> dict[str, str]:
    """The environment a job process runs in: this one's, without onnxruntime's telemetry,
    OpenMP waiting passively (unless chosen), and with ``code`` (another checkout,
    :mod:`bot.bench.reference`) first on ``PYTHONPATH`` when given."""
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    env.setdefault("OMP_WAIT_POLICY", "passive")
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [env.get("PYTHONPATH")])])
    return env


class TimedEmbedder:
    """Wraps an embedder and adds up the seconds spent embedding (``spent``)."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.calibration = inner.calibration
        self.spent = 0.0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    async def embed_documents(self, texts):
        started = time.perf_counter()
        try:
            return await self._inner.embed_documents(texts)
        finally:
            self.spent += time.perf_counter() - started

    async def embed_query(self, text):
        started = time.perf_counter()
        try:
            return await self._inner.embed_query(text)
        finally:
            self.spent += time.perf_counter() - started


class TimedModel:
    """Wraps the offline chat model and adds up the seconds spent in it (``spent``)."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.name = inner.name
        self.spent = 0.0

    async def complete(self, **kw):
        started = time.perf_counter()
        try:
            return await self._inner.complete(**kw)
        finally:
            self.spent += time.perf_counter() - started


def _message(user: int, text: str):
    from bot.bench.seed import PLATFORM, user_key
    from memory.types import ChatKind, IncomingMessage, ThreadKey

    return IncomingMessage(thread=ThreadKey(PLATFORM, user_key(user)), chat_kind=ChatKind.PRIVATE,
                           platform_user_id=user_key(user), display_name=f"User {user}",
                           text=text, sent_at=datetime.now(timezone.utc))


async def _build(job: dict, *, idle_timeout: float | None = None):
    from adapters.embedders import make_embedder
    from adapters.models import OfflineChatModel
    from bot.app import build_app
    from bot.settings import load_settings

    env = {"MEMORY_BOT_DATA_DIR": job["folder"], "EMBEDDER": job["embedder"],
           "LLM_PROVIDER": "offline"}
    if job.get("database_url"):  # the store, index and locks in that PostgreSQL schema
        env["DATABASE_URL"] = job["database_url"]
    if idle_timeout is not None:
        env["IDLE_TIMEOUT_SECONDS"] = str(idle_timeout)
    settings = load_settings(env, env_file=None)
    embedder = TimedEmbedder(make_embedder(job["embedder"]))
    model = TimedModel(OfflineChatModel())
    app = await build_app(settings, embedder=embedder, model=model)
    return app, embedder, model


async def _timed_turn(app, embedder, model, msg) -> tuple[float, float]:
    e0, m0 = embedder.spent, model.spent
    started = time.perf_counter()
    await app.engine.handle(msg)
    total = time.perf_counter() - started - (model.spent - m0)
    return total * 1000, (embedder.spent - e0) * 1000


async def run_turns(job: dict) -> dict:
    """The ``turns`` job (see the module docstring)."""
    from bot.bench.pool import generate_texts

    rng = random.Random(job.get("seed", 7))
    _, _, questions = generate_texts(job.get("pool_size", 2000))
    users = job["users"]
    app, embedder, model = await _build(job)
    try:
        await app.start()
        await app.engine.handle(_message(1, "hello"))
        startup_s = time.time() - job["t0"]
        before_mib = dir_mib(Path(job["folder"]))
        for _ in range(job["warmup"]):
            await app.engine.handle(_message(rng.randint(1, users), rng.choice(questions)))
        overhead, embed = [], []
        for _ in range(job["turns"]):
            total, emb = await _timed_turn(app, embedder, model,
                                           _message(rng.randint(1, users), rng.choice(questions)))
            overhead.append(total)
            embed.append(emb)
        largest, largest_embed = [], []
        for _ in range(job["largest_turns"]):
            total, emb = await _timed_turn(app, embedder, model, _message(1, rng.choice(questions)))
            largest.append(total)
            largest_embed.append(emb)
        recall = []
        for _ in range(job["recalls"]):
            user = 1 if rng.random() < 0.2 else rng.randint(1, users)
            ctx = await app.memory.context(_message(user, "x"))
            e0 = embedder.spent
            started = time.perf_counter()
            await app.memory.recall(ctx, rng.choice(questions), touch=False)
            recall.append((time.perf_counter() - started - (embedder.spent - e0)) * 1000)
        index = app.index
        if hasattr(index, "wait_for_fold"):
            await index.wait_for_fold()
        turns_done = job["warmup"] + job["turns"] + job["largest_turns"] + 1
        after_mib = dir_mib(Path(job["folder"]))
        maintenance_started = time.perf_counter()
        if job.get("maintenance", True):  # off: later runs share the store (PostgreSQL)
            await app.memory.run_maintenance(expire_days=0, retention_days=0)
        maintenance_s = time.perf_counter() - maintenance_started
        maintained_mib = dir_mib(Path(job["folder"]))
        folds = getattr(index, "folds", None)
    finally:
        await app.aclose()
    per_k = 1000 / turns_done
    return {
        "startup_to_first_reply_s": round(startup_s, 3),
        "overhead_ms": percentiles(overhead),
        "overhead_ms_excl_embed": percentiles([o - e for o, e in zip(overhead, embed)]),
        "embed_ms": percentiles(embed, (50, 95)),
        "overhead_ms_largest_user": percentiles(largest),
        "overhead_ms_excl_embed_largest_user": percentiles(
            [o - e for o, e in zip(largest, largest_embed)]),
        "recall_ms": percentiles(recall, (50, 95)),
        "rss_peak_mib": round(peak_rss_mib(), 1),
        "data_dir_mib": round(after_mib, 2),
        "data_dir_mib_after_maintenance": round(maintained_mib, 2),
        "data_dir_mib_per_1000_turns": round((after_mib - before_mib) * per_k, 3),
        "data_dir_mib_per_1000_turns_after_maintenance": round(
            (maintained_mib - before_mib) * per_k, 3),
        "maintenance_s": round(maintenance_s, 2),
        "index_folds": folds,
        "measured_turns": len(overhead),
        "samples": {"overhead_ms": overhead,
                    "overhead_ms_excl_embed": [o - e for o, e in zip(overhead, embed)],
                    "embed_ms": embed, "overhead_ms_largest_user": largest,
                    "overhead_ms_excl_embed_largest_user": [
                        o - e for o, e in zip(largest, largest_embed)],
                    "recall_ms": recall},
    }


#: Sent before the throughput clock starts: the first Chinese text loads jieba's dictionary
#: (~1 s of CPU) and the first date phrase dateparser's tables, once per process.
WARM_UP_TEXTS = ("我下周五去上海开会", "We met last Friday and again today.")


def _handshake(line: dict) -> None:
    """Print ``line`` (one JSON line) and wait until the bench writes a line to standard input
    or closes it (several processes sharing one PostgreSQL start their load together)."""
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    sys.stdin.readline()


async def run_throughput(job: dict) -> dict:
    """The ``throughput`` job (see the module docstring). With ``"share": [k, n]`` this
    process runs conversations ``k, k + n, ...`` of the ``conversations`` (the others run in
    ``n - 1`` other processes on the same PostgreSQL); with ``"handshake": true`` it prints
    ``{"ready": true}`` and waits for a line on standard input before the load, and after the
    drain prints its result and waits again before closing (its connections, and their server
    processes' CPU seconds, stay until the bench has read them). ``started_at`` and
    ``ended_at`` are the load's UTC epoch seconds."""
    from bot.bench.pool import generate_texts

    _, _, questions = generate_texts(job.get("pool_size", 2000))
    app, _, _ = await _build(job, idle_timeout=1.0)
    conversations, per_conversation = job["conversations"], job["turns_per_conversation"]
    first, stride = job.get("share", (0, 1))
    users = job["users"]
    try:
        await app.start()
        await app.engine.handle(_message(1 + first, "hello"))
        for text in WARM_UP_TEXTS:  # steady state: one-time loading is not counted as load
            await app.engine.handle(_message(2 + first, text))
        if job.get("handshake"):
            await asyncio.to_thread(_handshake, {"ready": True})

        async def converse(worker: int) -> int:
            rng = random.Random(worker)
            mine = [1 + (worker + k * conversations) % users for k in range(4)]
            done = 0
            for step in range(per_conversation):
                user = mine[(step // 5) % len(mine)]  # 5 turns, then another thread: idle ones close
                await app.engine.handle(_message(user, rng.choice(questions)))
                done += 1
            return done

        started, started_at = time.perf_counter(), time.time()
        turns = sum(await asyncio.gather(*(converse(w) for w in
                                           range(first, conversations, stride))))
        elapsed, ended_at = time.perf_counter() - started, time.time()
        load_end = time.perf_counter()
        drained = None
        while time.perf_counter() - load_end < job.get("drain_timeout_s", 120):
            # a reference checkout's store may serve every port itself
            store = app.store
            open_ = await getattr(store, "conversations", store).open_sessions()
            pending = await getattr(store, "work", store).pending_work()
            if not open_ and not pending:
                drained = time.perf_counter() - load_end
                break
            await asyncio.sleep(0.1)
        result = {"turns": turns, "elapsed_s": round(elapsed, 3),
                  "turns_per_s": round(turns / elapsed, 1),
                  "consolidation_backlog_after_s": None if drained is None else round(drained, 2),
                  "rss_peak_mib": round(peak_rss_mib(), 1), "started_at": started_at,
                  "ended_at": ended_at}
        if job.get("handshake"):
            await asyncio.to_thread(_handshake, result)
    finally:
        await app.aclose()
    return result


async def run_startup(job: dict) -> dict:
    """The ``startup`` job (see the module docstring)."""
    app, _, _ = await _build(job)
    try:
        await app.start()
        await app.engine.handle(_message(1, "hello"))
        startup_s = time.time() - job["t0"]
    finally:
        await app.aclose()
    import memory

    return {"startup_to_first_reply_s": round(startup_s, 3), "rss_peak_mib": round(peak_rss_mib(), 1),
            "code": str(Path(memory.__file__).resolve().parents[1])}


async def run_seed(job: dict) -> dict:
    """The ``seed`` job: ``{"folder", "facts", "users", "pool_size", "embedder", "cache_dir"}``."""
    from adapters.embedders import make_embedder
    from bot.bench.pool import load_pool
    from bot.bench.seed import SeedPlan, seed

    emb = make_embedder(job["embedder"])
    pool = await load_pool(emb, size=job["pool_size"], cache_dir=Path(job["cache_dir"]))
    return await seed(Path(job["folder"]), SeedPlan(facts=job["facts"], users=job["users"]),
                      {job["embedder"]: (emb.name, emb.dim, pool)})


async def run_replay(job: dict) -> dict:
    """The ``replay`` job (:func:`bot.bench.ingest.replay_lme`)."""
    from bot.bench.ingest import replay_lme

    return await replay_lme(job)


async def run_ingest(job: dict) -> dict:
    """The ``ingest`` job (:func:`bot.bench.ingest.ingest_at`)."""
    from bot.bench.ingest import ingest_at

    return await ingest_at(job)


def main(argv: list[str] | None = None) -> int:
    """Run the job given as JSON in ``argv[0]``; print the result as one JSON line."""
    import logging

    from bot.memtune import tune_allocator

    tune_allocator()  # as the product does (bot/cli.py), before native threads start
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    job = json.loads((argv or sys.argv[1:])[0])
    runner = {"turns": run_turns, "throughput": run_throughput, "startup": run_startup,
              "seed": run_seed, "replay": run_replay, "ingest": run_ingest}[job["task"]]
    result = asyncio.run(runner(job))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown of native threads (the result is out)


if __name__ == "__main__":
    main()
