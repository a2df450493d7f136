"""The recall filter's columns are indexed, also in tables made before those indexes."""

from __future__ import annotations

from datetime import datetime, timezone

import lancedb

from adapters.embedders import HashingEmbedder
from memory.ports import ScopeFilter
from memory.stores.lancedb import SCALAR_INDEXES, LanceIndex, table_name
from memory.text import search_text
from memory.types import IndexItem, ItemKind

EMB = HashingEmbedder()
T = datetime(2026, 1, 1, tzinfo=timezone.utc)


async def _items():
    texts = ["likes green tea", "has a dog called Rex", "we talked about green tea in Graz"]
    vectors = await EMB.embed_documents(texts)
    kinds = [ItemKind.FACT, ItemKind.FACT, ItemKind.ROUND]
    return [IndexItem(key=f"{k.value}:{n}", kind=k, item_id=n, owner="1" if k is ItemKind.FACT
                      else "", scope="user:1", status="active", text=t,
                      search_text=search_text(t), vector=v, created_at=T)
            for n, (k, t, v) in enumerate(zip(kinds, texts, vectors), 1)]


async def _indexed_columns(folder):
    db = await lancedb.connect_async(str(folder))
    table = await db.open_table(table_name(EMB.name))
    try:
        return {c for i in await table.list_indices() if i.index_type != "FTS" for c in i.columns}
    finally:
        table.close()


async def test_new_and_old_tables_get_every_scalar_index(tmp_path):
    folder = tmp_path / "lancedb"
    index = await LanceIndex.open(folder, embedder_name=EMB.name, dim=EMB.dim)
    await index.upsert(await _items())
    where = ScopeFilter("user:1", "1")
    query = await EMB.embed_query("green tea")
    before = sorted(h.key for h in await index.search(vector=query, text="green tea",
                                                      where=where, limit=10))
    await index.close()
    assert await _indexed_columns(folder) == {c for c, _ in SCALAR_INDEXES}

    db = await lancedb.connect_async(str(folder))  # as a table of an earlier version
    table = await db.open_table(table_name(EMB.name))
    for name in ("kind_idx", "status_idx", "owner_idx"):
        await table.drop_index(name)
    table.close()
    assert await _indexed_columns(folder) == {"scope"}

    index = await LanceIndex.open(folder, embedder_name=EMB.name, dim=EMB.dim)
    try:
        assert await _indexed_columns(folder) == {c for c, _ in SCALAR_INDEXES}
        after = sorted(h.key for h in await index.search(vector=query, text="green tea",
                                                         where=where, limit=10))
        assert after == before == ["fact:1", "fact:2", "round:3"]
    finally:
        await index.close()
