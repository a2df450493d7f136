"""The writes of the PostgreSQL search index (:class:`memory.stores.postgres.search.PgSearchIndex`):
rows replaced by key with their postings, and the term statistics and totals kept in step.

Each function runs inside the caller's transaction, which holds the index's write lock (a
transaction-level advisory lock per table, see the search module's docstring), so the
statistics stay exact. The terms are :func:`memory.stores.postgres.terms.index_terms`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import asyncpg
import numpy as np

from memory.stores.postgres.migrations import TableNames
from memory.stores.postgres.terms import index_terms
from memory.types import IndexItem

POSTINGS_PER_ROW = 16
"""About how many distinct terms a row has: postings per insert statement are this many times
the rows per statement."""


async def replace_rows(conn: asyncpg.Connection, names: TableNames, rows: Sequence[IndexItem],
                       dim: int, batch_rows: int) -> int:
    """Delete the rows of ``rows``' keys with their postings, insert ``rows`` (distinct keys,
    vectors ``dim`` long, as the caller checked) in statements of ``batch_rows`` rows, and
    update the term statistics; returns how many rows were replaced.

    Raises:
        asyncpg.PostgresError: a statement failed (the caller's transaction rolls back).
    """
    keys = [r.key for r in rows]
    replaced = await conn.fetchval(
        f"WITH gone AS (DELETE FROM {names.rows} WHERE key = ANY($1::text[]) RETURNING 1) "
        "SELECT count(*) FROM gone", keys)
    term_rows, old_rows, length = await _drop_postings(conn, names, keys)
    columns: dict[str, list] = {name: [] for name in (
        "key", "kind", "item_id", "owner", "scope", "status", "text", "search_text",
        "created_at")}
    postings: dict[str, list] = {name: [] for name in (
        "scope", "term", "key", "kind", "owner", "status", "count", "length")}
    new_rows = 0
    for item in rows:
        counts = Counter(index_terms(item.search_text))
        n = sum(counts.values())
        term_rows.update(counts.keys())
        new_rows += 1 if n else 0
        length += n
        for name in columns:
            value = getattr(item, name)
            columns[name].append(value.value if name == "kind" else value)
        for term, count in counts.items():
            for name, value in (("scope", item.scope), ("term", term), ("key", item.key),
                                ("kind", item.kind.value), ("owner", item.owner),
                                ("status", item.status),
                                ("count", count), ("length", n)):
                postings[name].append(value)
    flat = np.asarray([r.vector for r in rows], dtype=np.float32).reshape(-1)
    for start in range(0, len(rows), batch_rows):
        end = start + batch_rows
        part = {k: v[start:end] for k, v in columns.items()}
        # the vectors travel as one flat float4 array, row n's at [(n-1)*dim+1, n*dim]
        await conn.execute(
            f"INSERT INTO {names.rows} (key, kind, item_id, owner, scope, status, text, "
            "search_text, vector, created_at) "
            "SELECT k, kd, i, o, s, st, tx, se, "
            "($9::float4[])[(n - 1) * $11 + 1 : n * $11]::vector, c FROM unnest("
            "$1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], "
            "$7::text[], $8::text[], $10::timestamptz[]) "
            "WITH ORDINALITY AS u(k, kd, i, o, s, st, tx, se, c, n)",
            part["key"], part["kind"], part["item_id"], part["owner"], part["scope"],
            part["status"], part["text"], part["search_text"],
            flat[start * dim:end * dim], part["created_at"], dim)
    step = batch_rows * POSTINGS_PER_ROW
    for start in range(0, len(postings["key"]), step):
        part = {k: v[start:start + step] for k, v in postings.items()}
        await conn.execute(
            f"INSERT INTO {names.postings} (scope, term, key, kind, owner, status, count, "
            "length) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], "
            "$4::text[], $5::text[], $6::text[], $7::int[], $8::int[])",
            *part.values())
    await _count(conn, names, term_rows, new_rows - old_rows, length)
    return replaced


async def delete_rows(conn: asyncpg.Connection, names: TableNames, keys: list[str]) -> int:
    """Delete the rows of ``keys`` (missing keys are ignored) with their postings and term
    statistics; returns how many rows were deleted.

    Raises:
        asyncpg.PostgresError: a statement failed (the caller's transaction rolls back).
    """
    deleted = await conn.fetchval(
        f"WITH gone AS (DELETE FROM {names.rows} WHERE key = ANY($1::text[]) RETURNING 1) "
        "SELECT count(*) FROM gone", keys)
    term_rows, old_rows, length = await _drop_postings(conn, names, keys)
    await _count(conn, names, term_rows, -old_rows, length)
    return deleted


async def _drop_postings(conn: asyncpg.Connection, names: TableNames, keys: list[str]
                         ) -> tuple[Counter[str], int, int]:
    """Delete the postings of ``keys``; returns what that takes off the statistics: per
    term the rows that held it (negative counts), the rows that had terms, and minus their
    summed length."""
    gone = await conn.fetch(
        f"DELETE FROM {names.postings} WHERE key = ANY($1::text[]) "
        "RETURNING key, term, length", keys)
    term_rows: Counter[str] = Counter()
    lengths: dict[str, int] = {}
    for row in gone:
        term_rows[row["term"]] -= 1
        lengths[row["key"]] = row["length"]
    return term_rows, len(lengths), -sum(lengths.values())


async def _count(conn: asyncpg.Connection, names: TableNames, term_rows: Counter[str],
                 rows: int, length: int) -> None:
    """Apply changes to the term statistics and the totals: ``term_rows`` rows holding
    each term, ``rows`` rows with at least one term, ``length`` terms in all."""
    changed = sorted((term, n) for term, n in term_rows.items() if n)
    if changed:
        await conn.execute(
            f"INSERT INTO {names.terms} AS d (term, rows) "
            "SELECT * FROM unnest($1::text[], $2::bigint[]) "
            "ON CONFLICT (term) DO UPDATE SET rows = d.rows + excluded.rows",
            [c[0] for c in changed], [c[1] for c in changed])
        gone = [term for term, n in changed if n < 0]
        if gone:
            await conn.execute(f"DELETE FROM {names.terms} WHERE term = ANY($1::text[]) "
                               "AND rows <= 0", gone)
    if rows or length:
        await conn.execute(f"UPDATE {names.stats} SET rows_with_terms = rows_with_terms + $1, "
                           "length = length + $2", rows, length)
