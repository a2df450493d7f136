"""The PostgreSQL search index beyond the shared contract: Chinese full-text, scores equal to
LanceDB's on the same rows, statistics kept exact by writes, migrations and errors.

Needs the PostgreSQL server the tests start with pgserver (skipped when it cannot start)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import asyncpg
import numpy as np
import pytest

from adapters.embedders import HashingEmbedder
from memory.errors import StoreError
from memory.ports import ScopeFilter
from memory.stores.lancedb import LanceIndex
from memory.stores.postgres import PgSearchIndex
from memory.stores.postgres.migrations import LATEST, TableNames, migrate
from memory.stores.postgres.terms import B, K1, index_terms
from memory.text import search_text
from memory.types import IndexItem, ItemKind

pytestmark = pytest.mark.postgres

T = datetime(2026, 1, 1, tzinfo=timezone.utc)
EMB = HashingEmbedder()


@pytest.fixture
async def pg(pg_schema):
    url, schema = pg_schema
    index = await PgSearchIndex.open(url, embedder_name=EMB.name, dim=EMB.dim, schema=schema)
    yield index
    await index.close()


async def rows(texts, *, scope="user:1", owner="1", kind=ItemKind.ROUND, start=1):
    vectors = await EMB.embed_documents(texts)
    return [IndexItem(key=f"{kind.value}:{i}", kind=kind, item_id=i, owner=owner, scope=scope,
                      status="active", text=text, search_text=search_text(text), vector=v,
                      created_at=T)
            for i, (text, v) in enumerate(zip(texts, vectors), start=start)]


async def search(index, query, *, scope="user:1", owner="1", limit=10):
    return await index.search(vector=await EMB.embed_query(query), text=search_text(query),
                              where=ScopeFilter(scope=scope, owner=owner), limit=limit)


CHINESE = [
    "我是做量化策略的，主要用 Python，最近在选向量数据库。",
    "我周末喜欢吃夜宵，尤其是烧烤",
    "下个月我要去杭州出差，住在西湖附近",
    "我女儿今年上小学三年级",
]


async def test_chinese_words_inside_longer_text_are_found_by_full_text(pg):
    await pg.upsert(await rows(CHINESE))
    for query, key in [("数据库", "round:1"), ("烧烤", "round:2"), ("去杭州", "round:3"),
                       ("小学", "round:4"), ("我女儿几年级了？", "round:4")]:
        lexical = sorted((h for h in await search(pg, query) if h.bm25), key=lambda h: -h.bm25)
        assert lexical and lexical[0].key == key, query
    # a query sharing no word with any row finds nothing lexically
    assert not [h for h in await search(pg, "天气预报") if h.bm25]


# English (stop words, stems, accents, repeats), Chinese and mixed rows: the same analyser and
# BM25 as LanceDB's full-text index, and the same cosine, must give the same numbers.
CORPUS = [
    "I have been running every morning before work",
    "She runs a small café in Zürich near the lake",
    "The naïve plan was to run the marathon without any training",
    "sushi sushi and more sushi for dinner",
    "We talked about the résumé she sent for the job",
    "My sister has a very old bicycle; she rides it only on Sundays",
    "我周末喜欢跑步，也喜欢吃寿司",
    "Python 向量数据库 benchmark results",
    "what would you do if you could not run",
    "the the the a an of",
] + [f"note {i} about food and running shoes" for i in range(30)]
QUERIES = ["running", "cafe zurich", "naive marathon", "sushi", "resume job", "very only",
           "跑步 寿司", "向量数据库", "could you run", "food shoes note 7", "the a of"]


async def test_scores_equal_lancedb_on_the_same_rows(pg, tmp_path):
    lance = await LanceIndex.open(tmp_path / "lancedb", embedder_name=EMB.name, dim=EMB.dim,
                                  scope_cache_bytes=0)
    try:
        items = await rows(CORPUS)
        other = await rows(["running food sushi elsewhere"] * 5, scope="user:2", owner="2",
                           start=100)  # another scope counts in the whole-table statistics
        for index in (pg, lance):
            await index.upsert(items + other)
        await lance.compact()  # every row in LanceDB's full-text index
        compared = 0
        for query in QUERIES:
            a = {h.key: h for h in await search(pg, query, limit=50)}
            b = {h.key: h for h in await search(lance, query, limit=50)}
            assert {k for k, h in a.items() if h.bm25} == {k for k, h in b.items() if h.bm25}, \
                query
            for key, hit in a.items():
                if key in b:
                    assert hit.cosine == pytest.approx(b[key].cosine, abs=1e-5)
                if hit.bm25:
                    assert hit.bm25 == pytest.approx(b[key].bm25, rel=1e-4), (query, key)
                    compared += 1
        assert compared > 40
    finally:
        await lance.close()


async def test_a_search_pruned_to_the_rarest_terms_equals_the_full_one(pg_schema):
    url, schema = pg_schema
    pruned = await PgSearchIndex.open(url, embedder_name="pruned", dim=EMB.dim, schema=schema,
                                      lexical_budget_postings=1)
    full = await PgSearchIndex.open(url, embedder_name="full", dim=EMB.dim, schema=schema,
                                    lexical_budget_postings=10**9)
    try:
        texts = [f"note {i} about food and the weekly market" for i in range(200)]
        texts += [f"my Brompton bike {i} needs food for the road" for i in range(4)]
        texts += ["the market sells Brompton parts", "matcha at the market"]
        # a row without the rarest term that outscores the rows holding it: the bound must
        # send that search to the full scoring
        texts += ["quinoa"] * 3 + [" ".join(["Brompton"] * 8) + " market"]
        for index in (pruned, full):
            await index.upsert(await rows(texts))
        for query, limit in [("Brompton market food", 3), ("Brompton market food", 10),
                             ("matcha market", 1), ("matcha market", 20), ("food note", 5),
                             ("note note note 7", 4), ("quinoa Brompton market", 3)]:
            a = [(h.key, h.bm25, h.cosine) for h in await search(pruned, query, limit=limit)
                 if h.bm25]
            b = [(h.key, h.bm25, h.cosine) for h in await search(full, query, limit=limit)
                 if h.bm25]
            assert a == b and len(a) == limit, query
        assert pruned.lexical_pruned >= 2 and full.lexical_pruned == 0
    finally:
        await pruned.close()
        await full.close()


async def test_bm25_follows_the_documented_formula(pg):
    texts = ["sushi sushi tuna", "sushi rice rice rice", "green tea", "black coffee", "the of"]
    await pg.upsert(await rows(texts))
    docs = [index_terms(search_text(t)) for t in texts]
    n = sum(1 for d in docs if d)  # "the of" has no terms: not counted in N
    avgdl = sum(map(len, docs)) / n

    def bm25(query, doc):
        total = 0.0
        for term in index_terms(search_text(query)):
            df = sum(term in d for d in docs)
            if df and doc.count(term):
                f = doc.count(term)
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                total += idf * (K1 + 1) * f / (f + K1 * (1 - B + B * len(doc) / avgdl))
        return total

    for query in ["sushi", "sushi rice", "rice rice", "tea coffee"]:
        got = {h.key: h.bm25 for h in await search(pg, query) if h.bm25}
        want = {f"round:{i}": bm25(query, d) for i, d in enumerate(docs, 1) if bm25(query, d)}
        assert got.keys() == want.keys()
        for key in want:
            assert got[key] == pytest.approx(want[key], rel=1e-9)


async def test_replacing_and_deleting_keep_the_statistics_exact(pg, pg_schema):
    await pg.upsert(await rows(["sushi tuna", "sushi rice", "green tea"]))
    await pg.upsert(await rows(["black coffee"], start=2))  # replaces round:2
    await pg.upsert(await rows(["sushi again", "sushi once more"], start=4))
    await pg.delete(["round:5", "round:404"])
    # the same rows written into a fresh index at once score the same
    url, schema = pg_schema
    fresh = await PgSearchIndex.open(url, embedder_name="fresh", dim=EMB.dim, schema=schema)
    try:
        await fresh.upsert(await rows(["sushi tuna"]) + await rows(["black coffee"], start=2)
                           + await rows(["green tea"], start=3)
                           + await rows(["sushi again"], start=4))
        for query in ["sushi", "coffee tea", "rice"]:
            a = {h.key: h.bm25 for h in await search(pg, query) if h.bm25}
            b = {h.key: h.bm25 for h in await search(fresh, query) if h.bm25}
            assert a == pytest.approx(b, rel=1e-12)
        assert await pg.count() == await fresh.count() == 4
        assert await pg.keys() == {"round:1", "round:2", "round:3", "round:4"}
    finally:
        await fresh.close()


async def test_an_upsert_larger_than_one_statement_writes_every_row_once(pg_schema):
    url, schema = pg_schema
    small = await PgSearchIndex.open(url, embedder_name="small-batches", dim=EMB.dim,
                                     schema=schema, write_batch_rows=2)
    whole = await PgSearchIndex.open(url, embedder_name="one-batch", dim=EMB.dim,
                                     schema=schema)
    try:
        texts = [f"green tea number {i} with oolong and matcha and sencha" for i in range(7)]
        for index in (small, whole):
            await index.upsert(await rows(texts))
        assert await small.keys() == await whole.keys() == {f"round:{i}" for i in range(1, 8)}
        a = {h.key: (h.bm25, h.cosine) for h in await search(small, "oolong number 3")}
        b = {h.key: (h.bm25, h.cosine) for h in await search(whole, "oolong number 3")}
        assert a == b and len(a) == 7
    finally:
        await small.close()
        await whole.close()


async def test_reopening_migrates_once_and_a_changed_dimension_is_refused(pg_schema):
    url, schema = pg_schema
    first = await PgSearchIndex.open(url, embedder_name=EMB.name, dim=EMB.dim, schema=schema)
    await first.upsert(await rows(["kept across a reopen"]))
    await first.close()
    again = await PgSearchIndex.open(url, embedder_name=EMB.name, dim=EMB.dim, schema=schema)
    try:
        assert await again.keys() == {"round:1"}
    finally:
        await again.close()
    with pytest.raises(StoreError, match="reindex"):
        await PgSearchIndex.open(url, embedder_name=EMB.name, dim=EMB.dim + 1, schema=schema)


async def test_tables_at_every_earlier_version_migrate_to_the_latest_rows_kept(pg_schema):
    url, schema = pg_schema
    base = "memory_" + EMB.name.replace("-", "_")
    for version in range(1, LATEST):
        old = TableNames(f"{schema}_{version}", base)
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(f'CREATE SCHEMA "{old.schema}"')
            assert await migrate(conn, old, EMB.dim, upto=version) == list(range(1, version + 1))
            await conn.execute(
                f"INSERT INTO {old.rows} VALUES ('round:1', 'round', 1, '', 'user:1', 'active', "
                "'green tea', 'green tea', $1::text::vector, now())",
                "[" + ",".join(["0.0625"] * EMB.dim) + "]")
            await conn.execute(
                f"INSERT INTO {old.postings} VALUES ('user:1', 'green', 'round:1', 'round', '', "
                "'active', 1, 2), ('user:1', 'tea', 'round:1', 'round', '', 'active', 1, 2)")
            await conn.execute(f"UPDATE {old.stats} SET rows_with_terms = 1, length = 2")
            await conn.execute(f"INSERT INTO {old.terms} VALUES ('green', 1), ('tea', 1)")
        finally:
            await conn.close()
        index = await PgSearchIndex.open(url, embedder_name=EMB.name, dim=EMB.dim,
                                         schema=old.schema)
        try:
            assert await index.keys() == {"round:1"}
            hits = await search(index, "green tea")
            assert [h.key for h in hits] == ["round:1"] and hits[0].bm25 > 0
        finally:
            await index.close()
        conn = await asyncpg.connect(url)
        try:
            assert {r["version"] for r in await conn.fetch(
                f"SELECT version FROM {old.migrations}")} == set(range(1, LATEST + 1))
            await conn.execute(f'DROP SCHEMA "{old.schema}" CASCADE')
        finally:
            await conn.close()


async def test_an_unreachable_server_is_a_store_error_without_the_password(tmp_path):
    url = f"postgresql://bot:s3cret-pw@/memory?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StoreError) as caught:
        await PgSearchIndex.open(url, embedder_name=EMB.name, dim=EMB.dim)
    assert "s3cret-pw" not in str(caught.value)



def _near(vector, rng, noise=0.05):
    """A unit vector a little off ``vector``."""
    v = np.asarray(vector) + noise * rng.standard_normal(len(vector)) / math.sqrt(len(vector))
    return (v / np.linalg.norm(v)).tolist()


async def test_a_large_scope_searched_through_its_own_index_sees_only_its_rows(pg_schema):
    url, schema = pg_schema
    index = await PgSearchIndex.open(url, embedder_name=EMB.name, dim=EMB.dim, schema=schema,
                                     large_scope_rows=300)
    try:
        query = await EMB.embed_query("green tea every morning")
        # thread:1 is large: 300 rounds, and 60 facts of member 2 close around the query
        # (distinct vectors: the index keeps equal ones as one entry); member 1 has 3 facts
        # there, one superseded
        rng = np.random.default_rng(5)
        far = [IndexItem(key=f"round:{i}", kind=ItemKind.ROUND, item_id=i, owner="",
                         scope="thread:1", status="active", text=f"round {i}",
                         search_text=f"round {i}", created_at=T,
                         vector=_near(query, rng, noise=rng.uniform(0.5, 3.0)))
                  for i in range(1, 301)]
        theirs = [IndexItem(key=f"fact:{i}", kind=ItemKind.FACT, item_id=i, owner="2",
                            scope="thread:1", status="active", text="green tea",
                            search_text="green tea", vector=_near(query, rng), created_at=T)
                  for i in range(1000, 1060)]
        mine = await rows(["alice drinks green tea every morning", "alice likes oolong",
                           "alice liked matcha every morning"], scope="thread:1", owner="1",
                          kind=ItemKind.FACT, start=2000)
        mine[2] = IndexItem(**{**{f: getattr(mine[2], f) for f in IndexItem.__slots__},
                               "status": "superseded"})
        # another scope lying exactly on the query too, never seen from thread:1
        elsewhere = [IndexItem(key=f"round:{i}", kind=ItemKind.ROUND, item_id=i, owner="",
                               scope="thread:2", status="active", text="green tea",
                               search_text="green tea", vector=_near(query, rng),
                               created_at=T)
                     for i in range(3000, 3400)]
        await index.upsert(far + theirs + mine + elsewhere)
        await index.compact()
        assert await index.index_large_scopes() == []  # built once
        table = f'"{schema}"."memory_hashing_256_v1"'
        async with index._pool.acquire() as conn:
            built = {r["scope"] for r in await conn.fetch(
                f'SELECT scope FROM "{schema}"."memory_hashing_256_v1_large_scopes"')}
            approximate = (f"SELECT key FROM {table} WHERE scope = 'thread:1' "
                           "AND (kind <> 'fact' OR (owner = '1' AND status = 'active')) "
                           "ORDER BY vector <=> $1 LIMIT 5")
            plan = "\n".join(r[0] for r in await conn.fetch(f"EXPLAIN {approximate}", query))
            # the index alone: member 2's facts fill its 40 candidates, filtered after it
            short = await conn.fetch(approximate, query)
        assert built == {"thread:1", "thread:2"}
        assert "hnsw" in plan  # the partial index serves this scope's dense search
        assert len(short) < 5

        visible = {r.key: r for r in far + mine[:2]}
        exact = sorted(visible, key=lambda k: -sum(a * b for a, b in
                                                    zip(query, visible[k].vector)))
        for limit in (5, 50):
            hits = await index.search(vector=query, text="", limit=limit,
                                      where=ScopeFilter(scope="thread:1", owner="1"))
            keys = [h.key for h in hits]
            assert len(keys) == limit and set(keys) <= set(visible)  # k met, scope kept
            assert len(set(keys) & set(exact[:limit])) >= 0.8 * limit
        # member 2 sees their own facts first, and none of member 1's
        hits = await index.search(vector=query, text="", limit=10,
                                  where=ScopeFilter(scope="thread:1", owner="2"))
        assert len(hits) == 10 and all(1000 <= h.item_id < 1060 for h in hits)
    finally:
        await index.close()
