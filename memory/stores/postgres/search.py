"""The search index on PostgreSQL: pgvector for the dense half, stored terms for full-text.

One table of rows per embedder (``memory_<embedder>``, the name LanceDB's table has), migrated
by :mod:`memory.stores.postgres.migrations`. A search runs two statements at once, each filtered
by the scope inside the query (:class:`memory.ports.ScopeFilter`):

* dense: ``ORDER BY vector <=> query LIMIT k`` over the rows of the scope, an exact scan
  through the B-tree index on ``scope``. No approximate (HNSW/IVFFlat) index covers the table:
  pgvector 0.6 filters an approximate scan's candidates after the scan (no iterative index
  scans before 0.8), so a scope filter over a shared approximate index can return fewer than
  k rows (pgvector's README, "Filtering"). Given ``large_scope_rows`` (off by default, see
  :data:`LARGE_SCOPE_ROWS`), a scope of at least that many rows gets an HNSW index of its own
  when the index is compacted (:meth:`PgSearchIndex.compact`),
  partial on ``scope = '<that scope>'``, so every candidate it yields is in the scope; the
  owner and status conditions still filter after it, so when it yields fewer than k rows the
  exact scan runs instead: a search never returns fewer rows than the scope holds, up to k.
  The HNSW search is approximate (measured in docs/benchmarks.md, "PostgreSQL search").
  ``cosine = 1 - (vector <=> query)``;
* lexical: BM25 in SQL over the postings (one narrow row per row and distinct term, keyed by
  scope and term) of the query's terms in the scope, pruned by MaxScore (the rows of the
  rarest terms first, :meth:`PgSearchIndex._lexical`), and the statistics the writes keep
  (``memory/stores/postgres/terms.py`` defines the terms and the formula; the numbers equal
  LanceDB's for the same rows); best ``limit`` returned, each with its cosine too. The terms
  are made by the application (jieba for Chinese), so no PostgreSQL text-search
  configuration is involved.

Writes replace rows by key and update the term statistics and totals in the same transaction,
under a transaction-level advisory lock per table: index writes from all processes on the
database are serialised (a write of a few rows takes milliseconds), which keeps the statistics
exact and rules out deadlocks between writers touching the same terms.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import re
import uuid
from collections import Counter
from collections.abc import Sequence

import asyncpg

from memory.errors import StoreError
from memory.ports import ScopeFilter
from memory.stores.postgres.connection import mapped, open_pool, redacted
from memory.stores.postgres.index_writes import delete_rows, replace_rows
from memory.stores.postgres.migrations import TableNames, ident, migrate
from memory.stores.postgres.terms import B, K1, index_terms
from memory.types import IndexHit, IndexItem, ItemKind

log = logging.getLogger(__name__)

WRITE_BATCH_ROWS = 1000
"""Rows per insert statement of one upsert (each statement carries its rows as arrays)."""
LEXICAL_BUDGET_POSTINGS = 4000
"""Postings of the rarest query terms that a full-text search scores first, for MaxScore's
pruning (:meth:`PgSearchIndex._lexical`): each candidate row costs one primary-key read per
query term, so this bounds that first pass to a few thousand reads."""
LARGE_SCOPE_ROWS: int | None = None
"""Rows from which a scope gets an approximate (HNSW) index of its own at :meth:`compact`;
None: never. Off by default: at 100,000 rows of one scope the build took 619 s on a busy
2-core machine, and on random 384-d vectors the index found 0.11 of the exact top 20 and was
not faster than the exact scan (docs/benchmarks.md, "PostgreSQL search")."""
LARGE_SCOPES_REFRESH_S = 60.0
"""How often, in seconds, a search re-reads which scopes have their own index (another process
may have built one; until then this one scans exactly, which is correct, only slower)."""
HNSW_EF_SEARCH_PER_ROW = 4
"""``hnsw.ef_search`` (candidates an HNSW scan keeps) per row asked for, at least pgvector's
default 40 and at most its maximum 1000: candidates of other owners or superseded facts are
dropped after the scan, so it looks further than k."""


def _literal(value: str) -> str:
    """``value`` as an SQL string literal (quotes doubled; ``standard_conforming_strings`` is on
    by default since PostgreSQL 9.1). Used only for a scope in a partial index's predicate and
    the query that must match it, which the planner can only match against a literal."""
    return "'" + value.replace("'", "''") + "'"


def table_name(embedder_name: str) -> str:
    """The rows' table of an embedder, named as its LanceDB table (``memory_<embedder>``,
    letters, digits and ``_`` only)."""
    return "memory_" + re.sub(r"[^A-Za-z0-9]+", "_", embedder_name).strip("_").lower()


def _visible(prefix: str = "") -> str:
    """The SQL of :class:`ScopeFilter` over ``$2`` (scope), ``$3`` (owner) and ``$4``
    (include_history), for columns of the table alias ``prefix`` ("r." or "")."""
    return (f"{prefix}scope = $2 AND ({prefix}kind <> 'fact' OR ({prefix}owner = $3 "
            f"AND ($4 OR {prefix}status = 'active')))")


class PgSearchIndex:
    """A :class:`memory.ports.SearchIndex` on PostgreSQL with pgvector. Create with
    :meth:`open`."""

    def __init__(self, pool: asyncpg.Pool, names: TableNames, dim: int, *,
                 large_scope_rows: int | None = LARGE_SCOPE_ROWS,
                 write_batch_rows: int = WRITE_BATCH_ROWS,
                 lexical_budget_postings: int = LEXICAL_BUDGET_POSTINGS,
                 drop_schema: bool = False, holder: asyncpg.Connection | None = None) -> None:
        self._pool = pool
        self.lexical_budget_postings = lexical_budget_postings
        self.lexical_pruned = 0  # full-text searches answered from the rarest terms' rows
        self.write_batch_rows = write_batch_rows
        self._drop_schema = drop_schema  # a scratch schema, dropped by close()
        self._holder = holder  # the connection holding the exclusive lock, if any
        self._names = names
        self._dim = dim
        self._write_lock_key = f"memory-bot search writes {names.schema}.{names.base}"
        self.large_scope_rows = large_scope_rows
        self._large: set[str] = set()  # scopes with an HNSW index of their own
        self._large_read_at = float("-inf")  # event-loop time of the last read of that set

    @classmethod
    async def open(cls, url: str, *, embedder_name: str, dim: int, schema: str | None = None,
                   scratch: bool = False, exclusive: bool = False, pool_size: int = 4,
                   large_scope_rows: int | None = LARGE_SCOPE_ROWS,
                   write_batch_rows: int = WRITE_BATCH_ROWS,
                   lexical_budget_postings: int = LEXICAL_BUDGET_POSTINGS) -> "PgSearchIndex":
        """Connect to ``url`` (``postgresql://...``) and migrate the embedder's tables in
        ``schema`` (which must exist).

        Args:
            url: the database; its password never appears in logs or errors.
            embedder_name: the embedder whose vectors the table holds.
            dim: their length.
            schema: the schema of the tables; None: the connection's current schema (the
                first of its ``search_path`` that exists, ``public`` unless the URL sets
                ``?search_path=...``).
            scratch: instead of ``schema``, create a new schema ``scratch_<hex>`` that
                :meth:`close` drops with everything in it (evaluation runs, never the live
                tables).
            exclusive: hold a session advisory lock on the tables for as long as the index is
                open, so that a second process opening them exclusively is refused (the
                bot's index is rebuilt from its own database at start-up, and two bots with
                different databases would remove each other's rows).
            pool_size: most connections this index opens (a search uses two at once).
            large_scope_rows: rows from which :meth:`compact` gives a scope its own
                approximate index (see the module docstring); None: never.
            write_batch_rows: rows per insert statement of an upsert.
            lexical_budget_postings: postings (over the whole table) of the rarest query terms
                whose rows a full-text search scores first (see :meth:`_lexical`).

        Raises:
            StoreError: the database cannot be reached, pgvector is missing, the table holds
                vectors of another length (a changed embedder under the same name; run
                ``memory-bot reindex``), or ``exclusive`` and another process holds the tables.
        """
        pool = await open_pool(url, max_size=max(2, pool_size) + (1 if exclusive else 0))
        holder = None
        try:
            async with mapped("search index migration"), pool.acquire() as conn:
                if scratch:
                    schema = f"scratch_{uuid.uuid4().hex[:16]}"
                    await conn.execute(f"CREATE SCHEMA {ident(schema)}")
                elif schema is None:
                    schema = await conn.fetchval("SELECT current_schema()")
                    if schema is None:
                        raise StoreError("the URL's search_path names no existing schema")
                names = TableNames(schema, table_name(embedder_name))
                applied = await migrate(conn, names, dim)
                have = await conn.fetchval(
                    "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                    "WHERE attrelid = $1::regclass AND attname = 'vector'", names.rows)
            if have != f"vector({dim})":
                raise StoreError(f"index table {names.base} holds {have} but the embedder "
                                 f"gives {dim}-d vectors; run `memory-bot reindex`")
            if exclusive:
                async with mapped("search index lock"):
                    holder = await pool.acquire()
                    if not await holder.fetchval(
                            "SELECT pg_try_advisory_lock(hashtext($1))",
                            f"memory-bot search index {names.schema}.{names.base}"):
                        raise StoreError(
                            f"another memory-bot process uses the search index {names.base} "
                            f"of {redacted(url)}; stop it first")
        except BaseException:
            if holder is not None:
                await pool.release(holder)
            if scratch and schema is not None:
                await _drop(pool, schema)
            await pool.close()
            raise
        if applied:
            log.info("postgres search index migrated table=%s versions=%s url=%s", names.base,
                     ",".join(map(str, applied)), redacted(url))
        return cls(pool, names, dim, large_scope_rows=large_scope_rows,
                   write_batch_rows=write_batch_rows,
                   lexical_budget_postings=lexical_budget_postings, drop_schema=scratch,
                   holder=holder)

    # ------------------------------------------------------------------------------ writes

    async def upsert(self, items: Sequence[IndexItem]) -> None:
        """Insert or replace rows by key (the last of repeated keys wins), with the term
        statistics, in one transaction.

        Raises:
            StoreError: the write failed, or a vector is not ``dim`` long (nothing of it is
                kept).
        """
        rows = list({item.key: item for item in items}.values())
        if not rows:
            return
        wrong = next((r.key for r in rows if len(r.vector) != self._dim), None)
        if wrong is not None:
            raise StoreError(f"index row {wrong} has a vector of another length than {self._dim}")
        async with mapped("index upsert"), self._pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))",
                               self._write_lock_key)
            replaced = await replace_rows(conn, self._names, rows, self._dim,
                                          self.write_batch_rows)
        log.info("index upsert rows=%d replaced=%d", len(rows), replaced)

    async def delete(self, keys: Sequence[str]) -> None:
        """Delete rows by key (missing keys are ignored), with their term statistics.

        Raises:
            StoreError: the delete failed (nothing of it is kept).
        """
        if not keys:
            return
        async with mapped("index delete"), self._pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))",
                               self._write_lock_key)
            deleted = await delete_rows(conn, self._names, list(keys))
        log.info("index delete rows=%d", deleted)

    # ------------------------------------------------------------------------------ search

    async def search(
        self, *, vector: Sequence[float], text: str, where: ScopeFilter, limit: int
    ) -> list[IndexHit]:
        """Dense and full-text candidates merged by key (see :class:`memory.ports.SearchIndex`
        and the module docstring).

        Raises:
            StoreError: a query failed.
        """
        if limit <= 0:
            return []
        terms = index_terms(text)
        async with mapped("index search"):
            if terms:
                dense, lexical = await asyncio.gather(
                    self._dense(vector, where, limit), self._lexical(vector, terms, where, limit))
            else:
                dense, lexical = await self._dense(vector, where, limit), []
        hits: dict[str, IndexHit] = {}
        for row in dense:
            hits[row["key"]] = IndexHit(row["key"], ItemKind(row["kind"]), row["item_id"],
                                        cosine=float(row["cosine"]))
        for row in lexical:
            hits[row["key"]] = IndexHit(row["key"], ItemKind(row["kind"]), row["item_id"],
                                        cosine=float(row["cosine"]), bm25=float(row["bm25"]))
        return list(hits.values())

    async def _dense(self, vector: Sequence[float], where: ScopeFilter, limit: int):
        t = self._names
        async with self._pool.acquire() as conn:
            if where.scope in await self._large_scopes(conn):
                # the scope as a literal, so the planner can match the partial index
                ef = min(1000, max(40, HNSW_EF_SEARCH_PER_ROW * limit))
                async with conn.transaction():
                    await conn.execute(f"SET LOCAL hnsw.ef_search = {ef}")
                    rows = await conn.fetch(
                        f"SELECT key, kind, item_id, 1 - (vector <=> $1) AS cosine "
                        f"FROM {t.rows} WHERE scope = {_literal(where.scope)} AND "
                        "(kind <> 'fact' OR (owner = $2 AND ($3 OR status = 'active'))) "
                        "ORDER BY vector <=> $1 LIMIT $4",
                        vector, where.owner, where.include_history, limit)
                if len(rows) >= limit:
                    return rows
            # exact: ordered by the cosine itself, which no HNSW index can serve (it serves only
            # ``ORDER BY vector <=> const``; a custom plan for a large scope's value would
            # otherwise pick that scope's partial index and filter its candidates after it)
            return await conn.fetch(
                f"SELECT key, kind, item_id, 1 - (vector <=> $1) AS cosine FROM {t.rows} "
                f"WHERE {_visible()} ORDER BY cosine DESC, key LIMIT $5",
                vector, where.scope, where.owner, where.include_history, limit)

    async def _large_scopes(self, conn: asyncpg.Connection) -> set[str]:
        """The scopes with an index of their own, re-read every
        :data:`LARGE_SCOPES_REFRESH_S`."""
        now = asyncio.get_running_loop().time()
        if now - self._large_read_at >= LARGE_SCOPES_REFRESH_S:
            self._large = {r["scope"] for r in await conn.fetch(
                f"SELECT scope FROM {self._names.large_scopes}")}
            self._large_read_at = now
        return self._large

    async def _lexical(self, vector: Sequence[float], terms: list[str], where: ScopeFilter,
                       limit: int):
        """BM25's best ``limit`` rows of the scope for ``terms``, pruned by MaxScore (Turtle &
        Flood 1995, "Query evaluation: strategies and optimizations"): the rows holding the
        rarest terms (their postings summing to at most ``lexical_budget_postings`` over the
        table) are scored in full first; a row holding none of those terms scores less than
        the sum of the other terms' upper bounds ``weight * (K1 + 1)`` (BM25's term-frequency
        part stays under ``K1 + 1``), so when the k-th scored row reaches that sum it is the
        answer. Otherwise every row holding any term is scored. Both give exactly the same
        rows and scores."""
        t = self._names
        async with self._pool.acquire() as conn:
            totals = await conn.fetchrow(f"SELECT rows_with_terms, length FROM {t.stats}")
            rows_with = {r["term"]: r["rows"] for r in await conn.fetch(
                f"SELECT term, rows FROM {t.terms} WHERE term = ANY($1::text[])", terms)}
            if not rows_with:
                return []
            n = float(totals["rows_with_terms"])
            avgdl = totals["length"] / max(totals["rows_with_terms"], 1)
            # a repeated query term counts as often as it is repeated (as Lance sums it)
            weight = {term: repeats * math.log(1 + (n - rows_with[term] + 0.5)
                                               / (rows_with[term] + 0.5))
                      for term, repeats in Counter(terms).items() if term in rows_with}
            rarest = sorted(weight, key=lambda term: (rows_with[term], term))
            first: list[str] = []
            postings = 0
            for term in rarest:
                if first and postings + rows_with[term] > self.lexical_budget_postings:
                    break
                first.append(term)
                postings += rows_with[term]
            rest_bound = sum(weight[term] * (K1 + 1) for term in rarest[len(first):])
            args = (vector, where.scope, where.owner, where.include_history, limit,
                    list(weight), list(weight.values()), avgdl)
            if rest_bound > 0:
                rows = await conn.fetch(self._scored(candidates=True), *args, first)
                if len(rows) == limit and rows[-1]["bm25"] >= rest_bound:
                    self.lexical_pruned += 1
                    return rows
            return await conn.fetch(self._scored(candidates=False), *args)

    def _scored(self, *, candidates: bool) -> str:
        """The BM25 statement: ``$6`` terms with ``$7`` weights (repeats times idf), ``$8``
        avgdl; with ``candidates``, only rows holding one of the ``$9`` terms are scored (each
        of their terms' postings read by primary key), else every row holding any term."""
        t = self._names
        visible = "(p.kind <> 'fact' OR (p.owner = $3 AND ($4 OR p.status = 'active')))"
        bm25 = (f"sum(q.weight * {K1 + 1} * p.count / (p.count "
                f"+ {K1} * (1 - {B} + {B} * p.length / $8)))")
        if candidates:
            top = f"""cand AS (
                        SELECT DISTINCT p.key FROM {t.postings} AS p
                        WHERE p.scope = $2 AND p.term = ANY($9::text[]) AND {visible}),
                    top AS (
                        SELECT p.key, {bm25} AS bm25
                        FROM cand CROSS JOIN q
                        JOIN {t.postings} AS p
                          ON p.scope = $2 AND p.term = q.term AND p.key = cand.key
                        GROUP BY p.key ORDER BY bm25 DESC, p.key LIMIT $5)"""
        else:
            top = f"""top AS (
                        SELECT p.key, {bm25} AS bm25
                        FROM q JOIN {t.postings} AS p ON p.scope = $2 AND p.term = q.term
                        WHERE {visible}
                        GROUP BY p.key ORDER BY bm25 DESC, p.key LIMIT $5)"""
        return f"""WITH q AS (SELECT * FROM unnest($6::text[], $7::float8[]) AS q(term, weight)),
                    {top}
                SELECT r.key, r.kind, r.item_id, 1 - (r.vector <=> $1) AS cosine, top.bm25
                FROM top JOIN {t.rows} AS r ON r.key = top.key
                ORDER BY top.bm25 DESC, r.key"""

    # ------------------------------------------------------------------------------ upkeep

    async def keys(self) -> set[str]:
        """Every key in the index."""
        async with mapped("index keys"), self._pool.acquire() as conn:
            return {r["key"] for r in await conn.fetch(f"SELECT key FROM {self._names.rows}")}

    async def count(self) -> int:
        """Number of rows."""
        async with mapped("index count"), self._pool.acquire() as conn:
            return await conn.fetchval(f"SELECT count(*) FROM {self._names.rows}")

    async def compact(self) -> None:
        """``VACUUM (ANALYZE)`` the tables (space of deleted and replaced rows reused, planner
        statistics fresh), then :meth:`index_large_scopes`. Searches are exact and complete
        without it.

        Raises:
            StoreError: a statement failed.
        """
        t = self._names
        async with mapped("index vacuum"), self._pool.acquire() as conn:
            for table in (t.rows, t.postings, t.terms, t.stats):
                await conn.execute(f"VACUUM (ANALYZE) {table}")
        made = await self.index_large_scopes()
        log.info("index compacted scope_indexes_built=%d", len(made))

    async def index_large_scopes(self) -> list[str]:
        """Build an HNSW index (cosine, pgvector's defaults ``m=16``, ``ef_construction=64``)
        partial on each scope holding at least ``large_scope_rows`` rows that has none yet;
        returns those scopes. Built ``CONCURRENTLY``, so writes go on meanwhile; an index a
        failed build left invalid is dropped and built again.

        Raises:
            StoreError: a build failed.
        """
        t = self._names
        made: list[str] = []
        if self.large_scope_rows is None:
            return made
        async with mapped("scope index build"), self._pool.acquire() as conn:
            due = [r["scope"] for r in await conn.fetch(
                f"SELECT scope FROM {t.rows} GROUP BY scope HAVING count(*) >= $1 "
                f"EXCEPT SELECT scope FROM {t.large_scopes}", self.large_scope_rows)]
            for scope in sorted(due):
                name = f"{t.base}_hnsw_{hashlib.sha256(scope.encode()).hexdigest()[:16]}"
                await conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS "
                                   f"{ident(t.schema)}.{ident(name)}")
                started = asyncio.get_running_loop().time()
                await conn.execute(
                    f"CREATE INDEX CONCURRENTLY {ident(name)} ON {t.rows} "
                    f"USING hnsw (vector vector_cosine_ops) WHERE scope = {_literal(scope)}")
                rows = await conn.fetchval(f"SELECT count(*) FROM {t.rows} WHERE scope = $1",
                                           scope)
                await conn.execute(
                    f"INSERT INTO {t.large_scopes} (scope, index_name, rows_at_build) "
                    "VALUES ($1, $2, $3) ON CONFLICT (scope) DO NOTHING", scope, name, rows)
                log.info("scope index built rows=%d s=%.1f", rows,
                         asyncio.get_running_loop().time() - started)
                made.append(scope)
        self._large_read_at = float("-inf")  # read the set again at the next search
        return made

    @property
    def schema(self) -> str:
        """The schema holding the tables (a scratch schema's generated name)."""
        return self._names.schema

    async def close(self) -> None:
        """Drop a scratch schema, release the exclusive lock, close the connections."""
        try:
            if self._drop_schema:
                await _drop(self._pool, self._names.schema)
            if self._holder is not None:
                holder, self._holder = self._holder, None
                await self._pool.release(holder)  # ends its session lock with the pool
        finally:
            await self._pool.close()


async def _drop(pool: asyncpg.Pool, schema: str) -> None:
    """Drop ``schema`` and everything in it; a failure is logged (nothing else to do)."""
    try:
        async with pool.acquire() as conn:
            await conn.execute(f"DROP SCHEMA IF EXISTS {ident(schema)} CASCADE")
    except (asyncpg.PostgresError, OSError) as exc:
        log.warning("could not drop the scratch schema %s: %s", schema, exc)


__all__ = ["PgSearchIndex", "table_name"]
