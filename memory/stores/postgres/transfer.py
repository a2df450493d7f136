"""A user's export and import in PostgreSQL (part of :class:`memory.ports.PrivacyStore`): every
row about one user as column dicts (timestamps as UTC ISO text, the export document's form),
and those rows loaded as a new user with fresh ids and every reference mapped. The rules are
the SQLite store's (:mod:`memory.stores.sqlite.transfer`); values are turned into the column
types of this schema by :func:`typed` (ISO text into ``timestamptz``)."""

from __future__ import annotations

import json
import logging
from datetime import datetime

from memory.errors import StoreError
from memory.stores.postgres.database import Database
from memory.stores.postgres.rows import by_ids, dt
from memory.types import Scope

log = logging.getLogger("memory.stores.postgres")


async def user_rows(db: Database, user_id: int) -> dict[str, list[dict]]:
    """Every stored row about one user, as plain dicts of column values (export): ``users``
    and ``accounts`` (the user's), ``facts`` (every status), ``threads`` (the user's private
    threads, the groups they spoke in, facts' origins), ``turns`` (both sides of their private
    threads, their own turns in groups), ``sessions`` (those the turns and episodes belong
    to), ``episodes`` and ``rounds`` of their private scope."""
    scope = str(Scope.private(user_id))
    out: dict[str, list[dict]] = {}
    out["users"] = await db.all("SELECT * FROM users WHERE id = $1", (user_id,))
    out["accounts"] = await db.all("SELECT platform, platform_user_id FROM accounts "
                                   "WHERE user_id = $1 ORDER BY platform", (user_id,))
    out["facts"] = await db.all("SELECT * FROM facts WHERE user_id = $1 ORDER BY id",
                                (user_id,))
    private = [r["id"] for r in await db.all(
        "SELECT DISTINCT t.id FROM threads t JOIN turns u ON u.thread_id = t.id "
        "WHERE t.chat_kind = 'private' AND u.user_id = $1 UNION SELECT thread_id FROM "
        "episodes WHERE scope = $2", (user_id, scope))]
    out["turns"] = await db.all(
        "SELECT * FROM turns WHERE thread_id = ANY($1::bigint[]) OR user_id = $2 ORDER BY id",
        (private, user_id))
    out["episodes"] = await db.all("SELECT * FROM episodes WHERE scope = $1 ORDER BY id",
                                   (scope,))
    out["rounds"] = await db.all("SELECT * FROM rounds WHERE scope = $1 ORDER BY id", (scope,))
    session_ids = {r["session_id"] for k in ("turns", "episodes", "rounds") for r in out[k]}
    out["sessions"] = await by_ids(db, "sessions", session_ids, dict)
    thread_ids = (set(private) | {r["thread_id"] for r in out["turns"]}
                  | {r["origin_thread_id"] for r in out["facts"]})
    out["threads"] = await by_ids(db, "threads", thread_ids, dict)
    return out


async def column_types(db: Database) -> dict[str, dict[str, str]]:
    """The store's tables in the current schema: table -> column -> its SQL type name
    (``information_schema.columns.data_type``)."""
    rows = await db.all(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema()")
    out: dict[str, dict[str, str]] = {}
    for r in rows:
        out.setdefault(r["table_name"], {})[r["column_name"]] = r["data_type"]
    return out


def typed(types: dict[str, str], row: dict) -> dict:
    """The values of ``row`` that are columns of a table (``types``: column -> type), in that
    column's type: ISO text into aware datetimes for ``timestamp with time zone``, booleans
    into 0/1 for integers; unknown columns dropped (a document of another version)."""
    out = {}
    for name, value in row.items():
        kind = types.get(name)
        if kind is None:
            continue
        if kind == "timestamp with time zone" and isinstance(value, str):
            value = dt(value)
        elif kind in ("integer", "bigint") and isinstance(value, bool):
            value = int(value)
        out[name] = value
    return out


async def insert_row(tx: Database, types: dict[str, dict[str, str]], table: str, row: dict,
                     *, keep_id: bool = False) -> int | None:
    """Insert one column dict into ``table`` (its ``id`` dropped unless ``keep_id``); the new
    row's id (None for tables without one)."""
    values = typed(types[table], row)
    if not keep_id:
        values.pop("id", None)
    names = list(values)
    marks = ", ".join(f"${i}" for i in range(1, len(names) + 1))
    sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})"
    if "id" in types[table]:
        return await tx.value(sql + " RETURNING id", list(values.values()))
    await tx.execute(sql, list(values.values()))
    return None


