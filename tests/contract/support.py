"""The storage contract's backends and helpers: every backend of :class:`memory.ports.Store` runs
the same tests (``tests/contract``).

A backend is one entry of :data:`BACKENDS` (a name and how to open an empty store in a
temporary folder, given the test's fixture request for servers it needs); backends with a
schema also give, in :data:`SCHEMAS`, how to leave a database at each earlier schema version.
PostgreSQL runs on the one server the test run starts (``postgres_server``, skipped when it
cannot start), each store in a scratch schema of its own that closing it drops.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memory.ports import Store
from memory.records import ThreadRow, UserRow
from memory.stores.memory_store import InMemoryStore
from memory.stores.postgres import PostgresStore
from memory.stores.sqlite import SQLiteStore
from memory.types import ChatKind, Role, Scope, ThreadKey, Turn

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)

#: How to open an empty store of each backend in a temporary folder (with the test's fixture
#: request, for the servers a backend needs).
BACKENDS: dict[str, Callable[[Path, pytest.FixtureRequest], Awaitable[Store]]] = {
    "sqlite": lambda folder, request: SQLiteStore.open(folder / "memory.db"),
    "memory": lambda folder, request: InMemoryStore.open(),
    "postgres": lambda folder, request: PostgresStore.open(
        request.getfixturevalue("postgres_server"), scratch=True),
}


@pytest.fixture(params=sorted(BACKENDS))
async def store(request, tmp_path) -> Store:
    """An empty store of each backend in turn (the contract's test modules import it)."""
    opened = await BACKENDS[request.param](tmp_path, request)
    yield opened
    await opened.close()


def at(minutes: float) -> datetime:
    """``T0`` plus ``minutes``."""
    return T0 + timedelta(minutes=minutes)


class Chat:
    """A user speaking in one thread of a store: the few steps the contract tests repeat."""

    def __init__(self, store: Store, user: UserRow, thread: ThreadRow) -> None:
        self.store = store
        self.user = user
        self.thread = thread
        self.clock = 0.0

    @classmethod
    async def open(cls, store: Store, name: str = "ada", *, chat: str | None = None,
                   kind: ChatKind = ChatKind.PRIVATE) -> Chat:
        user = await store.identities.user_for_account("console", name, name.title(), T0)
        thread = await store.identities.thread_for_key(
            ThreadKey("console", chat or name), kind, chat if kind is ChatKind.GROUP else None, T0)
        return cls(store, user, thread)

    @property
    def scope(self) -> Scope:
        return Scope.of_chat(self.thread.chat_kind, user_id=self.user.id,
                             thread_id=self.thread.id)

    def now(self) -> datetime:
        self.clock += 1
        return at(self.clock)

    async def say(self, text: str, *, pmid: str | None = None, **kw) -> Turn:
        turn, _ = await self.store.conversations.add_turn(
            thread_id=self.thread.id, role=Role.USER, text=text, at=self.now(),
            user_id=self.user.id, speaker=self.user.display_name, platform_message_id=pmid,
            **kw)
        return turn

    async def reply(self, text: str, **kw) -> Turn:
        turn, _ = await self.store.conversations.add_turn(
            thread_id=self.thread.id, role=Role.ASSISTANT, text=text, at=self.now(),
            speaker="Assistant", generated_by="model", **kw)
        return turn

    async def fact(self, text: str, *, turn: Turn, topic: str | None = None,
                   supersedes=(), valid_from: datetime | None = None):
        return await self.store.facts.add_fact(
            user_id=self.user.id, kind="profile", text=text, topic=topic, origin=self.thread,
            source_turn_ids=[turn.id], lang="en", scope=self.scope, now=self.now(),
            valid_from=valid_from, supersedes=supersedes)
