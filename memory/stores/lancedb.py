"""LanceDB search index (async API): facts, episodes and rounds with vectors and full-text.

Derived from SQLite and rebuildable from it. One table per embedder (``memory_<embedder>``), so
switching embedders re-embeds into a new table instead of mixing vector spaces; tables are never
dropped or overwritten here. Rows are written by key with ``merge_insert``; all writes go through
one lock (a single writer per table: concurrent commits conflict, lancedb#725). Per-scope
queries use a prefilter inside the query (lancedb#511, #2761).

Full-text: an inverted index on ``search_text`` with the white-space tokenizer (text arrives
pre-segmented by ``memory.text.search_text``, Chinese through jieba), lowercasing, English
stemming and stop words. Rows added after the index was built are searchable at once.

Scores of unindexed rows (LanceDB 0.40, measured in ``docs/benchmarks.md``, "Index writes"):
rows not yet in the full-text index are scored with the statistics of the whole table, exactly
as they will be once folded in; the indexed rows keep the statistics of the index alone. So it
is the indexed rows whose scores drift as unindexed rows pile up, by at most 0.008 of the
fused score with 2% of the table unindexed (p99 0.005, LoCoMo turns). Folding them in
(``optimize``) makes every score exact again, but it also compacts, and LanceDB's compaction
merges the small indexed fragment a previous fold left with the large one: every fold rewrites
the whole table (~0.1 s at 2,000 rows, ~1 s at 21,000, a few at 210,000). Hence the fold
policy, instead of a fold after every write:

* :data:`FOLD_UNINDEXED_FRACTION`: fold once the unindexed rows exceed this share of the
  indexed ones (the score drift above), so folds come at a rate proportional to the table's
  growth and the rewrite costs a constant amount per written row at any size;
* :data:`FRAGMENT_SEARCH_MS`: each commit leaves a small unindexed fragment that every query
  scans on its own (~0.5 ms of CPU per fragment and search); once the searches since the last
  fold have spent on fragments (counted at :data:`FRAGMENT_SEARCH_MS`) as much as that fold
  took, fold (a ski-rental rule: a bot that searches much folds often, a bulk import seldom);
* :data:`CLEANUP_AFTER_VERSIONS`: at the latest after this many commits, for the disk.

Tables under :data:`FOLD_INLINE_BELOW_ROWS` fold within the write; larger ones in the
background. :meth:`LanceIndex.compact` folds at once.

Old versions: every commit is a new table version, and a fold writes the table anew, so
versions kept until the daily maintenance grew the folder by ~300 KB per message on a small
table (16 MB in 303 versions after 70 messages). Every fold therefore also removes the
versions before it, so the folder stays within a small multiple of its compacted size between
maintenance runs (``docs/benchmarks.md``, "Disk growth"). A search that was reading a version
removed underneath it fails with LanceDB's "Not found" and is run again once, on the current
version.

The dense half of a search runs on an in-process copy of the scope's rows when the scope is
small enough to keep (``memory/stores/scope_cache.py``, dropped by every write that touches
it); large scopes, and a handle opened with ``scope_cache_bytes=0``, use LanceDB's vector
search with the same prefilter.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import re
import sys
import time
import warnings
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path


def _defer_namespace_client() -> None:
    """Let ``import lancedb`` skip the REST client of LanceDB's namespace API until something
    uses it. ``lance_namespace`` imports the generated ``lance_namespace_urllib3_client``
    package only for its model classes, but the package's ``__init__`` also imports every API
    module, and building their pydantic validators took ~1.4 s of a 2.3 s start-up on a quiet
    machine (3 s under load; docs/benchmarks.md, "Start-up"). A local folder never talks REST.
    The package is registered without running its ``__init__`` (its submodules, such as
    ``.models``, import as usual); the first use of a name of the package itself runs the
    ``__init__`` then, so nothing changes for code that does use the client."""
    name = "lance_namespace_urllib3_client"
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return
    package = importlib.util.module_from_spec(spec)

    def load_on_use(attr: str):
        del package.__getattr__  # from now on the package's own names
        spec.loader.exec_module(package)
        return getattr(package, attr)

    package.__getattr__ = load_on_use  # PEP 562: called only for names not yet there
    sys.modules[name] = package


_defer_namespace_client()

import lancedb  # noqa: E402 - after the deferral above
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from lancedb.index import FTS  # noqa: E402

from memory.errors import StoreError
from memory.ports import ScopeFilter
from memory.stores.scope_cache import SCOPE_CACHE_BYTES, ScopeRows, ScopeVectors
from memory.types import IndexHit, IndexItem, ItemKind

log = logging.getLogger(__name__)

_SAFE = re.compile(r"^[A-Za-z0-9:_\-]+$")

FOLD_UNINDEXED_FRACTION = 0.02
"""Fold once unindexed rows exceed this share of the indexed rows. The fused-score drift of the
indexed rows it allows, measured on the LoCoMo turns with the newest ones unindexed
(docs/benchmarks.md, "Index writes"): 1% -> max 0.005 (p99 0.003), 2% -> 0.008 (0.005),
5% -> 0.022 (0.008), 10% -> 0.027 (0.011) of the score in [0, 1]."""
FRAGMENT_SEARCH_MS = 2.0
"""What one unindexed fragment is counted to add to one search, in milliseconds, against the
last fold's wall time. Measured: ~0.5 ms of CPU (dense, full-text and the scope prefilter each
scan it; 200 one-row commits on a 21,000-row table took a search from ~19 to ~170 ms of CPU,
docs/benchmarks.md "Index writes"); counted four times, because it falls on the reply path of
every search while a fold runs in the background. With ~4 searches per write this folds about
every 15 writes at 21,000 rows and every 5 at 2,000. 0 turns the fragment rule off."""
FOLD_INLINE_BELOW_ROWS = 5000
"""Tables with fewer rows fold within the write that makes the fold due (tens of ms there);
larger ones in the background, so the write returns first."""
CLEANUP_AFTER_VERSIONS = 100
"""Most commits without a fold (each a table version whose files stay on disk until a fold
removes them): after this many the next write folds, and so cleans up, whatever the table's
size. This bounds the old manifests and deletion files of a large table that takes many small
writes and few searches."""
INDEX_CACHE_BYTES = 32 << 20
"""LanceDB's cache of opened index parts (full-text, BTree) per index handle. The library's
default is far larger; at 100,000 facts (210,000 rows) 16-64 MiB gave the same query times
and ~80 MiB less resident memory than the default (docs/benchmarks.md)."""
METADATA_CACHE_BYTES = 32 << 20
"""LanceDB's cache of table and file metadata, sized as :data:`INDEX_CACHE_BYTES`."""


