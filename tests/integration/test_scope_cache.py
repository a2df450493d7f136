"""The in-process scope vectors (memory/stores/scope_cache.py): the dense half of a search on
cached rows gives LanceDB's own answer, and no write or delete is ever served stale."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

import numpy as np
import pytest

from adapters.embedders import HashingEmbedder
from memory.ports import ScopeFilter
from memory.stores.lancedb import LanceIndex
from memory.stores.scope_cache import SCOPE_SHARE, ScopeRows, ScopeVectors
from memory.text import search_text
from memory.types import IndexItem, ItemKind

T = datetime(2026, 1, 1, tzinfo=timezone.utc)
EMB = HashingEmbedder()
TEXTS = ["likes green tea in the morning", "has a dog called Rex", "plays the piano on Sundays",
         "works at Siemens in Graz", "allergic to peanuts", "我住在上海，喜欢跑步",
         "we talked about the trip to Tallinn", "the exam is on Friday", "prefers short answers",
         "is learning Rust and Python"]


async def make_items(scope="user:1"):
    vectors = await EMB.embed_documents(TEXTS)
    out = []
    for i, (text, v) in enumerate(zip(TEXTS, vectors), 1):
        kind = [ItemKind.FACT, ItemKind.ROUND, ItemKind.EPISODE][i % 3]
        owner = ("1" if i % 2 else "2") if kind is ItemKind.FACT else ""
        status = "superseded" if i == 4 else "active"
        out.append(IndexItem(key=f"{kind.value}:{i}", kind=kind, item_id=i, owner=owner,
                             scope=scope, status=status, text=text, search_text=search_text(text),
                             vector=v, created_at=T))
    return out


async def dense(index, query, where, limit=10):
    """The dense hits as (key, cosine), best first; rows tied at cosine 0 (unrelated under
    the hashing embedder) may come in any order, so only their number is kept."""
    hits = await index.search(vector=await EMB.embed_query(query), text="", where=where,
                              limit=limit)
    ranked = sorted(((h.key, round(h.cosine, 4)) for h in hits), key=lambda x: (-x[1], x[0]))
    return [x for x in ranked if x[1] != 0] + [("unrelated", sum(1 for x in ranked if x[1] == 0))]


@pytest.fixture
async def pair(tmp_path):
    cached = await LanceIndex.open(tmp_path / "a", embedder_name=EMB.name, dim=EMB.dim)
    plain = await LanceIndex.open(tmp_path / "b", embedder_name=EMB.name, dim=EMB.dim,
                                  scope_cache_bytes=0)
    for idx in (cached, plain):
        await idx.upsert(await make_items())
    yield cached, plain
    await cached.close()
    await plain.close()


@pytest.mark.parametrize("where", [
    ScopeFilter("user:1", "1"), ScopeFilter("user:1", "2"),
    ScopeFilter("user:1", "1", include_history=True), ScopeFilter("user:9", "9")])
@pytest.mark.parametrize("limit", [3, 10])
async def test_cached_dense_search_equals_lancedbs(pair, where, limit):
    cached, plain = pair
    for query in ("green tea", "where does the user work", "跑步", "piano"):
        first = await dense(cached, query, where, limit)  # fills the cache
        again = await dense(cached, query, where, limit)  # served from it
        assert first == again == await dense(plain, query, where, limit)
    if where.scope == "user:1":
        assert cached.scope_vectors.hits > 0


async def test_upsert_and_delete_are_never_served_stale(pair):
    cached, plain = pair
    where = ScopeFilter("user:1", "1")
    await dense(cached, "tea", where)  # seen once: LanceDB's search
    assert cached.scope_vectors.get("user:1") is None
    await dense(cached, "tea", where)  # seen twice: cached now
    assert cached.scope_vectors.get("user:1") is not None
    old = (await make_items())[0]
    vec = (await EMB.embed_documents(["drinks only black coffee"]))[0]
    new = IndexItem(key="fact:99", kind=ItemKind.FACT, item_id=99, owner="1", scope="user:1",
                    status="active", text="drinks only black coffee",
                    search_text=search_text("drinks only black coffee"), vector=vec, created_at=T)
    for idx in (cached, plain):
        await idx.upsert([new])
    assert ("fact:99" in {k for k, _ in await dense(cached, "black coffee", where)})
    assert await dense(cached, "black coffee", where) == await dense(plain, "black coffee", where)
    superseded = IndexItem(**{**{f: getattr(new, f) for f in new.__dataclass_fields__},
                              "status": "superseded"})
    for idx in (cached, plain):
        await idx.upsert([superseded])  # a status change through an upsert
    assert "fact:99" not in {k for k, _ in await dense(cached, "black coffee", where)}
    history = ScopeFilter("user:1", "1", include_history=True)
    assert "fact:99" in {k for k, _ in await dense(cached, "black coffee", history)}
    for idx in (cached, plain):
        await idx.delete(["fact:99", old.key])
    after = await dense(cached, "black coffee", where)
    assert "fact:99" not in {k for k, _ in after} and old.key not in {k for k, _ in after}
    assert after == await dense(plain, "black coffee", where)


async def test_a_fill_read_before_a_write_is_not_kept(pair):
    cached, _ = pair
    cache = cached.scope_vectors
    ticket = cache.ticket("user:1")
    rows = ScopeRows.from_columns(["fact"], [1], ["1"], ["active"],
                                  np.ones((1, EMB.dim), np.float32))
    cache.written({"user:1"})  # a commit lands while the fill was being read
    assert not cache.put("user:1", rows, ticket) and cache.get("user:1") is None
    ticket = cache.ticket("user:1")
    cache.deleted()  # any delete outdates every fill in flight
    assert not cache.put("user:1", rows, ticket)
    assert cache.put("user:1", rows, cache.ticket("user:1"))


async def test_concurrent_searches_and_writes_end_consistent(pair):
    cached, plain = pair
    where = ScopeFilter("user:1", "1")
    vectors = await EMB.embed_documents([f"note number {n} about tea" for n in range(12)])
    writes = [IndexItem(key=f"fact:{100 + n}", kind=ItemKind.FACT, item_id=100 + n, owner="1",
                        scope="user:1", status="active", text=f"note number {n} about tea",
                        search_text=search_text(f"note number {n} about tea"), vector=v,
                        created_at=T) for n, v in enumerate(vectors)]

    async def writer():
        for item in writes:
            await cached.upsert([item])
            await plain.upsert([item])

    async def reader():
        for _ in range(12):
            await dense(cached, "tea", where, limit=30)

    await asyncio.gather(writer(), reader(), reader())
    assert await dense(cached, "tea", where, limit=30) == await dense(plain, "tea", where,
                                                                        limit=30)


def test_budget_keeps_recent_scopes_and_refuses_a_scope_too_large():
    def rows(n):
        return ScopeRows.from_columns(["round"] * n, list(range(n)), [""] * n, ["active"] * n,
                                      np.ones((n, 64), np.float32))

    per_row = rows(10).nbytes // 10
    cache = ScopeVectors(max_bytes=SCOPE_SHARE * 4 * per_row)  # 4 rows a scope, 8 scopes of 4
    assert not cache.put("big", rows(5), cache.ticket("big")) and cache.too_big("big")
    for n in range(SCOPE_SHARE + 1):
        assert cache.put(f"s{n}", rows(4), cache.ticket(f"s{n}"))
        if n == 3:
            assert cache.get("s0") is not None  # used: the most recent now
    assert cache.get("s1") is None and cache.get("s0") is not None  # least recent went first
    assert cache.nbytes <= cache.max_bytes


async def test_a_scope_over_its_share_stays_with_lancedb(tmp_path):
    small = await LanceIndex.open(tmp_path / "s", embedder_name=EMB.name, dim=EMB.dim,
                                  scope_cache_bytes=2 * 6 * (EMB.dim * 4 + 32))  # 6 rows a scope
    plain = await LanceIndex.open(tmp_path / "p", embedder_name=EMB.name, dim=EMB.dim,
                                  scope_cache_bytes=0)
    try:
        for idx in (small, plain):
            await idx.upsert(await make_items())  # 10 rows in user:1
        where = ScopeFilter("user:1", "1")
        for _ in range(2):
            assert await dense(small, "green tea", where) == await dense(plain, "green tea", where)
        assert small.scope_vectors.too_big("user:1") and small.scope_vectors.nbytes == 0
    finally:
        await small.close()
        await plain.close()


async def test_a_scope_is_kept_from_its_second_search_and_refilled_after_a_write(pair):
    cached, _ = pair
    cache, where = cached.scope_vectors, ScopeFilter("user:1", "1")
    await dense(cached, "tea", where)
    assert cache.get("user:1") is None  # one search: not read into memory
    await dense(cached, "tea", where)
    assert cache.get("user:1") is not None
    await cached.upsert((await make_items())[:1])  # a write drops it ...
    assert cache.get("user:1") is None
    await dense(cached, "tea", where)  # ... and the next search reads it back at once
    assert cache.get("user:1") is not None
