"""Conversations in PostgreSQL: sessions and turns (:class:`memory.ports.ConversationStore`).

A turn is stored with what its transaction also records (:class:`memory.records.TurnWrites`)
and, past the fold bounds, its session's ``fold`` job, in one transaction that first locks the
thread's row: turns of one thread are stored one at a time across every process on the
database (the open session, its fold check and the duplicate check decide on what the lock
guards). No process-local cache of open sessions is kept (another process may write the same
thread), so :meth:`PgConversations.working_turns` reads the database each time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime

from memory.records import NO_WRITES, SessionRow, TurnWrites
from memory.stores.postgres.database import Database, Statement
from memory.stores.postgres.deliveries import handled_sql
from memory.stores.postgres.records import prompt_record_sql, usage_sql
from memory.stores.postgres.rows import session_of, turn_of, turns_by_ids
from memory.types import Role, Turn

log = logging.getLogger("memory.stores.postgres")


def _turn_writes(writes: TurnWrites, thread_id: int, turn_id: int) -> list[Statement]:
    """The statements of a turn's :class:`TurnWrites`, run right after the turn's insert."""
    out: list[Statement] = []
    if writes.handled_update is not None:
        out.append(handled_sql(writes.handled_update))
    if writes.reply_due:
        out.append(("INSERT INTO replies_due (turn_id, thread_id) VALUES ($1, $2) "
                    "ON CONFLICT (turn_id) DO NOTHING", (turn_id, thread_id)))
    if writes.usage is not None:
        out.append(usage_sql(writes.usage))
    if writes.prompt_record is not None:
        out.append(prompt_record_sql(writes.prompt_record))
    if writes.recalled is not None:
        out.append(("UPDATE turns SET recalled = $1 WHERE id = $2",
                    (" ".join(writes.recalled), turn_id)))
    return out


class PgConversations:
    """:class:`memory.ports.ConversationStore` on the store's pool."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add_turn(
        self,
        *,
        thread_id: int,
        role: Role,
        text: str,
        at: datetime,
        user_id: int | None = None,
        speaker: str | None = None,
        platform_message_id: str | None = None,
        generated_by: str | None = None,
        memory_off: bool = False,
        tokens: int = 0,
        fold_after: tuple[int, int, int] | None = None,
        writes: TurnWrites = NO_WRITES,
    ) -> tuple[Turn, bool]:
        """Store a turn in the thread's open session, opening a session if none is open, with
        ``writes`` after it, in one transaction holding the thread's row lock.

        With ``fold_after = (turns, tokens, min_turns)``, a ``fold`` job is recorded in the
        same transaction when no fold is pending and the session's unfolded turns number more
        than ``turns``, or hold more than ``tokens`` while numbering more than ``min_turns``
        (the SQLite store's rule, :class:`memory.ports.ConversationStore`).

        Returns:
            ``(turn, created)``; ``created`` is False when a turn with the same platform message
            id already exists in the thread (a redelivery), which is returned instead.
        """
        async with self.db.tx() as tx:
            await tx.execute("SELECT 1 FROM threads WHERE id = $1 FOR UPDATE", (thread_id,))
            if platform_message_id is not None:
                row = await tx.one("SELECT * FROM turns WHERE thread_id = $1 AND "
                                   "platform_message_id = $2", (thread_id, platform_message_id))
                if row is not None:
                    return turn_of(row), False
            session_id = await tx.value(
                "SELECT id FROM sessions WHERE thread_id = $1 AND closed_at IS NULL",
                (thread_id,))
            if session_id is None:
                session_id = await tx.value(
                    "INSERT INTO sessions (thread_id, started_at, last_turn_at) "
                    "VALUES ($1, $2, $2) RETURNING id", (thread_id, at))
                log.info("session opened id=%s thread=%s", session_id, thread_id)
            else:
                await tx.execute("UPDATE sessions SET last_turn_at = greatest(last_turn_at, $1)"
                                 " WHERE id = $2", (at, session_id))
            turn_id = await tx.value(
                "INSERT INTO turns (thread_id, session_id, user_id, role, speaker, text,"
                " created_at, platform_message_id, generated_by, memory_off, tokens)"
                " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) RETURNING id",
                (thread_id, session_id, user_id, role.value, speaker, text, at,
                 platform_message_id, generated_by, int(memory_off), tokens))
            if fold_after is not None:
                await self._request_fold(tx, session_id, fold_after, at)
            for sql, args in _turn_writes(writes, thread_id, turn_id):
                await tx.execute(sql, args)
        log.debug("turn stored id=%s thread=%s role=%s", turn_id, thread_id, role.value)
        return Turn(
            id=turn_id, thread_id=thread_id, session_id=session_id, role=role, text=text,
            created_at=at, user_id=user_id, speaker=speaker,
            platform_message_id=platform_message_id, generated_by=generated_by,
            memory_off=memory_off,
        ), True

    @staticmethod
    async def _request_fold(tx: Database, session_id: int, bounds: tuple[int, int, int],
                            at: datetime) -> None:
        """Record a ``fold`` job for the session when :meth:`add_turn`'s bounds say so and
        none is pending (inside its transaction)."""
        row = await tx.one(
            "SELECT count(*) AS n, coalesce(sum(t.tokens), 0) AS tokens FROM turns t "
            "JOIN sessions s ON s.id = t.session_id WHERE t.session_id = $1 "
            "AND t.id > s.folded_through", (session_id,))
        n, tokens = row["n"], row["tokens"]
        if not (n > bounds[0] or (tokens > bounds[1] and n > bounds[2])):
            return
        if await tx.one("SELECT 1 FROM work WHERE session_id = $1 AND kind = 'fold' AND "
                        "done_at IS NULL", (session_id,)) is not None:
            return
        seq = await tx.value("INSERT INTO work (kind, session_id, seq, created_at) SELECT "
                             "'fold', $1, coalesce(max(seq), 0) + 1, $2 FROM work WHERE "
                             "session_id = $1 AND kind = 'fold' RETURNING seq",
                             (session_id, at))
        log.info("fold requested session=%s seq=%s turns=%s tokens=%s", session_id, seq, n,
                 tokens)

    async def open_session(self, thread_id: int) -> SessionRow | None:
        """Return the thread's open session, or None."""
        row = await self.db.one(
            "SELECT * FROM sessions WHERE thread_id = $1 AND closed_at IS NULL", (thread_id,))
        return session_of(row) if row else None

    async def get_session(self, session_id: int) -> SessionRow | None:
        """Return a session by id, or None."""
        row = await self.db.one("SELECT * FROM sessions WHERE id = $1", (session_id,))
        return session_of(row) if row else None

    async def open_sessions(self) -> list[SessionRow]:
        """Every open session, oldest last turn first (start-up rebuild of the idle jobs)."""
        rows = await self.db.all(
            "SELECT * FROM sessions WHERE closed_at IS NULL ORDER BY last_turn_at, id")
        return [session_of(r) for r in rows]

    async def session_turns(self, session_id: int, *, limit: int | None = None) -> list[Turn]:
        """Return a session's turns, oldest first; with ``limit``, only the newest ``limit``."""
        if limit is None:
            rows = await self.db.all("SELECT * FROM turns WHERE session_id = $1 ORDER BY id",
                                     (session_id,))
        else:
            rows = await self.db.all(
                "SELECT * FROM (SELECT * FROM turns WHERE session_id = $1 ORDER BY id DESC "
                "LIMIT $2) newest ORDER BY id", (session_id, limit))
        return [turn_of(r) for r in rows]

    async def get_turns(self, turn_ids: Iterable[int]) -> list[Turn]:
        """Return the turns with these ids (any number; missing ids are skipped), oldest
        first."""
        return await turns_by_ids(self.db, turn_ids)

    async def working_turns(self, thread_id: int, limit: int
                            ) -> tuple[SessionRow | None, list[Turn]]:
        """The thread's open session and its newest ``limit`` turns, oldest first (``(None,
        [])`` when no session is open), read from the database each time: no process-local
        cache, since another process may have written the thread."""
        session = await self.open_session(thread_id)
        if session is None:
            return None, []
        return session, await self.session_turns(session.id, limit=limit)

    async def close_session(self, session_id: int, at: datetime, reason: str) -> bool:
        """Mark a session closed and record its consolidation job, in one transaction.

        Returns:
            True when this call closed it; False when it was already closed (idempotent).
        """
        async with self.db.tx() as tx:
            cur = await tx.execute(
                "UPDATE sessions SET closed_at = $1, close_reason = $2 "
                "WHERE id = $3 AND closed_at IS NULL", (at, reason, session_id))
            if cur.rowcount == 0:
                return False
            await tx.execute(
                "INSERT INTO work (kind, session_id, created_at) VALUES ('close', $1, $2) "
                "ON CONFLICT (kind, session_id, seq) DO NOTHING", (session_id, at))
        log.info("session closed id=%s reason=%s", session_id, reason)
        return True

    async def close_session_if_idle(self, session_id: int, *, last_turn_before: datetime,
                                    at: datetime, reason: str = "idle") -> bool:
        """Close a session only if it is still open and its last turn is at or before
        ``last_turn_before``, and record its consolidation job, in one transaction: a turn
        stored meanwhile (by any process) keeps it open.

        Returns:
            True when this call closed it.
        """
        async with self.db.tx() as tx:
            cur = await tx.execute(
                "UPDATE sessions SET closed_at = $1, close_reason = $2 "
                "WHERE id = $3 AND closed_at IS NULL AND last_turn_at <= $4",
                (at, reason, session_id, last_turn_before))
            if cur.rowcount == 0:
                return False
            await tx.execute(
                "INSERT INTO work (kind, session_id, created_at) VALUES ('close', $1, $2) "
                "ON CONFLICT (kind, session_id, seq) DO NOTHING", (session_id, at))
        log.info("session closed id=%s reason=%s", session_id, reason)
        return True

    async def edit_user_turn(self, thread_id: int, platform_message_id: str, text: str,
                             now: datetime) -> tuple[Turn, Turn] | None:
        """Replace the text of the user turn with this platform message id in the thread (an
        edited message); open fact candidates drawn from it are consumed, in the same
        transaction.

        Returns:
            ``(before, after)``, or None when no such user turn is stored.
        """
        async with self.db.tx() as tx:
            row = await tx.one(
                "SELECT * FROM turns WHERE thread_id = $1 AND platform_message_id = $2 "
                "AND role = 'user' FOR UPDATE", (thread_id, platform_message_id))
            if row is None:
                return None
            await tx.execute("UPDATE turns SET text = $1 WHERE id = $2", (text, row["id"]))
            await tx.execute(
                "UPDATE fact_candidates SET consumed_at = $1 WHERE turn_id = $2 "
                "AND consumed_at IS NULL", (now, row["id"]))
        before = turn_of(row)
        after = await self.get_turns([row["id"]])
        return before, after[0]
