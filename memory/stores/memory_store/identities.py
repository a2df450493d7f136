"""Identities in the in-memory store (:class:`memory.ports.IdentityStore`)."""

from __future__ import annotations

from datetime import datetime

from memory.records import ThreadRow, UserRow
from memory.stores.columns import thread_of, ts, user_of
from memory.stores.memory_store.tables import Tables
from memory.types import ChatKind, ThreadKey


class MemoryIdentities:
    """:class:`memory.ports.IdentityStore` on the store's tables."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def user_for_account(self, platform: str, platform_user_id: str, display_name: str,
                               now: datetime) -> UserRow:
        """The user behind a platform account, both created on first sight."""
        account = self.t.accounts.get((platform, platform_user_id))
        if account is None:
            with self.t.transaction():
                user_id = self.t.insert("users", {
                    "display_name": display_name, "created_at": ts(now), "memory_enabled": 1,
                    "timezone": None, "consent_noted_at": None, "language": None})
                self.t.accounts[(platform, platform_user_id)] = {
                    "platform": platform, "platform_user_id": platform_user_id,
                    "user_id": user_id, "blocked_at": None}
            return user_of(self.t.users[user_id])
        return user_of(self.t.users[account["user_id"]])

    async def find_user(self, platform: str, platform_user_id: str) -> UserRow | None:
        """The user behind a platform account, or None."""
        account = self.t.accounts.get((platform, platform_user_id))
        return user_of(self.t.users[account["user_id"]]) if account is not None else None

    async def get_user(self, user_id: int) -> UserRow | None:
        """A user by id, or None."""
        row = self.t.users.get(user_id)
        return user_of(row) if row is not None else None

    async def set_memory_enabled(self, user_id: int, enabled: bool) -> None:
        """Persist ``/memory_on`` / ``/memory_off``."""
        if user_id in self.t.users:
            self.t.update(self.t.users, user_id, memory_enabled=int(enabled))

    async def set_timezone(self, user_id: int, tz: str | None) -> None:
        """Persist the user's IANA time zone; None returns to the default."""
        if user_id in self.t.users:
            self.t.update(self.t.users, user_id, timezone=tz)

    async def set_language(self, user_id: int, language: str | None) -> None:
        """Persist the language the user chose for replies; None returns to choosing by each
        message."""
        if user_id in self.t.users:
            self.t.update(self.t.users, user_id, language=language)

    async def mark_consent_noted(self, user_id: int, now: datetime) -> bool:
        """Record that the user was told facts are kept; True only the first time."""
        row = self.t.users.get(user_id)
        if row is None or row["consent_noted_at"] is not None:
            return False
        self.t.update(self.t.users, user_id, consent_noted_at=ts(now))
        return True

    async def thread_for_key(self, key: ThreadKey, chat_kind: ChatKind, title: str | None,
                             now: datetime) -> ThreadRow:
        """The thread of ``key``, created on first sight."""
        topic = key.thread_id or ""
        for row in self.t.threads.values():
            if (row["platform"], row["chat_id"], row["topic_id"]) == (key.platform, key.chat_id,
                                                                      topic):
                return thread_of(row)
        thread_id = self.t.insert("threads", {
            "platform": key.platform, "chat_id": key.chat_id, "topic_id": topic,
            "chat_kind": chat_kind.value, "title": title, "created_at": ts(now)})
        return thread_of(self.t.threads[thread_id])

    async def get_thread(self, thread_id: int) -> ThreadRow | None:
        """A thread by id, or None."""
        row = self.t.threads.get(thread_id)
        return thread_of(row) if row is not None else None

    async def set_chat_memory(self, platform: str, chat_id: str, enabled: bool,
                              now: datetime) -> None:
        """Persist ``/memory_off chat`` / ``/memory_on chat`` for a whole group chat."""
        self.t.chat_settings[(platform, chat_id)] = {
            "platform": platform, "chat_id": chat_id, "memory_enabled": int(enabled),
            "changed_at": ts(now)}

    async def chat_memory_enabled(self, platform: str, chat_id: str) -> bool:
        """False when a group chat's admins switched memory off for the whole chat."""
        row = self.t.chat_settings.get((platform, chat_id))
        return row is None or bool(row["memory_enabled"])
