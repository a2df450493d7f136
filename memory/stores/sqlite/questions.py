"""Pending questions in SQLite (:class:`memory.ports.QuestionStore`): a destructive command's
question per thread and user until it is answered or expires."""

from __future__ import annotations

from datetime import datetime

from memory.records import PendingQuestion
from memory.stores.sqlite.connection import Database
from memory.stores.sqlite.rows import dt, ts


def _question(row) -> PendingQuestion:
    return PendingQuestion(row["thread_id"], row["user_id"], row["action"], row["target"],
                           row["description"], row["language"], dt(row["asked_at"]),
                           dt(row["expires_at"]))


class SQLiteQuestions:
    """:class:`memory.ports.QuestionStore` on the store's connection."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def ask(self, question: PendingQuestion) -> None:
        """Keep ``question``, replacing the one its thread and user had."""
        q = question
        async with self.db.tx(hot=()) as tx:
            await tx.execute(
                "INSERT OR REPLACE INTO questions (thread_id, user_id, action, target, "
                "description, language, asked_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (q.thread_id, q.user_id, q.action, q.target, q.description, q.language,
                 ts(q.asked_at), ts(q.expires_at)))

    async def peek(self, thread_id: int, user_id: int, now: datetime
                   ) -> PendingQuestion | None:
        """The question waiting for ``user_id`` in ``thread_id`` at ``now``, or None."""
        row = await self.db.one("SELECT * FROM questions WHERE thread_id = ? AND user_id = ?",
                                (thread_id, user_id))
        question = _question(row) if row is not None else None
        return question if question is not None and question.expires_at > now else None

    async def take(self, thread_id: int, user_id: int, now: datetime, *,
                   asked_at: datetime | None = None) -> PendingQuestion | None:
        """Remove and return the waiting question (the one asked at ``asked_at``, when given);
        None when there is none, it expired (removed) or it is another."""
        async with self.db.tx(hot=()) as tx:
            row = await tx.one("SELECT * FROM questions WHERE thread_id = ? AND user_id = ?",
                               (thread_id, user_id))
            if row is None:
                return None
            question = _question(row)
            if asked_at is not None and question.asked_at != asked_at:
                return None
            await tx.execute("DELETE FROM questions WHERE thread_id = ? AND user_id = ?",
                             (thread_id, user_id))
        return question if question.expires_at > now else None
