"""Disk growth of a data folder while the bot runs: ``python -m bot.bench.disk``.

Drives the whole engine (``ConversationEngine.handle``, offline model, a hand-driven clock)
with a stream of short private messages from a few users on a fresh data folder: every
``fact_every``-th message states a fact to remember ("remember ..."), every user's session is
closed with ``/new`` after ``session_turns`` of their messages (rounds, episode, index write).
No maintenance runs meanwhile. Every ``every`` messages it records the folder's size and its
compacted size: a copy of the folder with the index compacted (every old version removed) and
the SQLite WAL checkpointed and truncated, as after the daily maintenance or ``memory-bot
reindex``. The result (one JSON object) goes to standard output, one progress line per point
to standard error. See docs/benchmarks.md, "Disk growth".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from bot.bench.stats import dir_mib

_WORDS = ("tea", "bees", "chess", "Lisbon", "the piano", "sourdough", "Rust", "a red bike",
          "my sister Anna", "the garden", "kayaking", "green curry")


def _text(n: int, fact_every: int) -> str:
    word = _WORDS[n % len(_WORDS)]
    if fact_every and n % fact_every == 0:
        return f"remember that I like {word} number {n}"
    return f"what do you think about {word} today, message {n}?"


async def _compacted_mib(folder: Path, embedder_name: str, dim: int, scratch: Path) -> float:
    """Size of ``folder`` once compacted, measured on a copy (the live folder is untouched)."""
    from memory.stores.lancedb import LanceIndex

    copy = scratch / "compacted"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("*.lock", "logs"))
    db = sqlite3.connect(copy / "memory.db")
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    index = await LanceIndex.open(copy / "lancedb", embedder_name=embedder_name, dim=dim)
    try:
        await index.compact()
    finally:
        await index.close()
    size = dir_mib(copy)
    shutil.rmtree(copy, ignore_errors=True)
    return size


async def run_disk(*, messages: int, every: int, users: int, fact_every: int,
                   session_turns: int, embedder: str, work_dir: Path | None = None,
                   progress=sys.stderr) -> dict:
    """Run the disk-growth measurement (see the module docstring).

    Returns:
        ``{"messages", "embedder", "points": [{"messages", "data_mib", "compacted_mib",
        "ratio", "lancedb_mib", "sqlite_mib"}], "max_ratio", "elapsed_s"}`` (MiB of
        1,048,576 bytes; ``ratio`` = data / compacted).
    """
    from adapters.embedders import make_embedder
    from adapters.models import OfflineChatModel
    from bot.app import build_app
    from bot.settings import load_settings
    from memory.ports import ManualClock
    from memory.types import ChatKind, IncomingMessage, ThreadKey

    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="memory-bot-disk-", dir=work_dir))
    folder = root / "data"
    emb = make_embedder(embedder)
    env = {"MEMORY_BOT_DATA_DIR": str(folder), "EMBEDDER": embedder, "LLM_PROVIDER": "offline"}
    clock = ManualClock(datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc))
    app = await build_app(load_settings(env, env_file=None), embedder=emb,
                          model=OfflineChatModel(), clock=clock)
    points = []
    said = [0] * users
    try:
        await app.start()
        for n in range(1, messages + 1):
            user = n % users
            clock.advance(20)
            msg = IncomingMessage(thread=ThreadKey("bench", f"u{user}"),
                                  chat_kind=ChatKind.PRIVATE, platform_user_id=f"u{user}",
                                  display_name=f"User {user}", text=_text(n, fact_every),
                                  sent_at=clock.now())
            await app.engine.handle(msg)
            said[user] += 1
            if said[user] % session_turns == 0:
                await app.engine.handle(IncomingMessage(
                    thread=msg.thread, chat_kind=msg.chat_kind, platform_user_id=msg.platform_user_id,
                    display_name=msg.display_name, text="/new", sent_at=clock.now()))
                await app.memory.drain()
            if n % every == 0 or n == messages:
                await app.memory.drain()
                wait = getattr(app.index, "wait_for_fold", None)
                if wait is not None:
                    await wait()
                data = dir_mib(folder)
                compacted = await _compacted_mib(folder, emb.name, emb.dim, root)
                point = {"messages": n, "data_mib": round(data, 3),
                         "compacted_mib": round(compacted, 3),
                         "ratio": round(data / compacted, 2) if compacted else None,
                         "lancedb_mib": round(dir_mib(folder / "lancedb"), 3),
                         "sqlite_mib": round(sum(p.stat().st_size for p in folder.glob("memory.db*"))
                                             / 1048576, 3)}
                points.append(point)
                if progress is not None:
                    print(f"disk: {json.dumps(point)}", file=progress, flush=True)
    finally:
        await app.aclose()
        shutil.rmtree(root, ignore_errors=True)
    return {"messages": messages, "embedder": emb.name, "users": users,
            "fact_every": fact_every, "session_turns": session_turns, "points": points,
            "max_ratio": max((p["ratio"] or 0) for p in points) if points else None,
            "elapsed_s": round(time.perf_counter() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m bot.bench.disk [--messages N] [--every N] ...``."""
    import logging

    parser = argparse.ArgumentParser(prog="python -m bot.bench.disk",
                                     description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=10000)
    parser.add_argument("--every", type=int, default=500, help="messages between two points")
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--fact-every", type=int, default=10,
                        help="every N-th message asks to remember a fact (0: none)")
    parser.add_argument("--session-turns", type=int, default=10,
                        help="a user's messages before their session is closed with /new")
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    report = asyncio.run(run_disk(messages=args.messages, every=args.every, users=args.users,
                                  fact_every=args.fact_every, session_turns=args.session_turns,
                                  embedder=args.embedder))
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
