"""Pending questions in process memory (:class:`memory.ports.QuestionStore`)."""

from __future__ import annotations

from datetime import datetime

from memory.records import PendingQuestion
from memory.stores.columns import dt, ts
from memory.stores.memory_store.tables import Tables


def _question(row: dict) -> PendingQuestion:
    return PendingQuestion(row["thread_id"], row["user_id"], row["action"], row["target"],
                           row["description"], row["language"], dt(row["asked_at"]),
                           dt(row["expires_at"]))


class MemoryQuestions:
    """:class:`memory.ports.QuestionStore` on the in-memory tables (``Tables.questions``)."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def ask(self, question: PendingQuestion) -> None:
        """Keep ``question``, replacing the one its thread and user had."""
        q = question
        self.t.questions[(q.thread_id, q.user_id)] = {
            "thread_id": q.thread_id, "user_id": q.user_id, "action": q.action,
            "target": q.target, "description": q.description, "language": q.language,
            "asked_at": ts(q.asked_at), "expires_at": ts(q.expires_at)}

    async def peek(self, thread_id: int, user_id: int, now: datetime
                   ) -> PendingQuestion | None:
        """The question waiting for ``user_id`` in ``thread_id`` at ``now``, or None."""
        row = self.t.questions.get((thread_id, user_id))
        question = _question(row) if row is not None else None
        return question if question is not None and question.expires_at > now else None

    async def take(self, thread_id: int, user_id: int, now: datetime, *,
                   asked_at: datetime | None = None) -> PendingQuestion | None:
        """Remove and return the waiting question (the one asked at ``asked_at``, when given);
        None when there is none, it expired (removed) or it is another."""
        row = self.t.questions.get((thread_id, user_id))
        if row is None:
            return None
        question = _question(row)
        if asked_at is not None and question.asked_at != asked_at:
            return None
        del self.t.questions[(thread_id, user_id)]
        return question if question.expires_at > now else None
