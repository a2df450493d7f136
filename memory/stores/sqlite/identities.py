"""Identities in SQLite: users, their platform accounts, threads, and the memory switches of
users and group chats (:class:`memory.ports.IdentityStore`)."""

from __future__ import annotations

import logging
from datetime import datetime

from memory.records import ThreadRow, UserRow
from memory.stores.sqlite.connection import Database
from memory.stores.sqlite.rows import thread_of, ts, user_of
from memory.types import ChatKind, ThreadKey

log = logging.getLogger("memory.stores.sqlite")


class SQLiteIdentities:
    """:class:`memory.ports.IdentityStore` on the store's connection."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def user_for_account(
        self, platform: str, platform_user_id: str, display_name: str, now: datetime
    ) -> UserRow:
        """Return the user behind a platform account, creating both on first sight."""
        user = await self.find_user(platform, platform_user_id)
        if user is not None:
            return user
        async with self.db.tx() as tx:
            user = await self.find_user(platform, platform_user_id)  # created meanwhile?
            if user is not None:
                return user
            cur = await tx.execute(
                "INSERT INTO users (display_name, created_at) VALUES (?, ?)",
                (display_name, ts(now)),
            )
            await tx.execute(
                "INSERT INTO accounts (platform, platform_user_id, user_id) VALUES (?, ?, ?)",
                (platform, platform_user_id, cur.lastrowid),
            )
        log.info("user created id=%s platform=%s", cur.lastrowid, platform)
        return await self.get_user(cur.lastrowid)

    async def find_user(self, platform: str, platform_user_id: str) -> UserRow | None:
        """Return the user behind a platform account, or None."""
        row = await self.db.one(
            "SELECT u.* FROM accounts a JOIN users u ON u.id = a.user_id "
            "WHERE a.platform = ? AND a.platform_user_id = ?",
            (platform, platform_user_id),
        )
        return user_of(row) if row else None

    async def get_user(self, user_id: int) -> UserRow | None:
        """Return a user by id, or None."""
        row = await self.db.one("SELECT * FROM users WHERE id = ?", (user_id,))
        return user_of(row) if row else None

    async def set_memory_enabled(self, user_id: int, enabled: bool) -> None:
        """Persist a user's ``/memory_on`` / ``/memory_off`` choice."""
        async with self.db.tx() as tx:
            await tx.execute(
                "UPDATE users SET memory_enabled = ? WHERE id = ?", (int(enabled), user_id)
            )

    async def set_timezone(self, user_id: int, tz: str | None) -> None:
        """Persist a user's IANA time zone (``/timezone``); None returns to the default."""
        async with self.db.tx() as tx:
            await tx.execute("UPDATE users SET timezone = ? WHERE id = ?", (tz, user_id))

    async def set_language(self, user_id: int, language: str | None) -> None:
        """Persist the language a user chose for replies (``/language``: ``"en"``, ``"zh"``);
        None returns to choosing by each message."""
        async with self.db.tx() as tx:
            await tx.execute("UPDATE users SET language = ? WHERE id = ?", (language, user_id))

    async def mark_consent_noted(self, user_id: int, now: datetime) -> bool:
        """Record that the user was told facts are kept; True only the first time."""
        async with self.db.tx(hot=()) as tx:
            cur = await tx.execute(
                "UPDATE users SET consent_noted_at = ? WHERE id = ? AND consent_noted_at IS NULL",
                (ts(now), user_id))
        return cur.rowcount == 1

    async def thread_for_key(
        self, key: ThreadKey, chat_kind: ChatKind, title: str | None, now: datetime
    ) -> ThreadRow:
        """Return the thread for ``key``, creating it on first sight."""
        topic = key.thread_id or ""
        row = await self.db.one(
            "SELECT * FROM threads WHERE platform = ? AND chat_id = ? AND topic_id = ?",
            (key.platform, key.chat_id, topic),
        )
        if row is None:
            async with self.db.tx() as tx:
                await tx.execute(
                    "INSERT OR IGNORE INTO threads (platform, chat_id, topic_id, chat_kind, title, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (key.platform, key.chat_id, topic, chat_kind.value, title, ts(now)),
                )
            row = await self.db.one(
                "SELECT * FROM threads WHERE platform = ? AND chat_id = ? AND topic_id = ?",
                (key.platform, key.chat_id, topic),
            )
        return thread_of(row)

    async def get_thread(self, thread_id: int) -> ThreadRow | None:
        """Return a thread by id, or None."""
        row = await self.db.one("SELECT * FROM threads WHERE id = ?", (thread_id,))
        return thread_of(row) if row else None

    async def set_chat_memory(self, platform: str, chat_id: str, enabled: bool,
                              now: datetime) -> None:
        """Persist ``/memory_off chat`` / ``/memory_on chat`` for a whole group chat."""
        async with self.db.tx() as tx:
            await tx.execute(
                "INSERT INTO chat_settings (platform, chat_id, memory_enabled, changed_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (platform, chat_id) DO UPDATE SET "
                "memory_enabled = excluded.memory_enabled, changed_at = excluded.changed_at",
                (platform, chat_id, int(enabled), ts(now)))

    async def chat_memory_enabled(self, platform: str, chat_id: str) -> bool:
        """False when a group chat's admins switched memory off for the whole chat."""
        row = await self.db.one("SELECT memory_enabled FROM chat_settings WHERE platform = ? AND "
                              "chat_id = ?", (platform, chat_id))
        return row is None or bool(row["memory_enabled"])
