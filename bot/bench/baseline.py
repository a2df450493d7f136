"""The comparison design: one JSON file per user, read and rewritten on every turn.

What many small bots do: a user's facts and past exchanges (with their vectors) live in
``<user>.json``; every turn loads the file, scores every item against the query vector
(cosine) and the query's words, keeps the best five, appends the turn and writes the whole
file back. Measured with the same users, counts and query vectors as the real stores; the
query embedding is left out on both sides (compare with ``overhead_ms_excl_embed``). Only the
files of the users a run touches are written (the time of a turn depends on that user's file
alone).
"""

from __future__ import annotations

import json
import os
import random
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bot.bench.pool import TextPool
from bot.bench.seed import SeedPlan, skewed_counts
from bot.bench.stats import percentiles


def _write(path: Path, doc: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False))
    os.replace(tmp, path)


def _turn(path: Path, query: str, query_vector: np.ndarray) -> None:
    doc = json.loads(path.read_text())
    items = doc["facts"] + doc["rounds"]
    if items:
        matrix = np.asarray([i["vector"] for i in items], dtype=np.float32)
        cosine = matrix @ query_vector
        words = set(query.lower().split())
        lexical = np.asarray([len(words & set(i["text"].lower().split())) for i in items])
        score = cosine + 0.1 * lexical
        _ = [items[j]["text"] for j in np.argsort(-score)[:5]]
    now = datetime.now(timezone.utc).isoformat()
    doc["turns"] += [{"role": "user", "text": query, "at": now},
                     {"role": "assistant", "text": "(reply)", "at": now}]
    _write(path, doc)


def run_baseline(folder: Path, plan: SeedPlan, pool: TextPool, *, turns: int,
                 largest_turns: int, seed: int = 5) -> dict:
    """Measure the JSON-file design at ``plan``'s size in ``folder``.

    Returns:
        ``{"facts", "users", "overhead_ms", "overhead_ms_largest_user", "file_mib_largest_user"}``
        (milliseconds per turn; the largest user's file in MiB).
    """
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    facts = skewed_counts(plan.facts, plan.users, plan.largest_share)
    rounds = skewed_counts(plan.round_count, plan.users, plan.largest_share)
    sample = sorted({1} | {rng.randint(2, plan.users) for _ in range(40)}) if plan.users > 1 else [1]
    offsets_f = np.cumsum([0] + facts)
    offsets_r = np.cumsum([0] + rounds)
    for user in sample:
        doc = {"facts": [], "rounds": [], "turns": []}
        for i in range(facts[user - 1]):
            text, vector, _ = pool.fact(int(offsets_f[user - 1]) + i + 1)
            doc["facts"].append({"text": text, "vector": [round(float(v), 6) for v in vector]})
        for i in range(rounds[user - 1]):
            text, vector, _ = pool.exchange(int(offsets_r[user - 1]) + i + 1)
            doc["rounds"].append({"text": text, "vector": [round(float(v), 6) for v in vector]})
        _write(folder / f"u{user}.json", doc)
    vectors = pool.vectors

    def measure(users: list[int], count: int) -> list[float]:
        out = []
        for _ in range(count):
            user = rng.choice(users)
            query = rng.choice(pool.questions)
            qv = vectors[rng.randrange(len(vectors))]
            started = time.perf_counter()
            _turn(folder / f"u{user}.json", query, qv)
            out.append((time.perf_counter() - started) * 1000)
        return out

    random_users = measure(sample, turns)
    largest = measure([1], largest_turns)
    return {"facts": plan.facts, "users": plan.users,
            "overhead_ms": percentiles(random_users),
            "overhead_ms_largest_user": percentiles(largest),
            "file_mib_largest_user": round((folder / "u1.json").stat().st_size / 1048576, 2)}