def _storage_failing(exc: BaseException) -> bool:
    """Whether an index operation failed for want of storage (disk full, read-only, I/O),
    not for a bug: an ``OSError``, or Lance's I/O error (its message names the error kind,
    ``LanceError(IO)``, as lance's Rust ``Error::IO`` displays)."""
    return isinstance(exc, OSError) or "LanceError(IO)" in str(exc)


def _quote(value: str) -> str:
    if not _SAFE.match(value):
        raise StoreError(f"unsafe value in an index filter: {value!r}")
    return f"'{value}'"


#: Scalar indexes on the columns of the recall filter (``LanceIndex._where``), so that LanceDB
#: answers the whole filter from indexes instead of reading ``kind``, ``owner`` and ``status``
#: of every row: at 100,000 facts (210,000 rows) a full-text query took 5.2 ms (3.1 ms of
#: CPU) with the ``scope`` index alone and 2.7 ms (1.8 ms) with all four (docs/benchmarks.md,
#: third pass). Bitmap for the few-valued columns, BTree otherwise (LanceDB's index guide).
SCALAR_INDEXES = (("scope", "btree"), ("kind", "bitmap"), ("status", "bitmap"),
                  ("owner", "btree"))


async def _create_scalar_indexes(table, have: set[str] = frozenset()) -> list[str]:
    """Create the :data:`SCALAR_INDEXES` whose column is not in ``have``; returns the columns
    indexed now."""
    made = []
    for column, kind in SCALAR_INDEXES:
        if column not in have:
            config = lancedb.index.Bitmap() if kind == "bitmap" else lancedb.index.BTree()
            await table.create_index(column, config=config)
            made.append(column)
    return made


async def create_search_indexes(table) -> None:
    """Build the full-text index on ``search_text`` and the :data:`SCALAR_INDEXES` of the
    LanceDB table ``table`` (see the module docstring); also used by
    :func:`memory.stores.lance_copy.copy_tables` so a copied table searches the same way."""
    await table.create_index(
        "search_text",
        config=FTS(base_tokenizer="whitespace", language="English", stem=True,
                   remove_stop_words=True, lower_case=True, ascii_folding=True),
    )
    await _create_scalar_indexes(table)


def table_name(embedder_name: str) -> str:
    """Return the index table name for an embedder (letters, digits and ``_`` only)."""
    return "memory_" + re.sub(r"[^A-Za-z0-9]+", "_", embedder_name).strip("_").lower()


