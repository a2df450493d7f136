"""The search index on PostgreSQL: pgvector for the dense half, stored terms for full-text.

One table of rows per embedder (``memory_<embedder>``, the name LanceDB's table has), migrated
by :mod:`memory.stores.postgres.migrations`. A search runs two statements at once, each filtered
by the scope inside the query (:class:`memory.ports.ScopeFilter`):

* dense: ``ORDER BY vector <=> query LIMIT k`` over the rows of the scope, an exact scan
  through the B-tree index on ``scope``. No approximate (HNSW/IVFFlat) index covers the table:
  pgvector 0.6 filters an approximate scan's candidates after the scan (no iterative index
  scans before 0.8), so a scope filter over a shared approximate index can return fewer than
  k rows (pgvector's README, "Filtering"). ``cosine = 1 - (vector <=> query)``;
* lexical: rows whose terms match any query term (``@@`` through the GIN index on ``terms``),
  scored by BM25 in SQL over the statistics the writes keep (``memory/stores/postgres/terms.py``
  defines the terms and the formula; the numbers equal LanceDB's for the same rows), best
  ``limit`` returned, each with its cosine too.

Writes replace rows by key and update the term statistics and totals in the same transaction,
under a transaction-level advisory lock per table: index writes from all processes on the
database are serialised (a write of a few rows takes milliseconds), which keeps the statistics
exact and rules out deadlocks between writers touching the same terms.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Sequence

import asyncpg
import numpy as np

from memory.errors import StoreError
from memory.ports import ScopeFilter
from memory.stores.postgres.connection import mapped, open_pool, redacted
from memory.stores.postgres.migrations import TableNames, migrate
from memory.stores.postgres.terms import B, K1, index_terms, tsquery_literal, tsvector_literal
from memory.types import IndexHit, IndexItem, ItemKind

log = logging.getLogger(__name__)

WRITE_BATCH_ROWS = 1000
"""Rows per insert statement of one upsert (each statement carries its rows as arrays)."""


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

    def __init__(self, pool: asyncpg.Pool, names: TableNames, dim: int) -> None:
        self._pool = pool
        self._names = names
        self._dim = dim
        self._write_lock_key = f"memory-bot search writes {names.schema}.{names.base}"

    @classmethod
    async def open(cls, url: str, *, embedder_name: str, dim: int, schema: str = "public",
                   pool_size: int = 4) -> "PgSearchIndex":
        """Connect to ``url`` (``postgresql://...``) and migrate the embedder's tables in
        ``schema`` (which must exist).

        Args:
            url: the database; its password never appears in logs or errors.
            embedder_name: the embedder whose vectors the table holds.
            dim: their length.
            schema: the schema of the tables.
            pool_size: most connections this index opens (a search uses two at once).

        Raises:
            StoreError: the database cannot be reached, pgvector is missing, or the table holds
                vectors of another length (a changed embedder under the same name; run
                ``memory-bot reindex``).
        """
        pool = await open_pool(url, max_size=max(2, pool_size))
        names = TableNames(schema, table_name(embedder_name))
        try:
            async with mapped("search index migration"), pool.acquire() as conn:
                applied = await migrate(conn, names, dim)
                have = await conn.fetchval(
                    "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                    "WHERE attrelid = $1::regclass AND attname = 'vector'", names.rows)
        except BaseException:
            await pool.close()
            raise
        if have != f"vector({dim})":
            await pool.close()
            raise StoreError(f"index table {names.base} holds {have} but the embedder gives "
                             f"{dim}-d vectors; run `memory-bot reindex`")
        if applied:
            log.info("postgres search index migrated table=%s versions=%s url=%s", names.base,
                     ",".join(map(str, applied)), redacted(url))
        return cls(pool, names, dim)

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
        t = self._names
        async with mapped("index upsert"), self._pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))",
                               self._write_lock_key)
            old = await conn.fetch(
                f"DELETE FROM {t.rows} WHERE key = ANY($1::text[]) "
                "RETURNING tsvector_to_array(terms) AS terms, length", [r.key for r in rows])
            term_rows: Counter[str] = Counter()
            for row in old:
                term_rows.subtract(row["terms"])
            length = -sum(row["length"] for row in old)
            columns: dict[str, list] = {name: [] for name in (
                "key", "kind", "item_id", "owner", "scope", "status", "text", "search_text",
                "terms", "length", "vector", "created_at")}
            for item in rows:
                terms = index_terms(item.search_text)
                literal, n = tsvector_literal(terms)
                term_rows.update(set(terms))
                length += n
                for name, value in (
                        ("key", item.key), ("kind", item.kind.value), ("item_id", item.item_id),
                        ("owner", item.owner), ("scope", item.scope), ("status", item.status),
                        ("text", item.text), ("search_text", item.search_text),
                        ("terms", literal), ("length", n), ("vector", item.vector),
                        ("created_at", item.created_at)):
                    columns[name].append(value)
            for start in range(0, len(rows), WRITE_BATCH_ROWS):
                part = {k: v[start:start + WRITE_BATCH_ROWS] for k, v in columns.items()}
                # the vectors travel as one flat float4 array, row i's at [i*dim+1, (i+1)*dim]
                flat = np.asarray(part["vector"], dtype=np.float32).reshape(-1)
                await conn.execute(
                    f"INSERT INTO {t.rows} (key, kind, item_id, owner, scope, status, text, "
                    "search_text, terms, length, vector, created_at) "
                    "SELECT k, kd, i, o, s, st, tx, se, te::tsvector, l, "
                    "($11::float4[])[(n - 1) * $13 + 1 : n * $13]::vector, c FROM unnest("
                    "$1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], "
                    "$7::text[], $8::text[], $9::text[], $10::int[], $12::timestamptz[]) "
                    "WITH ORDINALITY AS u(k, kd, i, o, s, st, tx, se, te, l, c, n)",
                    part["key"], part["kind"], part["item_id"], part["owner"], part["scope"],
                    part["status"], part["text"], part["search_text"], part["terms"],
                    part["length"], flat, part["created_at"], self._dim)
            await self._count(conn, term_rows, sum(1 for n in columns["length"] if n)
                              - sum(1 for row in old if row["length"]), length)
        log.info("index upsert rows=%d replaced=%d", len(rows), len(old))

    async def _count(self, conn: asyncpg.Connection, term_rows: Counter[str], rows: int,
                     length: int) -> None:
        """Apply changes to the term statistics and the totals: ``term_rows`` rows holding
        each term, ``rows`` rows with at least one term, ``length`` terms in all (the caller
        holds the write lock inside its transaction)."""
        t = self._names
        changed = sorted((term, n) for term, n in term_rows.items() if n)
        if changed:
            await conn.execute(
                f"INSERT INTO {t.terms} AS d (term, rows) "
                "SELECT * FROM unnest($1::text[], $2::bigint[]) "
                "ON CONFLICT (term) DO UPDATE SET rows = d.rows + excluded.rows",
                [c[0] for c in changed], [c[1] for c in changed])
            gone = [term for term, n in changed if n < 0]
            if gone:
                await conn.execute(f"DELETE FROM {t.terms} WHERE term = ANY($1::text[]) "
                                   "AND rows <= 0", gone)
        if rows or length:
            await conn.execute(f"UPDATE {t.stats} SET rows_with_terms = rows_with_terms + $1, "
                               "length = length + $2", rows, length)

    async def delete(self, keys: Sequence[str]) -> None:
        """Delete rows by key (missing keys are ignored), with their term statistics.

        Raises:
            StoreError: the delete failed (nothing of it is kept).
        """
        if not keys:
            return
        t = self._names
        async with mapped("index delete"), self._pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))",
                               self._write_lock_key)
            old = await conn.fetch(
                f"DELETE FROM {t.rows} WHERE key = ANY($1::text[]) "
                "RETURNING tsvector_to_array(terms) AS terms, length", list(keys))
            term_rows: Counter[str] = Counter()
            for row in old:
                term_rows.subtract(row["terms"])
            await self._count(conn, term_rows, -sum(1 for r in old if r["length"]),
                              -sum(r["length"] for r in old))
        log.info("index delete rows=%d", len(old))

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
            return await conn.fetch(
                f"SELECT key, kind, item_id, 1 - (vector <=> $1) AS cosine FROM {t.rows} "
                f"WHERE {_visible()} ORDER BY vector <=> $1 LIMIT $5",
                vector, where.scope, where.owner, where.include_history, limit)

    async def _lexical(self, vector: Sequence[float], terms: list[str], where: ScopeFilter,
                       limit: int):
        t = self._names
        # q: each query term (repeats kept, as BM25 sums over the query's terms) with its idf
        # over the whole table; the lateral sum is BM25's per-row sum over the matched terms.
        async with self._pool.acquire() as conn:
            return await conn.fetch(
                f"""WITH totals AS (
                        SELECT rows_with_terms::float8 AS n,
                               length::float8 / greatest(rows_with_terms, 1) AS avgdl
                        FROM {t.stats}),
                    q AS (
                        SELECT w.term, ln(1 + (totals.n - d.rows + 0.5) / (d.rows + 0.5)) AS idf
                        FROM unnest($6::text[]) AS w(term)
                        JOIN {t.terms} AS d ON d.term = w.term CROSS JOIN totals)
                SELECT r.key, r.kind, r.item_id, 1 - (r.vector <=> $1) AS cosine, s.bm25
                FROM {t.rows} AS r CROSS JOIN totals
                CROSS JOIN LATERAL (
                    SELECT sum(q.idf * {K1 + 1} * cardinality(u.positions)
                               / (cardinality(u.positions)
                                  + {K1} * (1 - {B} + {B} * r.length / totals.avgdl))) AS bm25
                    FROM unnest(r.terms) AS u JOIN q ON q.term = u.lexeme) AS s
                WHERE {_visible("r.")}
                  AND r.terms @@ $7::tsquery
                ORDER BY s.bm25 DESC, r.key LIMIT $5""",
                vector, where.scope, where.owner, where.include_history, limit, terms,
                tsquery_literal(terms))

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
        """``VACUUM (ANALYZE)`` the tables: space of deleted and replaced rows reused, planner
        statistics fresh. Searches are exact and complete without it."""
        t = self._names
        async with mapped("index vacuum"), self._pool.acquire() as conn:
            for table in (t.rows, t.terms, t.stats):
                await conn.execute(f"VACUUM (ANALYZE) {table}")
        log.info("index compacted")

    async def close(self) -> None:
        """Close the connections."""
        await self._pool.close()


__all__ = ["PgSearchIndex", "table_name"]
