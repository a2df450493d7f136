"""Usage and ``/why`` records in PostgreSQL (:class:`memory.ports.RecordStore`): model usage
per user, UTC day and model, and the prompt record of each user's last reply per thread."""

from __future__ import annotations

import json

from memory.records import PromptRecord, UsageEntry, UsageRow
from memory.stores.postgres.database import Database, Statement


def usage_sql(entry: UsageEntry) -> Statement:
    """Add one model call to its user's totals for its day and model; a row's cost is the sum
    over its calls whose price was known (None while there was none)."""
    return (
        "INSERT INTO model_usage AS u (user_id, day, model, calls, input_tokens, output_tokens,"
        " cache_creation_input_tokens, cache_read_input_tokens, cost_usd)"
        " VALUES ($1, $2, $3, 1, $4, $5, $6, $7, $8) ON CONFLICT (user_id, day, model) DO UPDATE"
        " SET calls = u.calls + 1,"
        " input_tokens = u.input_tokens + excluded.input_tokens,"
        " output_tokens = u.output_tokens + excluded.output_tokens,"
        " cache_creation_input_tokens = u.cache_creation_input_tokens"
        " + excluded.cache_creation_input_tokens,"
        " cache_read_input_tokens = u.cache_read_input_tokens"
        " + excluded.cache_read_input_tokens,"
        " cost_usd = CASE WHEN u.cost_usd IS NULL THEN excluded.cost_usd"
        " WHEN excluded.cost_usd IS NULL THEN u.cost_usd"
        " ELSE u.cost_usd + excluded.cost_usd END",
        (entry.user_id, entry.day, entry.model, entry.input_tokens, entry.output_tokens,
         entry.cache_creation_input_tokens, entry.cache_read_input_tokens, entry.cost_usd),
    )


def prompt_record_sql(record: PromptRecord) -> Statement:
    """Keep (replace) the ``/why`` record of a user in a thread."""
    return ("INSERT INTO prompt_records (thread_id, user_id, created_at, payload) "
            "VALUES ($1, $2, $3, $4) ON CONFLICT (thread_id, user_id) DO UPDATE SET "
            "created_at = excluded.created_at, payload = excluded.payload",
            (record.thread_id, record.user_id, record.at,
             json.dumps(record.payload, ensure_ascii=False)))


class PgRecords:
    """:class:`memory.ports.RecordStore` on the store's pool."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add_model_usage(self, entry: UsageEntry) -> None:
        """Add one model call to a user's totals for its day (``YYYY-MM-DD``, UTC) and model
        (one upsert: concurrent calls of several processes add up)."""
        await self.db.run_statements([usage_sql(entry)])

    async def model_usage(self, user_id: int, *, since_day: str | None = None) -> list[UsageRow]:
        """A user's model usage per day and model, newest day first (from ``since_day``,
        inclusive, when given)."""
        sql = "SELECT * FROM model_usage WHERE user_id = $1"
        args: list = [user_id]
        if since_day is not None:
            sql += " AND day >= $2"
            args.append(since_day)
        rows = await self.db.all(sql + " ORDER BY day DESC, model COLLATE \"C\"", args)
        return [UsageRow(day=r["day"], model=r["model"], calls=r["calls"],
                         input_tokens=r["input_tokens"], output_tokens=r["output_tokens"],
                         cache_creation_input_tokens=r["cache_creation_input_tokens"],
                         cache_read_input_tokens=r["cache_read_input_tokens"],
                         cost_usd=r["cost_usd"]) for r in rows]

    async def save_prompt_record(self, record: PromptRecord) -> None:
        """Keep what the model saw for the user's last reply in this thread (for ``/why``)."""
        await self.db.run_statements([prompt_record_sql(record)])

    async def record_reply(self, *, usage: UsageEntry | None,
                           prompt_record: PromptRecord | None) -> None:
        """The usage and ``/why`` record of a reply that stored no turn, in one transaction."""
        await self.db.run_statements(
            ([usage_sql(usage)] if usage is not None else [])
            + ([prompt_record_sql(prompt_record)] if prompt_record is not None else []))

    async def load_prompt_record(self, thread_id: int, user_id: int) -> dict | None:
        """Return the last prompt record of a user in a thread, or None."""
        row = await self.db.one(
            "SELECT payload FROM prompt_records WHERE thread_id = $1 AND user_id = $2",
            (thread_id, user_id))
        return json.loads(row["payload"]) if row else None

    async def prompt_records_of(self, user_id: int) -> list[dict]:
        """Every kept prompt record of one user (the last reply per thread, ``/why``), newest
        first: dicts with ``thread_id``, ``created_at`` (ISO text) and ``payload`` (decoded)."""
        rows = await self.db.all(
            "SELECT thread_id, created_at, payload FROM prompt_records WHERE user_id = $1 "
            "ORDER BY created_at DESC", (user_id,))
        return [{"thread_id": r["thread_id"], "created_at": r["created_at"],
                 "payload": json.loads(r["payload"])} for r in rows]
