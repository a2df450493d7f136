"""The SQLite store's shared reads and writes: by id in chunks, deletes by id, audit entries,
and the column form of the records (:mod:`memory.stores.columns`)."""

from __future__ import annotations

import sqlite3
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
from memory.stores.sqlite.connection import Database
from memory.types import Turn

__all__ = ["CHUNK", "audit", "by_ids", "delete_ids", "dt", "episode_of", "fact_of", "id_list",
           "marks", "round_of", "session_of", "thread_of", "ts", "turn_of", "turns_by_ids",
           "user_of"]

#: Ids bound in one ``IN (...)`` list: far below every SQLite build's limit on bound variables
#: (999 before 3.32).
CHUNK = 500


def marks(values: Sequence) -> str:
    """``?,?,?`` for ``values``."""
    return ",".join("?" * len(values))


async def by_ids(db: Database, table: str, wanted: Iterable[int],
                 build: Callable[[sqlite3.Row], object]) -> list:
    """Rows of ``table`` by id (any number, :data:`CHUNK` per query), built with ``build``."""
    wanted = list(wanted)
    out = []
    for start in range(0, len(wanted), CHUNK):
        chunk = wanted[start:start + CHUNK]
        rows = await db.all(f"SELECT * FROM {table} WHERE id IN ({marks(chunk)})", chunk)
        out.extend(build(r) for r in rows)
    return out


async def turns_by_ids(db: Database, turn_ids: Iterable[int]) -> list[Turn]:
    """Turns by id (missing ids skipped), oldest first."""
    turns = await by_ids(db, "turns", sorted(set(turn_ids)), turn_of)
    return sorted(turns, key=lambda t: t.id)


async def delete_ids(db: Database, table: str, wanted: Sequence[int]) -> None:
    """Delete rows of ``table`` by id inside the caller's transaction (:data:`CHUNK` per
    statement)."""
    for start in range(0, len(wanted), CHUNK):
        chunk = list(wanted[start:start + CHUNK])
        await db.execute(f"DELETE FROM {table} WHERE id IN ({marks(chunk)})", chunk)


async def audit(db: Database, now: datetime, user_id: int | None, action: str,
                count: int) -> None:
    """One audit-log entry (what happened and how many, never what), inside the caller's
    transaction."""
    await db.execute("INSERT INTO audit_log (at, user_id, action, count) VALUES (?, ?, ?, ?)",
                     (ts(now), user_id, action, count))
