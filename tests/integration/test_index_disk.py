"""Disk use of the data folder while the bot runs (real SQLite + LanceDB): old index versions
are removed as writes come in, not only by the daily maintenance, so the folder stays within
a small multiple of its compacted size."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path

from adapters.embedders import HashingEmbedder
from memory.ports import ScopeFilter
from memory.stores.lancedb import CLEANUP_AFTER_VERSIONS, LanceIndex
from memory.text import search_text
from memory.types import IndexItem, ItemKind

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
#: The bound the folder keeps between maintenance runs: at most this many times its size
#: after compaction (old versions removed, WAL truncated).
MAX_GROWTH = 3.0


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


async def _compacted_size(h, folder: Path) -> int:
    await h.memory.run_maintenance(expire_days=0, retention_days=0)
    await h.store.purge_free_space()  # checkpoint and truncate the WAL
    return _size(folder)


async def test_seventy_short_messages_keep_the_folder_near_its_compacted_size(
        lance_harness, tmp_path):
    h = lance_harness
    sizes = []
    for n in range(70):
        # every other message an explicit fact (an index write of its own); a closed session
        # every ten messages (its rounds and episode, another write)
        text = f"remember my locker number {n} is blue" if n % 2 else f"just saying hello {n}"
        await h.say(text)
        if n % 10 == 9:
            await h.say("/new")
            await h.memory.drain()
        sizes.append(_size(tmp_path))
    assert len(await h.index.keys()) >= 35 + 7  # facts and rounds were indexed
    compacted = await _compacted_size(h, tmp_path)
    # before old versions were removed as the bot ran, the folder held every version written
    # since the last maintenance: ~16 MB here, about 40 times its compacted size
    assert max(sizes) <= MAX_GROWTH * compacted, (max(sizes), compacted)


async def _items(embedder, first: int, count: int) -> list[IndexItem]:
    texts = [f"the user keeps note number {i} about {('tea', 'bees', 'chess')[i % 3]}"
             for i in range(first, first + count)]
    vectors = await embedder.embed_documents(texts)
    return [IndexItem(key=f"fact:{i}", kind=ItemKind.FACT, item_id=i, owner="1",
                      scope="user:1", status="active", text=t, search_text=search_text(t),
                      vector=v, created_at=T0)
            for i, t, v in zip(range(first, first + count), texts, vectors)]


async def test_a_large_table_without_folds_still_removes_old_versions(tmp_path):
    embedder = HashingEmbedder()
    # a table whose fold rules never fire (large, far under the unindexed share): only the
    # count of commits brings a fold, and with it the removal of old versions
    index = await LanceIndex.open(tmp_path, embedder_name=embedder.name, dim=embedder.dim,
                                  fold_inline_below=0, fold_fraction=10.0,
                                  fragment_search_ms=0)
    try:
        await index.upsert(await _items(embedder, 0, 500))
        await index.compact()
        base_versions = len(await index._table.list_versions())
        for i in range(CLEANUP_AFTER_VERSIONS + 5):
            await index.upsert(await _items(embedder, 1000 + i, 1))
        await index.wait_for_fold()
        assert index.folds >= 1
        assert len(await index._table.list_versions()) <= base_versions + 10
    finally:
        await index.close()


async def test_searches_during_folds_that_remove_versions_never_fail(tmp_path):
    embedder = HashingEmbedder()
    index = await LanceIndex.open(tmp_path, embedder_name=embedder.name, dim=embedder.dim,
                                  fold_fraction=0,  # every write folds
                                  scope_cache_bytes=0)  # every search reads the table
    try:
        await index.upsert(await _items(embedder, 0, 200))
        vector = await embedder.embed_query("note about bees")
        where = ScopeFilter(scope="user:1", owner="1")
        stop = asyncio.Event()

        async def search_while_writing() -> int:
            done = 0
            while not stop.is_set():
                hits = await index.search(vector=vector, text=search_text("note bees"),
                                          where=where, limit=20)
                assert hits
                done += 1
                await asyncio.sleep(0)
            return done

        searchers = [asyncio.ensure_future(search_while_writing()) for _ in range(4)]
        for i in range(30):  # each write folds and removes the old versions
            await index.upsert(await _items(embedder, 1000 + i, 1))
        stop.set()
        assert sum(await asyncio.gather(*searchers)) > 0
        assert index.folds >= 30
        assert len(await index._table.list_versions()) <= 3
    finally:
        await index.close()
