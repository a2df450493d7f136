"""The work queue in SQLite (:class:`memory.ports.WorkQueue`): consolidation jobs, each done in
the transaction that writes its outcome (episode, rounds, fold mark, dropped turns and the
consolidation model's fact decisions), so a job's result is written exactly once."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime

from memory.records import FactOp, WorkOutcome, WorkResult, WorkRow
from memory.stores.sqlite.connection import Database
from memory.stores.sqlite.facts import confirm_in, insert_fact
from memory.stores.sqlite.rows import dt, episode_of, ts
from memory.types import Round

log = logging.getLogger("memory.stores.sqlite")


class SQLiteWorkQueue:
    """:class:`memory.ports.WorkQueue` on the store's connection."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def pending_work(self, *, thread_id: int | None = None,
                           due_at: datetime | None = None) -> list[WorkRow]:
        """Return consolidation jobs not yet done, oldest first (optionally of one thread).

        With ``due_at``, only jobs that may run then: never failed, or failed with a
        ``retry_after`` at or before ``due_at``.
        """
        sql = ("SELECT w.* FROM work w JOIN sessions s ON s.id = w.session_id "
               "WHERE w.done_at IS NULL")
        args: tuple = ()
        if thread_id is not None:
            sql += " AND s.thread_id = ?"
            args = (thread_id,)
        if due_at is not None:
            sql += " AND (w.retry_after IS NULL OR w.retry_after <= ?)"
            args += (ts(due_at),)
        rows = await self.db.all(sql + " ORDER BY w.id", args)
        return [WorkRow(r["id"], r["kind"], r["session_id"], r["attempts"], r["seq"],
                        dt(r["retry_after"]) if r["retry_after"] else None) for r in rows]

    async def work_done(self, work_id: int) -> bool:
        """True when a job is done (or gone with its session)."""
        row = await self.db.one("SELECT done_at FROM work WHERE id = ?", (work_id,))
        return row is None or row["done_at"] is not None

    async def fail_work(self, work_id: int, error: str, *,
                        retry_after: datetime | None = None) -> None:
        """Count a failed attempt of a job (it stays pending), not to be tried again before
        ``retry_after`` (aware; None: at the next run)."""
        async with self.db.tx(hot=()) as tx:
            await tx.execute(
                "UPDATE work SET attempts = attempts + 1, last_error = ?, retry_after = ? "
                "WHERE id = ?",
                (error[:500], ts(retry_after) if retry_after else None, work_id),
            )

    async def complete_work(self, work_id: int, outcome: WorkOutcome) -> WorkResult:
        """Write a job's outcome and mark the job done, in one transaction.

        The session's episode is inserted or updated in place (one episode per session: a fold
        updates the running episode, the close finishes it); ``folded_through`` (folds only)
        moves the session's fold mark; ``drop_turn_ids`` are deleted (turns said with memory
        off); the language model's fact decisions (``fact_ops``, :meth:`_apply_fact_ops`) and
        the episode's source are written after the episode. Exactly once: a job already done
        writes nothing and returns ``done`` False.
        """
        session_id, scope, episode = outcome.session_id, outcome.scope, outcome.episode
        rounds, folded_through, now = outcome.rounds, outcome.folded_through, outcome.now
        started_at, ended_at, drop_turn_ids = (outcome.started_at, outcome.ended_at,
                                               outcome.drop_turn_ids)
        status = "running" if folded_through is not None else "closed"
        changed: list[int] = []
        # the session's own turns and row change (fold mark, dropped memory-off turns); the
        # language model's fact decisions touch facts and episodes only
        async with self.db.tx(hot=(session_id,)) as tx:
            row = await self.db.one("SELECT done_at FROM work WHERE id = ?", (work_id,))
            if row is None or row["done_at"] is not None:
                return WorkResult(done=False)
            sess = await self.db.one("SELECT thread_id FROM sessions WHERE id = ?", (session_id,))
            thread_id = sess["thread_id"]
            stored_episode = None
            if episode is not None:
                await tx.execute(
                    "INSERT INTO episodes (thread_id, session_id, scope, summary, key_data, turn_ids,"
                    " started_at, ended_at, created_at, goal, decisions, open_tasks, state,"
                    " participants, status, folds) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                    "ON CONFLICT (session_id) DO UPDATE SET summary = excluded.summary, "
                    "key_data = excluded.key_data, turn_ids = excluded.turn_ids, "
                    "ended_at = excluded.ended_at, goal = excluded.goal, "
                    "decisions = excluded.decisions, open_tasks = excluded.open_tasks, "
                    "state = excluded.state, participants = excluded.participants, "
                    "status = excluded.status, folds = episodes.folds + excluded.folds",
                    (thread_id, session_id, str(scope), episode.summary,
                     json.dumps([[k.text, k.turn_id] for k in episode.key_data], ensure_ascii=False),
                     json.dumps(list(episode.turn_ids)), ts(started_at), ts(ended_at), ts(now),
                     episode.goal, json.dumps(list(episode.decisions), ensure_ascii=False),
                     json.dumps(list(episode.open_tasks), ensure_ascii=False), episode.state,
                     json.dumps(list(episode.participants), ensure_ascii=False), status,
                     1 if folded_through is not None else 0),
                )
                stored_episode = episode_of(await self.db.one(
                    "SELECT * FROM episodes WHERE session_id = ?", (session_id,)))
            elif folded_through is None:
                await tx.execute("UPDATE episodes SET status = 'closed' WHERE session_id = ?",
                                 (session_id,))
            stored_rounds = []
            for draft in rounds:
                cur = await tx.execute(
                    "INSERT INTO rounds (thread_id, session_id, scope, turn_ids, text, created_at)"
                    " VALUES (?,?,?,?,?,?)",
                    (thread_id, session_id, str(scope), json.dumps(list(draft.turn_ids)), draft.text,
                     ts(draft.created_at)),
                )
                stored_rounds.append(Round(
                    id=cur.lastrowid, thread_id=thread_id, session_id=session_id,
                    turn_ids=draft.turn_ids, text=draft.text, created_at=draft.created_at,
                    scope=scope,
                ))
            if drop_turn_ids:
                marks = ",".join("?" * len(drop_turn_ids))
                await tx.execute(f"DELETE FROM turns WHERE id IN ({marks})", list(drop_turn_ids))
            if folded_through is not None:
                await tx.execute(
                    "UPDATE sessions SET folded_through = max(folded_through, ?) WHERE id = ?",
                    (folded_through, session_id))
            if outcome.episode_source is not None:  # a consolidation model was asked
                changed = await self._apply_fact_ops(tx, outcome.fact_ops, now)
                await tx.execute("UPDATE episodes SET source = ? WHERE session_id = ?",
                                 (outcome.episode_source, session_id))
                if stored_episode is not None:  # its source changed
                    stored_episode = episode_of(await self.db.one(
                        "SELECT * FROM episodes WHERE session_id = ?", (session_id,)))
            await tx.execute("UPDATE work SET done_at = ? WHERE id = ?", (ts(now), work_id))
        return WorkResult(True, stored_episode, tuple(stored_rounds), tuple(changed))

    async def _apply_fact_ops(self, tx: Database, ops: Sequence[FactOp],
                              now: datetime) -> list[int]:
        """Apply a language model's validated fact decisions inside the transaction of
        :meth:`complete_work` (all or nothing with the episode and the work's ``done_at``).

        ``add`` inserts a fact (``mode`` ``llm``) through
        :func:`~memory.stores.sqlite.facts.insert_fact` (the length cap) and consumes the
        rules' repetition candidates of its source turn; ``supersede`` does the same and
        retires ``target_id``, but only while that fact is still active and the user's (a fact
        deleted or changed meanwhile is left alone and nothing is added); ``confirm`` bumps an
        active fact of the user.

        Returns:
            The ids of facts whose index rows must be rewritten (added and superseded ones).
        """
        changed: list[int] = []
        for op in ops:
            target = None
            if op.target_id is not None:
                target = await self.db.one(
                    "SELECT id FROM facts WHERE id = ? AND user_id = ? AND status = 'active'",
                    (op.target_id, op.user_id))
            if op.action == "confirm":
                if target is not None and await confirm_in(tx, op.target_id,
                                                                 op.source_turn_id, now):
                    log.info("fact confirmed id=%s (model)", op.target_id)
                continue
            if op.action == "supersede" and target is None:
                log.info("fact supersede skipped: id=%s no longer active", op.target_id)
                continue
            supersedes = [op.target_id] if op.action == "supersede" else []
            fact_id = await insert_fact(
                tx, user_id=op.user_id, kind=op.kind, text=op.text, topic=op.topic,
                origin=op.origin, source_turn_ids=[op.source_turn_id], lang=op.lang,
                scope=op.scope, now=now, valid_from=op.valid_from, mode="llm",
                supersedes=supersedes)
            await tx.execute(
                "UPDATE fact_candidates SET consumed_at = ? WHERE turn_id = ? AND "
                "consumed_at IS NULL", (ts(now), op.source_turn_id))
            changed += [fact_id, *supersedes]
            log.info("fact %s id=%s user=%s kind=%s (model)",
                     "written" if not supersedes else "superseded", fact_id, op.user_id, op.kind)
        return changed
