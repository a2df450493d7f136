"""An in-memory backend of the memory store (:class:`memory.ports.Store`), for tests and
throw-away runs; not the in-memory search index (``memory.stores.inmemory.InMemoryIndex``).

It keeps the rows the SQLite store keeps, in the same column form (:mod:`memory.stores.columns`),
in Python dicts (:mod:`memory.stores.memory_store.tables`), and follows the same rules, held to
them by the contract suite every backend passes (``tests/contract``). Nothing is persisted.
"""

from __future__ import annotations

from datetime import datetime

from memory.errors import StoreError
from memory.stores.columns import dt, ts
from memory.stores.memory_store.conversations import MemoryConversations, MemoryDeliveries
from memory.stores.memory_store.episodes import MemoryEpisodes, MemoryWorkQueue
from memory.stores.memory_store.facts import MemoryFacts
from memory.stores.memory_store.identities import MemoryIdentities
from memory.stores.memory_store.privacy import MemoryPrivacy
from memory.stores.memory_store.questions import MemoryQuestions
from memory.stores.memory_store.records import MemoryRecords
from memory.stores.memory_store.tables import Tables

__all__ = ["InMemoryStore"]

#: What :meth:`InMemoryStore.count_rows` counts, by the table that holds it.
_COUNTED = {"users": "users", "threads": "threads", "sessions": "sessions", "turns": "turns",
            "episodes": "episodes", "rounds": "rounds", "facts": "facts", "work": "work",
            "audit_log": "audit"}


class InMemoryStore:
    """:class:`memory.ports.Store` in process memory (see the module docstring).

    Attributes:
        identities, conversations, deliveries, facts, episodes, work, privacy, records,
            questions: the ports, sharing one :class:`~memory.stores.memory_store.tables.Tables`.
        path: ``":memory:"`` (no data folder: no export files beside it).
    """

    def __init__(self) -> None:
        self.tables = tables = Tables()
        self.path = ":memory:"
        self.identities = MemoryIdentities(tables)
        self.conversations = MemoryConversations(tables)
        self.deliveries = MemoryDeliveries(tables)
        self.facts = MemoryFacts(tables)
        self.episodes = MemoryEpisodes(tables)
        self.work = MemoryWorkQueue(tables)
        self.privacy = MemoryPrivacy(tables)
        self.records = MemoryRecords(tables)
        self.questions = MemoryQuestions(tables)

    @classmethod
    async def open(cls) -> InMemoryStore:
        """A new, empty store."""
        return cls()

    async def close(self) -> None:
        """Nothing to release."""

    async def indexed_ids(self) -> dict[str, list[int]]:
        """The ids of every fact, episode and round, ascending, by index key prefix."""
        t = self.tables
        return {"fact": sorted(t.facts), "episode": sorted(t.episodes), "round": sorted(t.rounds)}

    async def count_rows(self, table: str) -> int:
        """How many entries of one kind are stored.

        Raises:
            StoreError: an unknown kind.
        """
        if table not in _COUNTED:
            raise StoreError(f"unknown table {table}")
        return len(getattr(self.tables, _COUNTED[table]))

    async def purge_free_space(self) -> None:
        """Nothing to do: deleted rows are gone with their dicts."""

    async def optimize(self) -> None:
        """Nothing to do."""

    async def claim_maintenance(self, day: str, now: datetime, *,
                                stale_before: datetime) -> bool:
        """Claim ``day``'s maintenance (:meth:`memory.ports.Store.claim_maintenance`)."""
        row = self.tables.maintenance_runs.get(day)
        if row is not None and (row["done_at"] is not None
                                or dt(row["started_at"]) >= stale_before):
            return False
        self.tables.maintenance_runs[day] = {"day": day, "started_at": ts(now), "done_at": None}
        return True

    async def finish_maintenance(self, day: str, now: datetime, *, done: bool) -> None:
        """End the claim of ``day`` (:meth:`memory.ports.Store.finish_maintenance`)."""
        row = self.tables.maintenance_runs.get(day)
        if row is None or row["done_at"] is not None:
            return
        if done:
            self.tables.maintenance_runs[day] = {**row, "done_at": ts(now)}
        else:
            del self.tables.maintenance_runs[day]
