"""The PostgreSQL store's shared reads and writes: rows by id, deletes by id, audit entries,
and the column form of the records (:mod:`memory.stores.columns`). Id lists travel as one
``bigint[]`` parameter (``= ANY($1)``), so no statement has an engine limit on ids."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from memory.stores.columns import (
    dt,
    episode_of,
    fact_of,
    id_list,
    round_of,
    session_of,
    thread_of,
    ts,
    turn_of,
    user_of,
)
from memory.stores.postgres.database import Database
from memory.types import Turn

__all__ = ["audit", "by_ids", "delete_ids", "dt", "episode_of", "fact_of", "id_list",
           "round_of", "session_of", "thread_of", "ts", "turn_of", "turns_by_ids", "user_of"]


async def by_ids(db: Database, table: str, wanted: Iterable[int],
                 build: Callable[[dict], object]) -> list:
    """Rows of ``table`` by id (any number; missing ids skipped), in id order, built with
    ``build``."""
    ids = sorted(set(wanted))
    if not ids:
        return []
    rows = await db.all(f"SELECT * FROM {table} WHERE id = ANY($1::bigint[]) ORDER BY id",
                        (ids,))
    return [build(r) for r in rows]


async def turns_by_ids(db: Database, turn_ids: Iterable[int]) -> list[Turn]:
    """Turns by id (missing ids skipped), oldest first."""
    return await by_ids(db, "turns", turn_ids, turn_of)


async def delete_ids(db: Database, table: str, wanted: Sequence[int]) -> None:
    """Delete rows of ``table`` by id inside the caller's transaction."""
    if wanted:
        await db.execute(f"DELETE FROM {table} WHERE id = ANY($1::bigint[])", (list(wanted),))


async def audit(db: Database, now: datetime, user_id: int | None, action: str,
                count: int) -> None:
    """One audit-log entry (what happened and how many, never what), inside the caller's
    transaction."""
    await db.execute("INSERT INTO audit_log (at, user_id, action, count) VALUES ($1,$2,$3,$4)",
                     (now, user_id, action, count))
