"""LanceDB search index (async API): facts, episodes and rounds with vectors and full-text.

Derived from SQLite and rebuildable from it. One table per embedder (``memory_<embedder>``), so
switching embedders re-embeds into a new table instead of mixing vector spaces; tables are never
dropped or overwritten here. Rows are written by key with ``merge_insert``; all writes go through
one lock (a single writer per table: concurrent commits conflict, lancedb#725). Per-scope
queries use a prefilter inside the query (lancedb#511, #2761).

Full-text: an inverted index on ``search_text`` with the white-space tokenizer (text arrives
pre-segmented by ``memory.text.search_text``, Chinese through jieba), lowercasing, English
stemming and stop words. Rows added after the index was built are searchable at once.
LanceDB scores indexed rows with the index's statistics and unindexed rows with statistics that
include them, so the two drift apart as unindexed rows pile up; folding them in (``optimize``)
makes them equal again. ``optimize`` also compacts, which rewrites every fragment smaller than
LanceDB's target: on a table of 100,000 rows one fold takes about a second. Hence the fold
policy (:data:`FOLD_ALWAYS_BELOW_ROWS`, :data:`FOLD_UNINDEXED_FRACTION`): small tables fold
on every write, as before; large ones fold in the background once unindexed rows exceed a small
fraction of the table (measured in ``docs/benchmarks.md``: the recall ranking stays the same).
:meth:`LanceIndex.compact` folds at once and also removes old versions.
"""

from __future__ import annotations

import asyncio
import logging
import re
import warnings
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS

from memory.errors import StoreError
from memory.ports import ScopeFilter
from memory.types import IndexHit, IndexItem, ItemKind

log = logging.getLogger(__name__)

_SAFE = re.compile(r"^[A-Za-z0-9:_\-]+$")

FOLD_ALWAYS_BELOW_ROWS = 5000
"""Tables with fewer rows fold new rows into the indexes on every write (cheap there)."""
FOLD_UNINDEXED_FRACTION = 0.01
"""Larger tables fold, in the background, once unindexed rows exceed this share of the rows."""


def _quote(value: str) -> str:
    if not _SAFE.match(value):
        raise StoreError(f"unsafe value in an index filter: {value!r}")
    return f"'{value}'"


def table_name(embedder_name: str) -> str:
    """Return the index table name for an embedder (letters, digits and ``_`` only)."""
    return "memory_" + re.sub(r"[^A-Za-z0-9]+", "_", embedder_name).strip("_").lower()


