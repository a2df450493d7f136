"""A SQLite store copied, table by table, into an empty PostgreSQL store (``memory-bot
migrate-to-postgres``): every row of every table with its own id, so references, scopes
(``user:3``, ``thread:7``), index keys (``fact:12``) and purge records stay valid, then the
identities moved past the copied ids.

The SQLite store must be at the latest schema version (open it once with
:class:`memory.stores.sqlite.SQLiteStore` first) and no process may write it meanwhile (the
data folder's lock). The PostgreSQL side holds version 1 of
:mod:`memory.stores.postgres.store_migrations`, the same tables and columns as SQLite's
schema 12; a SQLite column the PostgreSQL table lacks is refused rather than dropped.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from memory.errors import StoreError
from memory.stores.postgres.connection import mapped
from memory.stores.postgres.database import Database
from memory.stores.postgres.store_migrations import reset_identities

#: The store's tables in an order that inserts every referenced row before its references.
COPY_ORDER = ("users", "accounts", "threads", "sessions", "turns", "episodes", "rounds",
              "facts", "fact_candidates", "work", "prompt_records", "audit_log", "model_usage",
              "chat_settings", "seen_updates", "replies_due", "purges", "questions",
              "maintenance_runs")

#: Rows read from SQLite and written with one ``COPY`` at a time.
BATCH_ROWS = 5000


class TargetNotEmptyError(StoreError):
    """The PostgreSQL store already holds rows; a copy goes into an empty store only."""


def _converter(data_type: str) -> Callable[[object], object]:
    """A function turning a SQLite value into the Python value asyncpg writes into a column of
    ``data_type`` (``information_schema.columns.data_type``); None stays None."""
    def timestamp(v):
        value = datetime.fromisoformat(v) if isinstance(v, str) else v
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)

    kinds: dict[str, Callable[[object], object]] = {
        "timestamp with time zone": timestamp,
        "bigint": int, "integer": int, "smallint": int,
        "double precision": float, "real": float,
        "bytea": bytes,
        "text": lambda v: v if isinstance(v, str) else str(v),
    }
    convert = kinds.get(data_type, lambda v: v)
    return lambda v: None if v is None else convert(v)


async def _target_columns(db: Database) -> dict[str, list[tuple[str, str]]]:
    """Table -> its writable columns ``(name, data_type)`` in the store's schema (columns
    generated always, such as ``seen_updates.received``, are left to PostgreSQL)."""
    rows = await db.all(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND is_generated = 'NEVER' "
        "AND coalesce(identity_generation, '') <> 'ALWAYS' ORDER BY ordinal_position")
    out: dict[str, list[tuple[str, str]]] = {}
    for r in rows:
        out.setdefault(r["table_name"], []).append((r["column_name"], r["data_type"]))
    return out


async def target_rows(db: Database) -> dict[str, int]:
    """Rows in each of the store's tables (:data:`COPY_ORDER`) of the PostgreSQL store."""
    return {t: await db.value(f"SELECT count(*) FROM {t}") for t in COPY_ORDER}


async def copy_sqlite(source: Path, db: Database) -> dict[str, int]:
    """Copy every row of the SQLite store at ``source`` (``memory.db``) into the empty
    PostgreSQL store of ``db``, in one transaction (a failure writes nothing).

    Returns:
        Rows copied per table (:data:`COPY_ORDER`), equal to the rows SQLite holds.

    Raises:
        TargetNotEmptyError: a table of the PostgreSQL store holds rows (nothing is written).
        StoreError: SQLite cannot be read, holds a table or column this store has no place
            for, or a row does not fit (nothing is written).
    """
    columns = await _target_columns(db)
    try:
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {source}: {exc}") from exc
    try:
        plan = _plan(src, columns)
        copied: dict[str, int] = {}
        async with db.tx() as tx, tx._conn() as conn, mapped("copying the SQLite store"):
            # two copies started together: the second waits, then finds the store not empty
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))",
                               f"memory-bot sqlite copy {db.schema}")
            held = {t: n for t, n in (await target_rows(tx)).items() if n}
            if held:
                raise TargetNotEmptyError(
                    "the PostgreSQL database is not empty (" + ", ".join(
                        f"{t}: {n} rows" for t, n in held.items()) + "); migrate into an "
                    "empty database or schema")
            for table, names in plan:
                kinds = dict(columns[table])
                converters = [_converter(kinds[n]) for n in names]
                cursor = await asyncio.to_thread(
                    src.execute, f"SELECT {', '.join(names)} FROM {table} ORDER BY rowid")
                copied[table] = 0
                while batch := await asyncio.to_thread(cursor.fetchmany, BATCH_ROWS):
                    records = [tuple(c(v) for c, v in zip(converters, row)) for row in batch]
                    await conn.copy_records_to_table(table, records=records, columns=names,
                                                     schema_name=db.schema)
                    copied[table] += len(records)
            await reset_identities(conn)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read {source}: {exc}") from exc
    except (ValueError, TypeError) as exc:  # a value the column's type cannot hold
        raise StoreError(f"a row of {source} does not fit its PostgreSQL column: {exc}") from exc
    finally:
        src.close()
    return copied


def _plan(src: sqlite3.Connection, target: dict[str, list[tuple[str, str]]]
          ) -> list[tuple[str, list[str]]]:
    """The tables to copy with the SQLite columns of each, in :data:`COPY_ORDER`.

    Raises:
        StoreError: SQLite holds a table outside :data:`COPY_ORDER`, or a column its
            PostgreSQL table lacks (it would be lost).
    """
    tables = {r[0] for r in src.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    unknown = sorted(tables - set(COPY_ORDER))
    if unknown:
        raise StoreError("the SQLite store has tables this PostgreSQL store has no place for: "
                         + ", ".join(unknown) + " (a newer version's store?)")
    plan = []
    for table in COPY_ORDER:
        if table not in tables:
            continue
        names = [r[1] for r in src.execute(f"PRAGMA table_info({table})")]
        writable = {n for n, _ in target.get(table, [])}
        lost = [n for n in names if n not in writable]
        if lost:
            raise StoreError(f"the SQLite table {table} has columns this PostgreSQL store has "
                             f"no place for: {', '.join(lost)} (a newer version's store?)")
        plan.append((table, names))
    return plan
