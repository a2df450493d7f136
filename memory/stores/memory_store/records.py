"""Usage and ``/why`` records in the in-memory store (:class:`memory.ports.RecordStore`)."""

from __future__ import annotations

import json

from memory.records import PromptRecord, UsageEntry, UsageRow
from memory.stores.memory_store.conversations import add_usage, save_record
from memory.stores.memory_store.tables import Tables


class MemoryRecords:
    """:class:`memory.ports.RecordStore` on the store's tables."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def add_model_usage(self, entry: UsageEntry) -> None:
        """Add one call to its user's totals for its day and model."""
        add_usage(self.t, entry)

    async def model_usage(self, user_id: int, *, since_day: str | None = None
                          ) -> list[UsageRow]:
        """A user's usage per day and model, newest day first (from ``since_day`` on)."""
        rows = [r for r in self.t.usage.values() if r["user_id"] == user_id
                and (since_day is None or r["day"] >= since_day)]
        rows.sort(key=lambda r: r["model"])
        rows.sort(key=lambda r: r["day"], reverse=True)
        return [UsageRow(day=r["day"], model=r["model"], calls=r["calls"],
                         input_tokens=r["input_tokens"], output_tokens=r["output_tokens"],
                         cache_creation_input_tokens=r["cache_creation_input_tokens"],
                         cache_read_input_tokens=r["cache_read_input_tokens"],
                         cost_usd=r["cost_usd"]) for r in rows]

    async def save_prompt_record(self, record: PromptRecord) -> None:
        """Keep (replace) the ``/why`` record of a user in a thread."""
        save_record(self.t, record)

    async def record_reply(self, *, usage: UsageEntry | None,
                           prompt_record: PromptRecord | None) -> None:
        """Both of a reply that stored no turn, together."""
        with self.t.transaction():
            if usage is not None:
                add_usage(self.t, usage)
            if prompt_record is not None:
                save_record(self.t, prompt_record)

    async def load_prompt_record(self, thread_id: int, user_id: int) -> dict | None:
        """The ``/why`` payload of a user in a thread, or None."""
        row = self.t.prompt_records.get((thread_id, user_id))
        return json.loads(row["payload"]) if row is not None else None

    async def prompt_records_of(self, user_id: int) -> list[dict]:
        """Every ``/why`` record of one user, newest first."""
        rows = sorted((r for r in self.t.prompt_records.values() if r["user_id"] == user_id),
                      key=lambda r: r["created_at"], reverse=True)
        return [{"thread_id": r["thread_id"], "created_at": r["created_at"],
                 "payload": json.loads(r["payload"])} for r in rows]
