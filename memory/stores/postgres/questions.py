"""Pending questions in PostgreSQL (:class:`memory.ports.QuestionStore`): a destructive
command's question per thread and user until it is answered or expires, seen by every process
on the database; of two processes taking one answer, the ``DELETE ... RETURNING`` of one gets
it."""

from __future__ import annotations

from datetime import datetime

from memory.records import PendingQuestion
from memory.stores.postgres.database import Database
from memory.stores.postgres.rows import dt


def _question(row) -> PendingQuestion:
    return PendingQuestion(row["thread_id"], row["user_id"], row["action"], row["target"],
                           row["description"], row["language"], dt(row["asked_at"]),
                           dt(row["expires_at"]))


class PgQuestions:
    """:class:`memory.ports.QuestionStore` on the store's pool."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def ask(self, question: PendingQuestion) -> None:
        """Keep ``question``, replacing the one its thread and user had."""
        q = question
        await self.db.execute(
            "INSERT INTO questions (thread_id, user_id, action, target, description, language,"
            " asked_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
            "ON CONFLICT (thread_id, user_id) DO UPDATE SET action = EXCLUDED.action, "
            "target = EXCLUDED.target, description = EXCLUDED.description, "
            "language = EXCLUDED.language, asked_at = EXCLUDED.asked_at, "
            "expires_at = EXCLUDED.expires_at",
            (q.thread_id, q.user_id, q.action, q.target, q.description, q.language,
             q.asked_at, q.expires_at))

    async def peek(self, thread_id: int, user_id: int, now: datetime
                   ) -> PendingQuestion | None:
        """The question waiting for ``user_id`` in ``thread_id`` at ``now``, or None."""
        row = await self.db.one("SELECT * FROM questions WHERE thread_id = $1 AND user_id = $2 "
                                "AND expires_at > $3", (thread_id, user_id, now))
        return _question(row) if row is not None else None

    async def take(self, thread_id: int, user_id: int, now: datetime, *,
                   asked_at: datetime | None = None) -> PendingQuestion | None:
        """Remove and return the waiting question (the one asked at ``asked_at``, when given);
        None when there is none, it expired (removed) or it is another."""
        sql = "DELETE FROM questions WHERE thread_id = $1 AND user_id = $2"
        args: list = [thread_id, user_id]
        if asked_at is not None:
            args.append(asked_at)
            sql += " AND asked_at = $3"
        row = await self.db.one(sql + " RETURNING *", args)
        question = _question(row) if row is not None else None
        return question if question is not None and question.expires_at > now else None
