"""What the process-local caches are worth per turn, and what a turn costs on PostgreSQL, where
they are off (docs/benchmarks.md, "Process-local caches and PostgreSQL").

``python -m bot.bench.turn_caches [--users 20] [--facts 10] [--questions 15] [--url URL]``

Three configurations of the whole bot (:func:`bot.app.build_app`, the offline model, the
hashing embedder so that no model time hides the storage path):

* ``sqlite+lancedb``: the default, with the hot working-memory cache of the SQLite store
  (``memory/stores/sqlite/hot.py``) and the scope vectors of the LanceDB index
  (``memory/stores/scope_cache.py``);
* ``sqlite+lancedb, caches off``: the same with both caches disabled (no thread kept, no
  scope vectors kept), the price of running without them;
* ``postgresql``: ``DATABASE_URL`` set: store, index and locks in PostgreSQL, which keeps no
  process-local cache (several processes write the same threads).

Each user of a private chat first states ``--facts`` facts ("Remember that my ... is ..."),
then asks ``--questions`` questions, users taking turns. Per configuration it prints the wall
time per question turn (``engine.handle``, recall and both stores' writes included), p50 and
p95 in milliseconds, and the bot process's CPU seconds per question turn (PostgreSQL's own
server processes are not counted). Without ``--url`` a server is started with pgserver (a
development dependency) in a temporary folder; with it, a scratch schema is used and dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from adapters.embedders import HashingEmbedder
from bot.app import build_app
from bot.settings import Settings
from memory.types import ChatKind, IncomingMessage, ThreadKey

ATTRIBUTES = ("favourite colour", "dentist", "home town", "employer", "bike", "gym", "cat",
              "landlord", "tea", "car", "bank", "street", "doctor", "team", "language")
VALUES = ("Graz", "Kaya", "blue", "Acme", "Vodafone", "Luna", "Bruno", "green", "Linz", "Opel")


def _message(user: int, text: str, n: int) -> IncomingMessage:
    return IncomingMessage(ThreadKey("console", f"user{user}"), ChatKind.PRIVATE, f"user{user}",
                           f"User {user}", text, datetime.now(timezone.utc),
                           platform_message_id=str(n))


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 \
        else values[0]


async def _measure(settings: Settings, folder: Path, *, caches: bool, users: int, facts: int,
                   questions: int) -> dict:
    app = await build_app(settings, data_dir=folder, embedder=HashingEmbedder())
    try:
        if not caches:  # both caches of the embedded backends off
            app.store.hot.max_threads = 0
            app.index.scope_vectors = None
        n = 0
        for f in range(facts):
            for u in range(users):
                n += 1
                attribute = ATTRIBUTES[f % len(ATTRIBUTES)]
                await app.engine.handle(_message(
                    u, f"Remember that my {attribute} is {VALUES[(u + f) % len(VALUES)]}", n))
        await app.memory.drain()
        walls: list[float] = []
        cpu = time.process_time()
        for q in range(questions):
            for u in range(users):
                n += 1
                attribute = ATTRIBUTES[(q * 7 + u) % min(facts, len(ATTRIBUTES))]
                start = time.perf_counter()
                await app.engine.handle(_message(u, f"What is my {attribute}?", n))
                walls.append((time.perf_counter() - start) * 1000)
        cpu = time.process_time() - cpu
        await app.memory.drain()
        return {"turns": len(walls), "p50_ms": _p(walls, 50), "p95_ms": _p(walls, 95),
                "cpu_s_per_turn": cpu / len(walls)}
    finally:
        await app.aclose()


async def run(users: int, facts: int, questions: int, url: str | None) -> list[tuple[str, dict]]:
    """Measure the three configurations; returns ``(name, numbers)`` pairs."""
    results = []
    with tempfile.TemporaryDirectory(prefix="turn-caches-") as tmp:
        base = Path(tmp)
        sizes = dict(users=users, facts=facts, questions=questions)
        plain = Settings(data_dir=base / "data", embedder="hashing")
        results.append(("sqlite+lancedb", await _measure(
            plain, base / "on", caches=True, **sizes)))
        results.append(("sqlite+lancedb, caches off", await _measure(
            plain, base / "off", caches=False, **sizes)))
        server = None
        if url is None:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import pgserver
            server = pgserver.get_server(base / "pgdata", cleanup_mode="delete")
            server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
            url = server.get_uri()
        try:
            pg = Settings(data_dir=base / "data", embedder="hashing", database_url=url)
            results.append(("postgresql", await _measure(  # a work folder: scratch schemas
                pg, base / "pg", caches=True, **sizes)))
        finally:
            if server is not None:
                server.cleanup()
    return results


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run, print one line per configuration."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--facts", type=int, default=10, help="facts stated per user")
    parser.add_argument("--questions", type=int, default=15, help="questions per user")
    parser.add_argument("--url", help="a PostgreSQL database (default: a temporary server "
                                      "started with pgserver)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    report = asyncio.run(run(args.users, args.facts, args.questions, args.url))
    print(f"{'configuration':<28} {'turns':>6} {'p50 ms':>8} {'p95 ms':>8} {'CPU s/turn':>11}")
    for name, r in report:
        print(f"{name:<28} {r['turns']:>6} {r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f} "
              f"{r['cpu_s_per_turn']:>11.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
