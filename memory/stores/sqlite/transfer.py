"""A user's export and import in SQLite (part of :class:`memory.ports.PrivacyStore`): every row
about one user as column dicts, and those rows loaded into another store as a new user with
fresh ids and every reference mapped."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime

from memory.errors import StoreError
from memory.stores.sqlite.connection import Database
from memory.stores.sqlite.rows import by_ids, ts
from memory.types import Scope

log = logging.getLogger("memory.stores.sqlite")


async def user_rows(db: Database, user_id: int) -> dict[str, list[dict]]:
    """Every stored row about one user, as plain dicts of column values (export).

    Returns ``users`` and ``accounts`` (the user's), ``facts`` (every status),
    ``threads`` (the user's private threads, the groups they spoke in, facts' origins),
    ``turns`` (both sides of their private threads, their own turns in groups),
    ``sessions`` (those the turns and episodes belong to), ``episodes`` and ``rounds`` of
    their private scope. Group episodes and rounds belong to the group and are not included.
    """
    scope = str(Scope.private(user_id))
    out: dict[str, list[dict]] = {}

    async def rows(sql: str, args: Sequence = ()) -> list[dict]:
        return [dict(r) for r in await db.all(sql, args)]

    out["users"] = await rows("SELECT * FROM users WHERE id = ?", (user_id,))
    out["accounts"] = await rows("SELECT platform, platform_user_id FROM accounts "
                                 "WHERE user_id = ? ORDER BY platform", (user_id,))
    out["facts"] = await rows("SELECT * FROM facts WHERE user_id = ? ORDER BY id", (user_id,))
    private = [r["id"] for r in await db.all(
        "SELECT DISTINCT t.id FROM threads t JOIN turns u ON u.thread_id = t.id "
        "WHERE t.chat_kind = 'private' AND u.user_id = ? UNION SELECT thread_id FROM "
        "episodes WHERE scope = ?", (user_id, scope))]
    marks = ",".join("?" * len(private)) or "NULL"
    out["turns"] = await rows(
        f"SELECT * FROM turns WHERE thread_id IN ({marks}) OR user_id = ? ORDER BY id",
        (*private, user_id))
    out["episodes"] = await rows("SELECT * FROM episodes WHERE scope = ? ORDER BY id",
                                 (scope,))
    out["rounds"] = await rows("SELECT * FROM rounds WHERE scope = ? ORDER BY id", (scope,))
    session_ids = sorted({r["session_id"] for k in ("turns", "episodes", "rounds")
                          for r in out[k]})
    out["sessions"] = [dict(r) for r in await by_ids(db, "sessions", session_ids,
                                                           lambda r: r)]
    thread_ids = sorted(set(private) | {r["thread_id"] for r in out["turns"]}
                        | {r["origin_thread_id"] for r in out["facts"]})
    out["threads"] = [dict(r) for r in await by_ids(db, "threads", thread_ids, lambda r: r)]
    return out


async def _columns(db: Database, table: str) -> list[str]:
    return [r["name"] for r in await db.all(f"PRAGMA table_info({table})")]


async def load_user_rows(db: Database, rows: dict[str, list[dict]], now: datetime) -> int:
    """Insert the rows of :meth:`user_rows` (from another database) as a new user, in one
    transaction, with fresh ids; references (thread, session, turn ids, scopes) are mapped.
    Threads are matched by key; open sessions are stored closed (reason ``import``).

    Returns:
        The new user's id.

    Raises:
        StoreError: one of the accounts already belongs to a user here, or one of the
            document's private chats is another user's chat here (nothing is written).
    """
    for acc in rows["accounts"]:
        if await db.one("SELECT 1 FROM accounts WHERE platform = ? AND platform_user_id = ?",
                        (acc["platform"], acc["platform_user_id"])) is not None:
            raise StoreError(f"account {acc['platform']}:{acc['platform_user_id']} exists")
    cols = {t: set(await _columns(db, t)) for t in
            ("users", "threads", "sessions", "turns", "episodes", "rounds", "facts")}
    (old_user,) = rows["users"]

    async def insert(tx, table: str, row: dict) -> int:
        keep = {k: v for k, v in row.items() if k in cols[table] and k != "id"}
        cur = await tx.execute(
            f"INSERT INTO {table} ({', '.join(keep)}) VALUES ({', '.join('?' * len(keep))})",
            list(keep.values()))
        return cur.lastrowid

    def remap_ids(value: str, mapping: dict[int, int]) -> str:
        return json.dumps([mapping[i] for i in json.loads(value) if i in mapping])

    async with db.tx() as tx:
        uid = await insert(tx, "users", old_user)
        for acc in rows["accounts"]:
            await tx.execute("INSERT INTO accounts (platform, platform_user_id, user_id) "
                             "VALUES (?, ?, ?)", (acc["platform"], acc["platform_user_id"], uid))
        threads: dict[int, int] = {}
        for t in rows["threads"]:
            await tx.execute(
                "INSERT OR IGNORE INTO threads (platform, chat_id, topic_id, chat_kind, title, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (t["platform"], t["chat_id"], t["topic_id"], t["chat_kind"], t["title"],
                 t["created_at"]))
            threads[t["id"]] = (await tx.one(
                "SELECT id FROM threads WHERE platform = ? AND chat_id = ? AND topic_id = ?",
                (t["platform"], t["chat_id"], t["topic_id"])))["id"]
            if t["chat_kind"] == "private":  # a private chat here is someone else's
                if await tx.one(
                        "SELECT 1 FROM turns WHERE thread_id = ? AND user_id IS NOT NULL LIMIT 1",
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
                s.update(closed_at=ts(now), close_reason="import")
            sessions[s.pop("id")] = await insert(tx, "sessions", s)
        turns: dict[int, int] = {}
        for t in rows["turns"]:
            user = uid if t.get("user_id") == old_user["id"] else None
            turns[t["id"]] = await insert(tx, "turns", {
                **t, "thread_id": threads[t["thread_id"]],
                "session_id": sessions[t["session_id"]], "user_id": user})
        for table in ("episodes", "rounds"):
            for r in rows[table]:
                await insert(tx, table, {
                    **r, "thread_id": threads[r["thread_id"]],
                    "session_id": sessions[r["session_id"]], "scope": scope(r["scope"]),
                    "turn_ids": remap_ids(r["turn_ids"], turns)})
        for f in rows["facts"]:
            await insert(tx, "facts", {
                **f, "user_id": uid, "origin_thread_id": threads[f["origin_thread_id"]],
                "scope": scope(f["scope"]),
                "source_turn_ids": remap_ids(f["source_turn_ids"], turns)})
        await tx.execute(
            "INSERT INTO audit_log (at, user_id, action, count) VALUES (?, ?, 'import', ?)",
            (ts(now), uid, len(rows["facts"]) + len(rows["episodes"])))
    log.info("user imported id=%s facts=%d episodes=%d turns=%d", uid, len(rows["facts"]),
             len(rows["episodes"]), len(rows["turns"]))
    return uid


async def delete_user(db: Database, user_id: int, now: datetime) -> None:
    """Remove a user row and its accounts (after :meth:`forget_all`; ``import --replace``).
    The audit log keeps that it happened, not what."""
    async with db.tx() as tx:
        await tx.execute("DELETE FROM accounts WHERE user_id = ?", (user_id,))
        await tx.execute("UPDATE turns SET user_id = NULL WHERE user_id = ?", (user_id,))
        await tx.execute("DELETE FROM users WHERE id = ?", (user_id,))
        await tx.execute(
            "INSERT INTO audit_log (at, user_id, action, count) VALUES (?, ?, 'delete_user', 1)",
            (ts(now), user_id))