class LanceIndex:
    """The production :class:`memory.ports.SearchIndex` on LanceDB. Create with :meth:`open`."""

    def __init__(self, table, dim: int, *, fold_always_below: int = FOLD_ALWAYS_BELOW_ROWS,
                 fold_fraction: float = FOLD_UNINDEXED_FRACTION) -> None:
        self._table = table
        self._dim = dim
        self._fold_always_below = fold_always_below
        self._fold_fraction = fold_fraction
        self._lock = asyncio.Lock()
        self._has_fts = False
        self._rows = 0  # rows in the table (approximate between folds: upserts may replace)
        self._unindexed = 0  # rows written since the last fold
        self._fold_task: asyncio.Task | None = None
        self.folds = 0  # folds run by this handle (the benchmark reports it)

    @classmethod
    async def open(cls, folder: str | Path, *, embedder_name: str, dim: int,
                   fold_always_below: int = FOLD_ALWAYS_BELOW_ROWS,
                   fold_fraction: float = FOLD_UNINDEXED_FRACTION) -> "LanceIndex":
        """Open (creating if needed) the table of ``embedder_name`` under ``folder``.

        ``fold_always_below`` (rows) and ``fold_fraction`` set the fold policy (see the module
        docstring; the defaults are the measured ones).

        Raises:
            StoreError: the folder cannot be opened, or the table's vector size differs from
                ``dim`` (a changed embedder under the same name; run ``memory-bot reindex``).
        """
        schema = pa.schema([
            ("key", pa.string()), ("kind", pa.string()), ("item_id", pa.int64()),
            ("owner", pa.string()), ("scope", pa.string()), ("status", pa.string()),
            ("text", pa.string()), ("search_text", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
            ("created_at", pa.timestamp("us", tz="UTC")),
        ])
        try:
            db = await lancedb.connect_async(str(folder))
            table = await db.create_table(table_name(embedder_name), schema=schema, exist_ok=True)
            existing = await table.schema()
        except Exception as exc:  # lancedb raises plain ValueError/OSError/RuntimeError
            raise StoreError(f"cannot open the LanceDB index in {folder}: {exc}") from exc
        vector_type = existing.field("vector").type
        if getattr(vector_type, "list_size", dim) != dim:
            raise StoreError(
                f"index table {table_name(embedder_name)} holds {vector_type.list_size}-d vectors "
                f"but the embedder gives {dim}-d; run `memory-bot reindex`"
            )
        index = cls(table, dim, fold_always_below=fold_always_below,
                    fold_fraction=fold_fraction)
        indices = await table.list_indices()
        index._has_fts = any(i.index_type == "FTS" for i in indices)
        index._rows = await table.count_rows()
        index._unindexed = max((i.num_unindexed_rows or 0 for i in indices
                                if i.index_type == "FTS"), default=0)
        return index

    async def _ensure_fts(self) -> None:
        if self._has_fts or await self._table.count_rows() == 0:
            return
        await self._table.create_index(
            "search_text",
            config=FTS(base_tokenizer="whitespace", language="English", stem=True,
                       remove_stop_words=True, lower_case=True, ascii_folding=True),
        )
        await self._table.create_index("scope", config=lancedb.index.BTree())
        self._has_fts = True
        self._rows = await self._table.count_rows()
        self._unindexed = 0
        log.info("lancedb full-text and scope indexes created")

    def _arrow(self, items: Sequence[IndexItem]) -> pa.Table:
        """The rows as one Arrow table, built column by column (vectors as one float32
        block: no Python float per element)."""
        vectors = np.asarray([np.asarray(i.vector, dtype=np.float32) for i in items],
                             dtype=np.float32).reshape(len(items), self._dim)
        return pa.table({
            "key": pa.array([i.key for i in items], pa.string()),
            "kind": pa.array([i.kind.value for i in items], pa.string()),
            "item_id": pa.array([i.item_id for i in items], pa.int64()),
            "owner": pa.array([i.owner for i in items], pa.string()),
            "scope": pa.array([i.scope for i in items], pa.string()),
            "status": pa.array([i.status for i in items], pa.string()),
            "text": pa.array([i.text for i in items], pa.string()),
            "search_text": pa.array([i.search_text for i in items], pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), pa.float32()),
                                                        self._dim),
            "created_at": pa.array([i.created_at for i in items], pa.timestamp("us", tz="UTC")),
        })

    def _fold_due(self) -> bool:
        """True when the rows written since the last fold should be folded in now (see the
        module docstring)."""
        if not self._has_fts or self._unindexed == 0:
            return False
        if self._rows < self._fold_always_below:
            return True
        return self._unindexed > self._fold_fraction * self._rows

    async def upsert(self, items: Sequence[IndexItem]) -> None:
        """Insert or replace rows by key, in one commit; fold them into the indexes when the
        fold policy says so (inline on small tables, in the background on large ones)."""
        if not items:
            return
        data = self._arrow(items)
        async with self._lock:
            try:
                await (self._table.merge_insert("key").when_matched_update_all()
                       .when_not_matched_insert_all().execute(data))
                self._rows += len(items)
                self._unindexed += len(items)
                background = False
                if self._fold_due():
                    if self._rows < self._fold_always_below:
                        await self._fold_locked()
                    else:
                        background = True
                await self._ensure_fts()
            except Exception as exc:
                raise StoreError(f"lancedb upsert failed: {exc}") from exc
        if background and (self._fold_task is None or self._fold_task.done()):
            self._fold_task = asyncio.ensure_future(self._fold_in_background())
        log.info("index upsert rows=%d", len(items))

    async def _fold_locked(self) -> None:
        """Fold unindexed rows into the indexes (``optimize``; the caller holds the lock)."""
        await self._table.optimize()
        self._rows = await self._table.count_rows()
        self._unindexed = 0
        self.folds += 1

    async def _fold_in_background(self) -> None:
        started = asyncio.get_running_loop().time()
        try:
            async with self._lock:
                if self._fold_due():
                    await self._fold_locked()
        except Exception:  # the rows stay searchable; the next write tries again
            log.exception("lancedb background fold failed")
            return
        log.info("index folded rows=%d s=%.2f", self._rows,
                 asyncio.get_running_loop().time() - started)

    async def wait_for_fold(self) -> None:
        """Wait for a background fold, if one is running."""
        if self._fold_task is not None:
            await asyncio.gather(self._fold_task, return_exceptions=True)

    async def delete(self, keys: Sequence[str]) -> None:
        """Delete rows by key, in batches of 500."""
        if not keys:
            return
        async with self._lock:
            for start in range(0, len(keys), 500):
                chunk = ",".join(_quote(k) for k in keys[start:start + 500])
                try:
                    await self._table.delete(f"key IN ({chunk})")
                except Exception as exc:
                    raise StoreError(f"lancedb delete failed: {exc}") from exc
            self._rows = max(0, self._rows - len(keys))
        log.info("index delete rows=%d", len(keys))

    @staticmethod
    def _where(where: ScopeFilter) -> str:
        status = "" if where.include_history else " AND status = 'active'"
        return (f"scope = {_quote(where.scope)} AND (kind != 'fact' OR "
                f"(owner = {_quote(where.owner)}{status}))")

    async def search(
        self, *, vector: Sequence[float], text: str, where: ScopeFilter, limit: int
    ) -> list[IndexHit]:
        """Dense and full-text candidates merged by key (see :class:`memory.ports.SearchIndex`)."""
        flt = self._where(where)
        query_vec = np.asarray(vector, dtype=np.float32)
        hits: dict[str, IndexHit] = {}
        try:
            # The dense and the full-text query run at once (each is a prefiltered scan of the
            # scope's rows through the BTree index on ``scope``).
            dense_q = (self._table.query().nearest_to(query_vec).distance_type("cosine")
                       .where(flt).select(["key", "kind", "item_id", "_distance"])
                       .limit(limit).to_list())
            if self._has_fts and text.strip():
                lexical_q = (self._table.query().nearest_to_text(text, columns="search_text")
                             .where(flt).select(["key", "kind", "item_id", "vector", "_score"])
                             .limit(limit).to_list())
                dense, lexical = await asyncio.gather(dense_q, lexical_q)
            else:
                dense, lexical = await dense_q, []
            for row in dense:
                hits[row["key"]] = IndexHit(row["key"], ItemKind(row["kind"]), row["item_id"],
                                            cosine=1.0 - float(row["_distance"]))
            for row in lexical:
                cosine = float(np.dot(np.asarray(row["vector"], dtype=np.float32), query_vec))
                hits[row["key"]] = IndexHit(row["key"], ItemKind(row["kind"]), row["item_id"],
                                            cosine=cosine, bm25=float(row["_score"]))
        except Exception as exc:
            raise StoreError(f"lancedb search failed: {exc}") from exc
        return list(hits.values())

    async def keys(self) -> set[str]:
        """Every key in the table."""
        table = await self._table.query().select(["key"]).to_arrow()
        return set(table.column("key").to_pylist())

    async def count(self) -> int:
        """Number of rows."""
        return await self._table.count_rows()

    async def compact(self) -> None:
        """Optimise: compact files, fold new rows into the indexes, and delete every old version
        (so deleted rows are gone from disk, lancedb#2142)."""
        await self.wait_for_fold()
        async with self._lock:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "removes every version": intended
                await self._table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
            self._rows = await self._table.count_rows()
            self._unindexed = 0
        log.info("index compacted")

    async def close(self) -> None:
        """Wait for a background fold, then release the table handle."""
        await self.wait_for_fold()
        self._table.close()
