"""Identities in PostgreSQL: users, their platform accounts, threads, and the memory switches
of users and group chats (:class:`memory.ports.IdentityStore`)."""

from __future__ import annotations

import logging
from datetime import datetime

from memory.records import ThreadRow, UserRow
from memory.stores.postgres.database import Database
from memory.stores.postgres.rows import thread_of, user_of
from memory.types import ChatKind, ThreadKey

log = logging.getLogger("memory.stores.postgres")


class PgIdentities:
    """:class:`memory.ports.IdentityStore` on the store's pool."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def user_for_account(
        self, platform: str, platform_user_id: str, display_name: str, now: datetime
    ) -> UserRow:
        """Return the user behind a platform account, creating both on first sight (under an
        advisory lock on the account, so two processes seeing it first create one user)."""
        user = await self.find_user(platform, platform_user_id)
        if user is not None:
            return user
        async with self.db.tx() as tx:
            await tx.lock(f"memory-bot account {platform}:{platform_user_id}")
            user = await self.find_user(platform, platform_user_id)  # created meanwhile?
            if user is not None:
                return user
            user_id = await tx.value(
                "INSERT INTO users (display_name, created_at) VALUES ($1, $2) RETURNING id",
                (display_name, now))
            await tx.execute(
                "INSERT INTO accounts (platform, platform_user_id, user_id) VALUES ($1, $2, $3)",
                (platform, platform_user_id, user_id))
        log.info("user created id=%s platform=%s", user_id, platform)
        return await self.get_user(user_id)

    async def find_user(self, platform: str, platform_user_id: str) -> UserRow | None:
        """Return the user behind a platform account, or None."""
        row = await self.db.one(
            "SELECT u.* FROM accounts a JOIN users u ON u.id = a.user_id "
            "WHERE a.platform = $1 AND a.platform_user_id = $2", (platform, platform_user_id))
        return user_of(row) if row else None

    async def get_user(self, user_id: int) -> UserRow | None:
        """Return a user by id, or None."""
        row = await self.db.one("SELECT * FROM users WHERE id = $1", (user_id,))
        return user_of(row) if row else None

    async def set_memory_enabled(self, user_id: int, enabled: bool) -> None:
        """Persist a user's ``/memory_on`` / ``/memory_off`` choice."""
        await self.db.execute("UPDATE users SET memory_enabled = $1 WHERE id = $2",
                              (int(enabled), user_id))

    async def set_timezone(self, user_id: int, tz: str | None) -> None:
        """Persist a user's IANA time zone (``/timezone``); None returns to the default."""
        await self.db.execute("UPDATE users SET timezone = $1 WHERE id = $2", (tz, user_id))

    async def set_language(self, user_id: int, language: str | None) -> None:
        """Persist the language a user chose for replies (``/language``: ``"en"``, ``"zh"``);
        None returns to choosing by each message."""
        await self.db.execute("UPDATE users SET language = $1 WHERE id = $2",
                              (language, user_id))

    async def mark_consent_noted(self, user_id: int, now: datetime) -> bool:
        """Record that the user was told facts are kept; True only the first time (one
        conditional update: two processes cannot both see the first time)."""
        cur = await self.db.execute(
            "UPDATE users SET consent_noted_at = $1 WHERE id = $2 AND consent_noted_at IS NULL",
            (now, user_id))
        return cur.rowcount == 1

    async def thread_for_key(
        self, key: ThreadKey, chat_kind: ChatKind, title: str | None, now: datetime
    ) -> ThreadRow:
        """Return the thread for ``key``, creating it on first sight."""
        topic = key.thread_id or ""
        select = "SELECT * FROM threads WHERE platform = $1 AND chat_id = $2 AND topic_id = $3"
        row = await self.db.one(select, (key.platform, key.chat_id, topic))
        if row is None:
            await self.db.execute(
                "INSERT INTO threads (platform, chat_id, topic_id, chat_kind, title, created_at) "
                "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (platform, chat_id, topic_id) "
                "DO NOTHING", (key.platform, key.chat_id, topic, chat_kind.value, title, now))
            row = await self.db.one(select, (key.platform, key.chat_id, topic))
        return thread_of(row)

    async def get_thread(self, thread_id: int) -> ThreadRow | None:
        """Return a thread by id, or None."""
        row = await self.db.one("SELECT * FROM threads WHERE id = $1", (thread_id,))
        return thread_of(row) if row else None

    async def set_chat_memory(self, platform: str, chat_id: str, enabled: bool,
                              now: datetime) -> None:
        """Persist ``/memory_off chat`` / ``/memory_on chat`` for a whole group chat."""
        await self.db.execute(
            "INSERT INTO chat_settings (platform, chat_id, memory_enabled, changed_at) "
            "VALUES ($1, $2, $3, $4) ON CONFLICT (platform, chat_id) DO UPDATE SET "
            "memory_enabled = excluded.memory_enabled, changed_at = excluded.changed_at",
            (platform, chat_id, int(enabled), now))

    async def chat_memory_enabled(self, platform: str, chat_id: str) -> bool:
        """False when a group chat's admins switched memory off for the whole chat."""
        row = await self.db.one("SELECT memory_enabled FROM chat_settings WHERE platform = $1 "
                                "AND chat_id = $2", (platform, chat_id))
        return row is None or bool(row["memory_enabled"])
