"""Ingest measurements: replaying recorded conversations into the pipeline (as an import or an
evaluation does), run as jobs of :mod:`bot.bench.worker` in a fresh process each.

- :func:`replay_lme`: one LongMemEval_S haystack (the first record of the file, ~500 messages in
  ~50 sessions) replayed into an empty data folder through the evaluation's target
  (``bot.evaluation.pipeline.EngineTarget``: engine ingest, recorded replies, each session
  closed and consolidated), with the embedder as the product builds it: no embedding cache, so
  every text is embedded ("cold cache"). Messages per second of the whole replay.
- :func:`ingest_at`: the cost per ingested message on a store that already holds many: a copy
  of a seeded folder (1,000, 10,000 or 100,000 facts and as many rounds), into which a new
  user's private thread takes ``sessions`` sessions of ``exchanges`` recorded exchanges from the
  text pool (user message and reply, the session closed after each run). The first session is
  a warm-up; milliseconds per message of the rest.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bot.bench.stats import peak_rss_mib


def _settings(folder: Path, embedder: str):
    from bot.settings import load_settings

    env = {"MEMORY_BOT_DATA_DIR": str(folder), "EMBEDDER": embedder, "LLM_PROVIDER": "offline"}
    return load_settings(env, env_file=None)


async def replay_lme(job: dict) -> dict:
    """The ``replay`` job: ``{"path", "folder", "embedder", "record"}`` (see the module
    docstring). Returns messages, sessions, seconds, ``messages_per_s`` and peak memory."""
    from adapters.embedders import make_embedder
    from bot.evaluation.longmemeval import load_longmemeval
    from bot.evaluation.pipeline import EngineTarget
    from bot.evaluation.runner import replay_history
    from memory.types import ChatKind

    _, histories, _ = load_longmemeval([Path(job["path"])])
    history = histories[job.get("record", 0)]
    embedder = make_embedder(job["embedder"])
    target = await EngineTarget.create(Path(job["folder"]), settings=_settings(
        Path(job["folder"]), job["embedder"]), embedder=embedder, chat_kind=ChatKind.PRIVATE)
    messages = len(history.messages)
    try:
        started = time.perf_counter()
        await replay_history(target, history)
        elapsed = time.perf_counter() - started
    finally:
        await target.aclose()
        close = getattr(embedder, "close", None)
        if close is not None:
            close()
    return {"history": history.history_id, "messages": messages,
            "sessions": len(history.sessions), "elapsed_s": round(elapsed, 2),
            "messages_per_s": round(messages / elapsed, 2), "rss_peak_mib": round(peak_rss_mib(), 1)}


async def ingest_at(job: dict) -> dict:
    """The ``ingest`` job: ``{"folder", "embedder", "sessions", "exchanges", "pool_size"}``
    (see the module docstring). Returns ``per_message_ms`` (after the warm-up session),
    messages and seconds."""
    from adapters.embedders import make_embedder
    from bot.bench.pool import generate_texts
    from bot.evaluation.pipeline import EngineTarget
    from memory.types import ChatKind

    _, exchanges, _ = generate_texts(job.get("pool_size", 2000))
    embedder = make_embedder(job["embedder"])
    folder = Path(job["folder"])
    target = await EngineTarget.create(folder, settings=_settings(folder, job["embedder"]),
                                       embedder=embedder, chat_kind=ChatKind.PRIVATE)
    at = datetime.now(timezone.utc) - timedelta(days=1)
    n = 0
    timed = 0.0
    counted = 0
    try:
        for session in range(job["sessions"]):
            started = time.perf_counter()
            sent = 0
            for _ in range(job["exchanges"]):
                user, _, reply = exchanges[n % len(exchanges)].partition("\n")
                n += 1
                at += timedelta(seconds=30)
                await target.ingest(conversation_id="ingest", speaker="Newcomer",
                                    text=f"{user.removeprefix('User: ')} ({n})", sent_at=at,
                                    message_id=f"m{n}u")
                at += timedelta(seconds=30)
                await target.ingest_reply(conversation_id="ingest", user="Newcomer",
                                          text=reply.removeprefix("Assistant: "), sent_at=at,
                                          message_id=f"m{n}a")
                sent += 2
            at += timedelta(minutes=5)
            await target.close_session(conversation_id="ingest", at=at)
            if session > 0:  # the first session warms the process up
                timed += time.perf_counter() - started
                counted += sent
        wait = getattr(target.app.index, "wait_for_fold", None)
        if wait is not None:
            started = time.perf_counter()
            await wait()  # a background fold the writes started belongs to their cost
            timed += time.perf_counter() - started
    finally:
        await target.aclose()
    return {"messages": counted, "elapsed_s": round(timed, 2),
            "per_message_ms": round(timed / counted * 1000, 2) if counted else None}