async def load_user_rows(db: Database, rows: dict[str, list[dict]], now: datetime) -> int:
    """Insert the rows of :func:`user_rows` (from another store) as a new user, in one
    transaction, with fresh ids; references (thread, session, turn ids, scopes) are mapped.
    Threads are matched by key; open sessions are stored closed (reason ``import``).

    Returns:
        The new user's id.

    Raises:
        StoreError: one of the accounts already belongs to a user here, or one of the
            document's private chats is another user's chat here (nothing is written).
    """
    types = await column_types(db)
    (old_user,) = rows["users"]

    def remap_ids(value: str, mapping: dict[int, int]) -> str:
        return json.dumps([mapping[i] for i in json.loads(value) if i in mapping])

    async with db.tx() as tx:
        for acc in rows["accounts"]:
            await tx.lock(f"memory-bot account {acc['platform']}:{acc['platform_user_id']}")
            if await tx.one("SELECT 1 FROM accounts WHERE platform = $1 AND "
                            "platform_user_id = $2",
                            (acc["platform"], acc["platform_user_id"])) is not None:
                raise StoreError(f"account {acc['platform']}:{acc['platform_user_id']} exists")
        uid = await insert_row(tx, types, "users", old_user)
        for acc in rows["accounts"]:
            await tx.execute("INSERT INTO accounts (platform, platform_user_id, user_id) "
                             "VALUES ($1, $2, $3)", (acc["platform"], acc["platform_user_id"], uid))
        threads: dict[int, int] = {}
        for t in rows["threads"]:
            key = (t["platform"], t["chat_id"], t["topic_id"])
            await tx.execute(
                "INSERT INTO threads (platform, chat_id, topic_id, chat_kind, title, created_at) "
                "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (platform, chat_id, topic_id) DO "
                "NOTHING", (*key, t["chat_kind"], t["title"], dt(t["created_at"])))
            threads[t["id"]] = await tx.value(
                "SELECT id FROM threads WHERE platform = $1 AND chat_id = $2 AND topic_id = $3",
                key)
            if t["chat_kind"] == "private":  # a private chat here is someone else's
                if await tx.one(
                        "SELECT 1 FROM turns WHERE thread_id = $1 AND user_id IS NOT NULL LIMIT 1",
                        (threads[t["id"]],)) is not None:
                    raise StoreError(f"the private chat {t['platform']}:{t['chat_id']} belongs "
                                     "to another user here")

        def scope(value: str) -> str:
            return Scope.imported(value, old_user_id=old_user["id"], new_user_id=uid,
                                  threads=threads)

        sessions: dict[int, int] = {}
        for s in rows["sessions"]:
            s = {**s, "thread_id": threads[s["thread_id"]]}
            if s.get("closed_at") is None:
                s.update(closed_at=now, close_reason="import")
            sessions[s["id"]] = await insert_row(tx, types, "sessions", s)
        turns: dict[int, int] = {}
        for t in rows["turns"]:
            user = uid if t.get("user_id") == old_user["id"] else None
            turns[t["id"]] = await insert_row(tx, types, "turns", {
                **t, "thread_id": threads[t["thread_id"]],
                "session_id": sessions[t["session_id"]], "user_id": user})
        for table in ("episodes", "rounds"):
            for r in rows[table]:
                await insert_row(tx, types, table, {
                    **r, "thread_id": threads[r["thread_id"]],
                    "session_id": sessions[r["session_id"]], "scope": scope(r["scope"]),
                    "turn_ids": remap_ids(r["turn_ids"], turns)})
        for f in rows["facts"]:
            await insert_row(tx, types, "facts", {
                **f, "user_id": uid, "origin_thread_id": threads[f["origin_thread_id"]],
                "scope": scope(f["scope"]),
                "source_turn_ids": remap_ids(f["source_turn_ids"], turns)})
        await tx.execute(
            "INSERT INTO audit_log (at, user_id, action, count) VALUES ($1, $2, 'import', $3)",
            (now, uid, len(rows["facts"]) + len(rows["episodes"])))
    log.info("user imported id=%s facts=%d episodes=%d turns=%d", uid, len(rows["facts"]),
             len(rows["episodes"]), len(rows["turns"]))
    return uid


async def delete_user(db: Database, user_id: int, now: datetime) -> None:
    """Remove a user row and its accounts (after ``forget_all``; ``import --replace``). The
    audit log keeps that it happened, not what."""
    async with db.tx() as tx:
        await tx.execute("DELETE FROM accounts WHERE user_id = $1", (user_id,))
        await tx.execute("UPDATE turns SET user_id = NULL WHERE user_id = $1", (user_id,))
        await tx.execute("DELETE FROM users WHERE id = $1", (user_id,))
        await tx.execute(
            "INSERT INTO audit_log (at, user_id, action, count) VALUES ($1, $2, 'delete_user', 1)",
            (now, user_id))
