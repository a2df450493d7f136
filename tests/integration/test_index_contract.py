"""One contract, run against every SearchIndex backend: the LanceDB index, PostgreSQL (a real
server started by the tests; skipped when it cannot start) and the fake."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from adapters.embedders import HashingEmbedder
from memory.ports import ScopeFilter
from memory.stores.inmemory import InMemoryIndex
from memory.stores.lancedb import LanceIndex
from memory.stores.postgres import PgSearchIndex
from memory.text import search_text
from memory.types import IndexItem, ItemKind

T = datetime(2026, 1, 1, tzinfo=timezone.utc)
EMB = HashingEmbedder()


@pytest.fixture(params=["lancedb", "lancedb-no-scope-cache",
                        pytest.param("postgres", marks=pytest.mark.postgres), "inmemory"])
async def index(request, tmp_path):
    if request.param.startswith("lancedb"):  # with and without the in-process scope vectors
        idx = await LanceIndex.open(tmp_path / "lancedb", embedder_name=EMB.name, dim=EMB.dim,
                                    scope_cache_bytes=0 if "no-" in request.param else 1 << 20)
    elif request.param == "postgres":
        url, schema = request.getfixturevalue("pg_schema")
        idx = await PgSearchIndex.open(url, embedder_name=EMB.name, dim=EMB.dim, schema=schema)
    else:
        idx = InMemoryIndex()
    yield idx
    await idx.close()


async def items(specs):
    texts = [s[4] for s in specs]
    vectors = await EMB.embed_documents(texts)
    return [IndexItem(key=f"{kind.value}:{i}", kind=kind, item_id=i, owner=owner, scope=scope,
                      status=status, text=text, search_text=search_text(text), vector=v,
                      created_at=T)
            for (kind, i, owner, scope, text, status), v in
            zip([(s[0], s[1], s[2], s[3], s[4], s[5] if len(s) > 5 else "active") for s in specs],
                vectors)]


async def search(index, query, scope, owner, limit=10):
    return await index.search(vector=await EMB.embed_query(query), text=search_text(query),
                              where=ScopeFilter(scope=scope, owner=owner), limit=limit)


async def test_empty_index_search_returns_nothing(index):
    assert await search(index, "hello", "user:1", "1") == []
    assert await index.keys() == set()


async def test_upsert_by_key_replaces_and_delete_removes(index):
    await index.upsert(await items([(ItemKind.FACT, 1, "1", "user:1", "likes green tea")]))
    await index.upsert(await items([(ItemKind.FACT, 1, "1", "user:1", "likes black coffee")]))
    assert await index.keys() == {"fact:1"}
    hits = await search(index, "black coffee", "user:1", "1")
    assert [h.key for h in hits] == ["fact:1"] and hits[0].bm25 and hits[0].cosine > 0.3
    await index.delete(["fact:1", "fact:404"])
    assert await index.keys() == set()
    assert await search(index, "black coffee", "user:1", "1") == []


async def test_scope_owner_and_status_filter_inside_the_query(index):
    await index.upsert(await items([
        (ItemKind.FACT, 1, "1", "user:1", "alice likes sushi"),
        (ItemKind.FACT, 2, "2", "user:2", "bob likes sushi"),
        (ItemKind.FACT, 3, "1", "user:1", "alice liked sushi once", "superseded"),
        (ItemKind.ROUND, 4, "", "thread:9", "group talk about sushi"),
        (ItemKind.FACT, 5, "2", "thread:9", "bob in the group likes sushi"),
    ]))
    assert {h.key for h in await search(index, "sushi", "user:1", "1")} == {"fact:1"}
    assert {h.key for h in await search(index, "sushi", "thread:9", "1")} == {"round:4"}
    assert {h.key for h in await search(index, "sushi", "thread:9", "2")} == {"round:4", "fact:5"}


async def test_a_user_with_few_rows_gets_them_all_among_many(index):
    # lancedb#511/#2761: a post-filter would return fewer than min(k, count)
    specs = [(ItemKind.ROUND, i, "", f"user:{i % 200 + 10}", f"note number {i} about food")
             for i in range(1, 2001)]
    specs += [(ItemKind.ROUND, 5000 + i, "", "user:7", f"x {i} completely unrelated words")
              for i in range(3)]
    await index.upsert(await items(specs))
    hits = await search(index, "what do I like to eat? food", "user:7", "7", limit=5)
    assert {h.key for h in hits} == {"round:5000", "round:5001", "round:5002"}


async def test_rows_added_after_the_full_text_index_are_found(index):
    await index.upsert(await items([(ItemKind.ROUND, 1, "", "user:1", "first row")]))
    await index.upsert(await items([(ItemKind.ROUND, 2, "", "user:1", "Brompton folding bike")]))
    hits = await search(index, "Brompton", "user:1", "1")
    assert any(h.key == "round:2" and h.bm25 for h in hits)
    await index.compact()
    hits = await search(index, "Brompton", "user:1", "1")
    assert any(h.key == "round:2" and h.bm25 for h in hits)


async def test_chinese_is_searchable(index):
    await index.upsert(await items([
        (ItemKind.ROUND, 1, "", "user:1", "我是做量化策略的，主要用 Python，最近在选向量数据库。"),
        (ItemKind.ROUND, 2, "", "user:1", "我周末喜欢吃夜宵"),
    ]))
    hits = await search(index, "帮我继续看向量数据库，上次说要从哪里开始？", "user:1", "1")
    lexical = sorted((h for h in hits if h.bm25), key=lambda h: -h.bm25)
    assert lexical and lexical[0].key == "round:1"
