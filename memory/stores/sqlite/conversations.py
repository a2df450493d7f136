"""Conversations in SQLite: sessions and turns (:class:`memory.ports.ConversationStore`).

A turn is stored with what its transaction also records (:class:`memory.records.TurnWrites`)
and, past the fold bounds, its session's ``fold`` job, as one function run in the worker
thread (one hand-off, :meth:`~memory.stores.sqlite.connection.Database.write`). Open sessions
and their newest turns are answered from the hot cache (:mod:`memory.stores.sqlite.hot`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime

from memory.records import NO_WRITES, SessionRow, TurnWrites
from memory.stores.sqlite.connection import Database, Statement
from memory.stores.sqlite.deliveries import handled_sql
from memory.stores.sqlite.records import prompt_record_sql, usage_sql
from memory.stores.sqlite.rows import dt, session_of, ts, turn_of, turns_by_ids
from memory.types import Role, Turn

log = logging.getLogger("memory.stores.sqlite")

_UNKNOWN = object()  # add_turn: the hot cache does not know the thread's open session


def _add_turn_tx(db, thread_id: int, values: tuple, pmid: str | None, at: str,
                 session: object, fold_after: tuple[int, int, int] | None,
                 writes: TurnWrites = NO_WRITES):
    """The transaction of :meth:`SQLiteConversations.add_turn` (in the worker thread). ``values``:
    the turn's columns after ``thread_id, session_id`` (``user_id`` ... ``tokens``); ``session``:
    the open session's id, None for none, or ``_UNKNOWN``; ``writes`` are stored after the turn
    (not for a duplicate). Returns ``("duplicate", row)`` or
    ``("stored", session_id, opened, turn_id, fold)`` with ``fold`` None or
    ``(seq, turns, tokens)`` of a fold job recorded with the turn."""
    if pmid is not None:
        row = db.execute("SELECT * FROM turns WHERE thread_id = ? AND platform_message_id = ?",
                         (thread_id, pmid)).fetchone()
        if row is not None:
            return "duplicate", row
    if session is _UNKNOWN:
        row = db.execute("SELECT id FROM sessions WHERE thread_id = ? AND closed_at IS NULL",
                         (thread_id,)).fetchone()
        session = row[0] if row is not None else None
    opened = session is None
    if opened:
        session = db.execute(
            "INSERT INTO sessions (thread_id, started_at, last_turn_at) VALUES (?, ?, ?)",
            (thread_id, at, at)).lastrowid
    else:
        db.execute("UPDATE sessions SET last_turn_at = max(last_turn_at, ?) WHERE id = ?",
                   (at, session))
    turn_id = db.execute(
        "INSERT INTO turns (thread_id, session_id, user_id, role, speaker, text, created_at,"
        " platform_message_id, generated_by, memory_off, tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (thread_id, session, *values)).lastrowid
    fold = _request_fold_tx(db, session, fold_after, at) if fold_after is not None else None
    for sql, args in _turn_writes(writes, thread_id, turn_id):
        db.execute(sql, args)
    return "stored", session, opened, turn_id, fold


def _request_fold_tx(db, session_id: int, bounds: tuple[int, int, int], at: str):
    """Record a ``fold`` job for the session when :meth:`SQLiteConversations.add_turn`'s bounds
    say so and none is pending (in the worker thread, inside the caller's transaction). Returns
    ``(seq, turns, tokens)`` of the job recorded, or None."""
    n, tokens = db.execute(
        "SELECT count(*), coalesce(sum(t.tokens), 0) FROM turns t "
        "JOIN sessions s ON s.id = t.session_id WHERE t.session_id = ? "
        "AND t.id > s.folded_through", (session_id,)).fetchone()
    if not (n > bounds[0] or (tokens > bounds[1] and n > bounds[2])):
        return None
    if db.execute("SELECT 1 FROM work WHERE session_id = ? AND kind = 'fold' AND done_at IS NULL",
                  (session_id,)).fetchone() is not None:
        return None
    seq = db.execute("SELECT coalesce(max(seq), 0) + 1 FROM work WHERE session_id = ? "
                     "AND kind = 'fold'", (session_id,)).fetchone()[0]
    db.execute("INSERT INTO work (kind, session_id, seq, created_at) VALUES ('fold', ?, ?, ?)",
               (session_id, seq, at))
    return seq, n, tokens


def _turn_writes(writes: TurnWrites, thread_id: int, turn_id: int) -> list[Statement]:
    """The statements of a turn's :class:`TurnWrites`, run right after the turn's insert."""
    out: list[Statement] = []
    if writes.handled_update is not None:
        out.append(handled_sql(writes.handled_update))
    if writes.reply_due:
        out.append(("INSERT OR IGNORE INTO replies_due (turn_id, thread_id) VALUES (?, ?)",
                    (turn_id, thread_id)))
    if writes.usage is not None:
        out.append(usage_sql(writes.usage))
    if writes.prompt_record is not None:
        out.append(prompt_record_sql(writes.prompt_record))
    if writes.recalled is not None:
        out.append(("UPDATE turns SET recalled = ? WHERE id = ?",
                    (" ".join(writes.recalled), turn_id)))
    return out


class SQLiteConversations:
    """:class:`memory.ports.ConversationStore` on the store's connection."""

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
        """Store a turn in the thread's open session, opening a session if none is open.

        ``writes`` (:class:`TurnWrites`: the delivery's handled mark, a reply due, the reply's
        usage and ``/why`` record, its recalled keys) are stored in the same transaction after
        the turn, so a reply is stored in one write instead of three; none of them changes a
        turn's fields or a session (the hot cache keeps its entry). They are not stored for a
        redelivered turn.

        With ``fold_after = (turns, tokens, min_turns)``, a ``fold`` job is recorded in the same
        transaction when no fold is pending and the session's unfolded turns number more than
        ``turns`` (``SUMMARY_TRIGGER_MESSAGES``), or hold more than ``tokens``
        (``MAX_WORKING_TOKENS``) while numbering more than ``min_turns`` (so that a fold, which
        keeps the last 10 turns, has something to fold).

        Returns:
            ``(turn, created)``; ``created`` is False when a turn with the same platform message
            id already exists in the thread (a redelivery), which is returned instead.
        """
        stamp = ts(at)
        async with self.db.write(hot=()) as run:  # the hot cache's entry is updated below
            known, open_ = self.db.hot.session(thread_id)  # exact: no other write is running
            session = (open_.id if open_ is not None else None) if known else _UNKNOWN
            result = await run(_add_turn_tx, thread_id, (
                user_id, role.value, speaker, text, stamp, platform_message_id, generated_by,
                int(memory_off), tokens), platform_message_id, stamp, session, fold_after,
                writes)
            if result[0] == "duplicate":
                return turn_of(result[1]), False
            _, session_id, opened, turn_id, fold = result
            if opened:
                log.info("session opened id=%s thread=%s", session_id, thread_id)
            if fold is not None:
                log.info("fold requested session=%s seq=%s turns=%s tokens=%s", session_id,
                         *fold)
            self.db.hot.turn_added(thread_id, Turn(  # as session_turns would read it back
                id=turn_id, thread_id=thread_id, session_id=session_id, role=role, text=text,
                created_at=dt(stamp), user_id=user_id, speaker=speaker,
                platform_message_id=platform_message_id, generated_by=generated_by,
                memory_off=memory_off), opened=(SessionRow(
                    id=session_id, thread_id=thread_id, started_at=dt(stamp),
                    last_turn_at=dt(stamp), closed_at=None, folded_through=0)
                    if opened else None), at=dt(stamp))
        log.debug("turn stored id=%s thread=%s role=%s", turn_id, thread_id, role.value)
        return Turn(
            id=turn_id, thread_id=thread_id, session_id=session_id, role=role, text=text,
            created_at=at, user_id=user_id, speaker=speaker,
            platform_message_id=platform_message_id, generated_by=generated_by,
            memory_off=memory_off,
        ), True

    async def open_session(self, thread_id: int) -> SessionRow | None:
        """Return the thread's open session, or None (from the hot cache when it holds it)."""
        known, session = self.db.hot.session(thread_id)
        if known:
            return session
        generation = self.db.hot.generation
        row = await self.db.one(
            "SELECT * FROM sessions WHERE thread_id = ? AND closed_at IS NULL", (thread_id,)
        )
        session = session_of(row) if row else None
        self.db.hot.put_session(thread_id, session, generation)
        return session

    async def get_session(self, session_id: int) -> SessionRow | None:
        """Return a session by id, or None."""
        row = await self.db.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return session_of(row) if row else None

    async def open_sessions(self) -> list[SessionRow]:
        """Every open session, oldest last turn first (start-up rebuild of the idle jobs)."""
        rows = await self.db.all(
            "SELECT * FROM sessions WHERE closed_at IS NULL ORDER BY last_turn_at, id")
        return [session_of(r) for r in rows]

    async def session_turns(self, session_id: int, *, limit: int | None = None) -> list[Turn]:
        """Return a session's turns, oldest first; with ``limit``, only the newest ``limit``."""
        if limit is None:
            rows = await self.db.all(
                "SELECT * FROM turns WHERE session_id = ? ORDER BY id", (session_id,)
            )
        else:
            rows = await self.db.all(
                "SELECT * FROM (SELECT * FROM turns WHERE session_id = ? ORDER BY id DESC LIMIT ?)"
                " ORDER BY id",
                (session_id, limit),
            )
        return [turn_of(r) for r in rows]

    async def get_turns(self, turn_ids: Iterable[int]) -> list[Turn]:
        """Return the turns with these ids (any number; missing ids are skipped), oldest
        first."""
        return await turns_by_ids(self.db, turn_ids)

    async def working_turns(self, thread_id: int, limit: int
                            ) -> tuple[SessionRow | None, list[Turn]]:
        """The thread's open session and its newest ``limit`` turns, oldest first (``(None,
        [])`` when no session is open): :meth:`open_session` and :meth:`session_turns` in one
        call, answered from the hot cache (``memory/stores/sqlite/hot.py``) when it holds them, read
        from SQLite and cached otherwise."""
        generation = self.db.hot.generation  # before both reads: the pair is cached only if
        session = await self.open_session(thread_id)  # no write ran during either
        if session is None:
            return None, []
        turns = self.db.hot.turns(thread_id, session.id, limit)
        if turns is not None:
            return session, turns
        turns = await self.session_turns(session.id, limit=limit)
        self.db.hot.put_turns(thread_id, session, turns, limit, generation)
        return session, turns

    async def close_session(self, session_id: int, at: datetime, reason: str) -> bool:
        """Mark a session closed and record its consolidation job, in one transaction.

        Returns:
            True when this call closed it; False when it was already closed (idempotent).
        """
        async with self.db.tx(hot=(session_id,)) as tx:
            cur = await tx.execute(
                "UPDATE sessions SET closed_at = ?, close_reason = ? "
                "WHERE id = ? AND closed_at IS NULL",
                (ts(at), reason, session_id),
            )
            if cur.rowcount == 0:
                return False
            await tx.execute(
                "INSERT OR IGNORE INTO work (kind, session_id, created_at) VALUES ('close', ?, ?)",
                (session_id, ts(at)),
            )
        log.info("session closed id=%s reason=%s", session_id, reason)
        return True

    async def close_session_if_idle(self, session_id: int, *, last_turn_before: datetime,
                                    at: datetime, reason: str = "idle") -> bool:
        """Close a session only if it is still open and its last turn is at or before
        ``last_turn_before`` (``now - IDLE_TIMEOUT_SECONDS``, see ``memory.lifecycle``), and
        record its consolidation job, in one transaction: a turn stored meanwhile keeps it open.

        Returns:
            True when this call closed it.
        """
        async with self.db.tx(hot=(session_id,)) as tx:
            cur = await tx.execute(
                "UPDATE sessions SET closed_at = ?, close_reason = ? "
                "WHERE id = ? AND closed_at IS NULL AND last_turn_at <= ?",
                (ts(at), reason, session_id, ts(last_turn_before)),
            )
            if cur.rowcount == 0:
                return False
            await tx.execute(
                "INSERT OR IGNORE INTO work (kind, session_id, created_at) VALUES ('close', ?, ?)",
                (session_id, ts(at)),
            )
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
            row = await self.db.one(
                "SELECT * FROM turns WHERE thread_id = ? AND platform_message_id = ? "
                "AND role = 'user'", (thread_id, platform_message_id))
            if row is None:
                return None
            await tx.execute("UPDATE turns SET text = ? WHERE id = ?", (text, row["id"]))
            await tx.execute(
                "UPDATE fact_candidates SET consumed_at = ? WHERE turn_id = ? "
                "AND consumed_at IS NULL", (ts(now), row["id"]))
        before = turn_of(row)
        after = await self.get_turns([row["id"]])
        return before, after[0]