class LanceIndex:
    """The production :class:`memory.ports.SearchIndex` on LanceDB. Create with :meth:`open`."""

    def __init__(self, table, dim: int, *, fold_fraction: float = FOLD_UNINDEXED_FRACTION,
                 fragment_search_ms: float = FRAGMENT_SEARCH_MS,
                 fold_inline_below: int = FOLD_INLINE_BELOW_ROWS,
                 cleanup_after_versions: int = CLEANUP_AFTER_VERSIONS,
                 scope_cache_bytes: int = SCOPE_CACHE_BYTES) -> None:
        self._table = table
        self._dim = dim
        self._fold_fraction = fold_fraction
        self._fragment_search_ms = fragment_search_ms
        self._fold_inline_below = fold_inline_below
        self._cleanup_after_versions = cleanup_after_versions
        self._writes = 0  # commits since the last fold (= unindexed fragments)
        self._fragment_ms = 0.0  # estimated search CPU spent on those fragments since then
        self._fold_ms: float | None = None  # wall time of this handle's last fold
        # Upserts waiting for the write lock, committed together (group commit); a delete
        # starts a new generation so that no upsert called after it is written before it.
        self._pending: list[tuple[int, Sequence[IndexItem], asyncio.Future]] = []
        self._gen = 0
        self._lock = asyncio.Lock()
        self._has_fts = False
        self._rows = 0  # rows in the table (approximate between folds: upserts may replace)
        self._unindexed = 0  # rows written since the last fold
        self._fold_task: asyncio.Task | None = None
        self.folds = 0  # folds run by this handle (the benchmark reports it)
        # the dense half of a search runs on the scope's rows in memory when it can
        # (memory/stores/scope_cache.py); 0 turns it off
        self.scope_vectors = ScopeVectors(scope_cache_bytes) if scope_cache_bytes > 0 else None

    @classmethod
    async def open(cls, folder: str | Path, *, embedder_name: str, dim: int,
                   fold_fraction: float = FOLD_UNINDEXED_FRACTION,
                   fragment_search_ms: float = FRAGMENT_SEARCH_MS,
                   fold_inline_below: int = FOLD_INLINE_BELOW_ROWS,
                   cleanup_after_versions: int = CLEANUP_AFTER_VERSIONS,
                   scope_cache_bytes: int = SCOPE_CACHE_BYTES) -> "LanceIndex":
        """Open (creating if needed) the table of ``embedder_name`` under ``folder``.

        ``fold_fraction`` (0: fold after every write), ``fragment_search_ms`` (0: no fragment
        rule), ``fold_inline_below`` (rows) and ``cleanup_after_versions`` (commits) set the
        fold policy (see the module docstring; the defaults are the measured ones);
        ``scope_cache_bytes`` the budget of the in-process scope vectors (0: none).

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
            db = await lancedb.connect_async(str(folder), session=lancedb.Session(
                index_cache_size_bytes=INDEX_CACHE_BYTES,
                metadata_cache_size_bytes=METADATA_CACHE_BYTES))
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
        index = cls(table, dim, fold_fraction=fold_fraction,
                    fragment_search_ms=fragment_search_ms, fold_inline_below=fold_inline_below,
                    cleanup_after_versions=cleanup_after_versions,
                    scope_cache_bytes=scope_cache_bytes)
        indices = await table.list_indices()
        index._has_fts = any(i.index_type == "FTS" for i in indices)
        if index._has_fts:  # a table made before SCALAR_INDEXES grew gets the missing ones
            have = {c for i in indices if i.index_type != "FTS" for c in i.columns}
            try:
                made = await _create_scalar_indexes(table, have)
            except Exception as exc:  # searches stay correct without them, only slower
                log.warning("could not create the scalar indexes: %s", exc)
            else:
                if made:
                    log.info("lancedb scalar indexes created columns=%s", ",".join(made))
        index._rows = await table.count_rows()
        index._unindexed = max((i.num_unindexed_rows or 0 for i in indices
                                if i.index_type == "FTS"), default=0)
        return index

    async def _ensure_fts(self) -> None:
        if self._has_fts or await self._table.count_rows() == 0:
            return
        await create_search_indexes(self._table)
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
        indexed = max(1, self._rows - self._unindexed)
        return (self._unindexed > self._fold_fraction * indexed
                or (self._fragment_search_ms > 0
                    and self._fragment_ms >= self._expected_fold_ms())
                or self._writes >= self._cleanup_after_versions)

    def _expected_fold_ms(self) -> float:
        """What the next fold is expected to cost: the last one's wall time, or before any,
        ~0.05 ms a row (measured: 0.05-0.2 s at 2,000 rows, ~1 s at 21,000)."""
        return self._fold_ms if self._fold_ms is not None else 20.0 + 0.05 * self._rows

    async def upsert(self, items: Sequence[IndexItem]) -> None:
        """Insert or replace rows by key, in one commit, and return once they are committed;
        fold them into the indexes when the fold policy says so (inline on small tables, in
        the background on large ones).

        Upserts that wait for the write lock at the same time are committed together, in one
        ``merge_insert`` (one table version and one fragment instead of one each; a key in
        several of them keeps the row of the latest call). Never across a :meth:`delete`:
        upserts called after a delete are written after it.

        Raises:
            StoreError: the write failed (every upsert committed with it gets the error).
        """
        if not items:
            return
        entry = (self._gen, items, asyncio.get_running_loop().create_future())
        self._pending.append(entry)
        background = False
        try:
            async with self._lock:
                if not entry[2].done():  # nobody took it along: commit what waits with it
                    batch = [e for e in self._pending if e[0] == entry[0]]
                    self._pending = [e for e in self._pending if e[0] != entry[0]]
                    rows = {i.key: i for e in batch for i in e[1]}  # last call wins
                    try:
                        background = await self._write_locked(list(rows.values()))
                    except Exception as exc:
                        error = StoreError(f"lancedb upsert failed: {exc}")
                        error.__cause__ = exc
                        for e in batch:
                            e[2].set_exception(error)
                    else:
                        for e in batch:
                            e[2].set_result(None)
        except asyncio.CancelledError:
            if entry in self._pending:  # not written: leave nothing behind
                self._pending.remove(entry)
            raise
        if background and (self._fold_task is None or self._fold_task.done()):
            self._fold_task = asyncio.ensure_future(self._fold_in_background())
        await entry[2]
        log.info("index upsert rows=%d", len(items))

    async def _write_locked(self, items: Sequence[IndexItem]) -> bool:
        """One ``merge_insert`` of ``items`` (distinct keys; the caller holds the lock);
        folds inline when due on a small table. Returns True when a background fold is due."""
        try:
            await (self._table.merge_insert("key").when_matched_update_all()
                   .when_not_matched_insert_all().execute(self._arrow(items)))
        finally:  # committed or not, cached copies of these scopes are no longer trusted
            if self.scope_vectors is not None:
                self.scope_vectors.written({i.scope for i in items})
        self._rows += len(items)
        self._unindexed += len(items)
        self._writes += 1
        background = False
        if self._fold_due():
            if self._rows < self._fold_inline_below:
                await self._fold_locked()
            else:
                background = True
        await self._ensure_fts()
        return background

    async def _fold_locked(self) -> None:
        """Fold unindexed rows into the indexes and remove every older version (``optimize``
        with cleanup; the caller holds the lock, so no write of this process is under way).
        The indexes' previous files stay until the next fold (LanceDB prunes before it
        rewrites them)."""
        started = time.perf_counter()
        await self._optimize_and_clean()
        self._fold_ms = (time.perf_counter() - started) * 1000
        self._rows = await self._table.count_rows()
        self._unindexed = 0
        self._writes = 0
        self._fragment_ms = 0.0
        self.folds += 1

    async def _optimize_and_clean(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "removes every version": intended
            await self._table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)

    async def _fold_in_background(self) -> None:
        started = asyncio.get_running_loop().time()
        try:
            async with self._lock:
                if self._fold_due():
                    await self._fold_locked()
        except Exception as exc:  # the rows stay searchable; the next write tries again
            if _storage_failing(exc):  # a full or read-only disk: expected, one line
                log.warning("lancedb background fold postponed: %s", exc)
            else:
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
        self._gen += 1  # upserts called from now on are committed after this delete
        async with self._lock:
            for start in range(0, len(keys), 500):
                chunk = ",".join(_quote(k) for k in keys[start:start + 500])
                try:
                    await self._table.delete(f"key IN ({chunk})")
                except Exception as exc:
                    raise StoreError(f"lancedb delete failed: {exc}") from exc
                finally:
                    if self.scope_vectors is not None:
                        self.scope_vectors.deleted()
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
        """Dense and full-text candidates merged by key (see :class:`memory.ports.SearchIndex`).

        A search that was reading a table version removed meanwhile by a fold (LanceDB's
        "Not found" for one of its files) runs again once, on the current version.

        Raises:
            StoreError: the search failed (twice, when the first failure was a removed file).
        """
        self._count_fragment_cost()
        try:
            return await self._search(vector, text, where, limit)
        except Exception as exc:
            if not _vanished(exc):
                raise StoreError(f"lancedb search failed: {exc}") from exc
            log.info("index search met a removed version; searching again")
        try:
            return await self._search(vector, text, where, limit)
        except Exception as exc:
            raise StoreError(f"lancedb search failed: {exc}") from exc

    def _count_fragment_cost(self) -> None:
        """Charge this search's scan of the unindexed fragments to the fragment rule, and
        start a background fold when it is due (see the module docstring)."""
        if self._writes == 0 or self._fragment_search_ms <= 0:
            return
        self._fragment_ms += self._writes * self._fragment_search_ms
        if self._fold_due() and (self._fold_task is None or self._fold_task.done()):
            self._fold_task = asyncio.ensure_future(self._fold_in_background())

    async def _search(self, vector: Sequence[float], text: str, where: ScopeFilter,
                      limit: int) -> list[IndexHit]:
        flt = self._where(where)
        query_vec = np.asarray(vector, dtype=np.float32)
        hits: dict[str, IndexHit] = {}
        # The dense and the full-text query run at once (each is a prefiltered scan of the
        # scope's rows through the BTree index on ``scope``); the dense one on the scope's
        # cached rows when it has them, or reading them to fill the cache.
        cache = self.scope_vectors
        rows = cache.get(where.scope) if cache is not None else None
        if rows is not None:  # the dense half in memory, exact (scope_cache.py)
            dense_q = _done(None)
        elif (cache is not None and not cache.too_big(where.scope)
              and cache.admit(where.scope)):
            ticket = cache.ticket(where.scope)
            # at most one row more than the cache keeps for a scope: a large scope costs
            # a bounded read once, then stays with LanceDB's own search
            dense_q = (self._table.query().where(f"scope = {_quote(where.scope)}")
                       .select(["kind", "item_id", "owner", "status", "vector"])
                       .limit(cache.max_rows(self._dim) + 1).to_arrow())
        else:
            dense_q = self._dense_query(query_vec, flt, limit)
        if self._has_fts and text.strip():
            lexical_q = (self._table.query().nearest_to_text(text, columns="search_text")
                         .where(flt).select(["key", "kind", "item_id", "vector", "_score"])
                         .limit(limit).to_list())
            dense, lexical = await asyncio.gather(dense_q, lexical_q)
        else:
            dense, lexical = await dense_q, []
        if isinstance(dense, pa.Table):  # a scope's rows read to fill the cache
            if dense.num_rows > cache.max_rows(self._dim):
                cache.refuse(where.scope)
                dense = await self._dense_query(query_vec, flt, limit)
            else:
                rows = self._scope_rows(dense)
                cache.put(where.scope, rows, ticket)
        if rows is not None:
            for key, kind, item_id, cosine in rows.nearest(query_vec, where, limit):
                hits[key] = IndexHit(key, ItemKind(kind), item_id, cosine=cosine)
        else:
            for row in dense:
                hits[row["key"]] = IndexHit(row["key"], ItemKind(row["kind"]),
                                            row["item_id"],
                                            cosine=1.0 - float(row["_distance"]))
        for row in lexical:
            cosine = float(np.dot(np.asarray(row["vector"], dtype=np.float32), query_vec))
            hits[row["key"]] = IndexHit(row["key"], ItemKind(row["kind"]), row["item_id"],
                                        cosine=cosine, bm25=float(row["_score"]))
        return list(hits.values())

    def _dense_query(self, query_vec: np.ndarray, flt: str, limit: int):
        return (self._table.query().nearest_to(query_vec).distance_type("cosine").where(flt)
                .select(["key", "kind", "item_id", "_distance"]).limit(limit).to_list())

    def _scope_rows(self, table: pa.Table) -> ScopeRows:
        vectors = table.column("vector").combine_chunks()
        flat = vectors.flatten().to_numpy(zero_copy_only=False)
        return ScopeRows.from_columns(
            table.column("kind").to_pylist(), table.column("item_id").to_numpy(),
            table.column("owner").to_pylist(), table.column("status").to_pylist(),
            flat.reshape(table.num_rows, self._dim))

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
            await self._optimize_and_clean()
            self._rows = await self._table.count_rows()
            self._unindexed = 0
            self._writes = 0
            self._fragment_ms = 0.0
        log.info("index compacted")

    async def close(self) -> None:
        """Wait for a background fold, then release the table handle."""
        await self.wait_for_fold()
        self._table.close()


async def _done(value):
    return value


def _vanished(exc: BaseException) -> bool:
    """True for LanceDB's error when a file of the version being read is gone (removed by a
    cleanup after the read began): ``RuntimeError("... Not found: <path> ...")``."""
    return "Not found" in str(exc)
