"""The work queue in PostgreSQL (:class:`memory.ports.WorkQueue`): consolidation jobs, each done
in the transaction that writes its outcome (episode, rounds, fold mark, dropped turns and the
consolidation model's fact decisions). That transaction locks the job's row first
(``SELECT ... FOR UPDATE``), so of two processes completing one job the second waits, then
finds it done and writes nothing: exactly once across processes."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime

from memory.records import FactOp, WorkOutcome, WorkResult, WorkRow
from memory.stores.postgres.database import Database
from memory.stores.postgres.facts import confirm_in, insert_fact
from memory.stores.postgres.rows import dt, episode_of
from memory.types import Round

log = logging.getLogger("memory.stores.postgres")


class PgWorkQueue:
    """:class:`memory.ports.WorkQueue` on the store's pool."""

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
        args: list = []
        if thread_id is not None:
            args.append(thread_id)
            sql += f" AND s.thread_id = ${len(args)}"
        if due_at is not None:
            args.append(due_at)
            sql += f" AND (w.retry_after IS NULL OR w.retry_after <= ${len(args)})"
        rows = await self.db.all(sql + " ORDER BY w.id", args)
        return [WorkRow(r["id"], r["kind"], r["session_id"], r["attempts"], r["seq"],
                        dt(r["retry_after"]) if r["retry_after"] else None) for r in rows]

    async def work_done(self, work_id: int) -> bool:
        """True when a job is done (or gone with its session)."""
        row = await self.db.one("SELECT done_at FROM work WHERE id = $1", (work_id,))
        return row is None or row["done_at"] is not None

    async def fail_work(self, work_id: int, error: str, *,
                        retry_after: datetime | None = None) -> None:
        """Count a failed attempt of a job (it stays pending), not to be tried again before
        ``retry_after`` (aware; None: at the next run)."""
        await self.db.execute(
            "UPDATE work SET attempts = attempts + 1, last_error = $1, retry_after = $2 "
            "WHERE id = $3", (error[:500], retry_after, work_id))

    async def complete_work(self, work_id: int, outcome: WorkOutcome) -> WorkResult:
        """Write a job's outcome and mark the job done, in one transaction holding the job's
        row lock (the SQLite store's rules: the session's one episode inserted or updated in
        place, the fold mark, dropped memory-off turns, the model's fact decisions and the
        episode's source). A job already done writes nothing and returns ``done`` False."""
        session_id, scope, episode = outcome.session_id, outcome.scope, outcome.episode
        rounds, folded_through, now = outcome.rounds, outcome.folded_through, outcome.now
        status = "running" if folded_through is not None else "closed"
        changed: list[int] = []
        async with self.db.tx() as tx:
            row = await tx.one("SELECT done_at FROM work WHERE id = $1 FOR UPDATE", (work_id,))
            if row is None or row["done_at"] is not None:
                return WorkResult(done=False)
            thread_id = await tx.value("SELECT thread_id FROM sessions WHERE id = $1",
                                       (session_id,))
            stored_episode = None
            if episode is not None:
                stored_episode = episode_of(await tx.one(
                    "INSERT INTO episodes AS e (thread_id, session_id, scope, summary, key_data,"
                    " turn_ids, started_at, ended_at, created_at, goal, decisions, open_tasks,"
                    " state, participants, status, folds) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,"
                    "$10,$11,$12,$13,$14,$15,$16) "
                    "ON CONFLICT (session_id) DO UPDATE SET summary = excluded.summary, "
                    "key_data = excluded.key_data, turn_ids = excluded.turn_ids, "
                    "ended_at = excluded.ended_at, goal = excluded.goal, "
                    "decisions = excluded.decisions, open_tasks = excluded.open_tasks, "
                    "state = excluded.state, participants = excluded.participants, "
                    "status = excluded.status, folds = e.folds + excluded.folds RETURNING *",
                    (thread_id, session_id, str(scope), episode.summary,
                     json.dumps([[k.text, k.turn_id] for k in episode.key_data],
                                ensure_ascii=False),
                     json.dumps(list(episode.turn_ids)), outcome.started_at, outcome.ended_at,
                     now, episode.goal, json.dumps(list(episode.decisions), ensure_ascii=False),
                     json.dumps(list(episode.open_tasks), ensure_ascii=False), episode.state,
                     json.dumps(list(episode.participants), ensure_ascii=False), status,
                     1 if folded_through is not None else 0)))
            elif folded_through is None:
                await tx.execute("UPDATE episodes SET status = 'closed' WHERE session_id = $1",
                                 (session_id,))
            stored_rounds = []
            for draft in rounds:
                round_id = await tx.value(
                    "INSERT INTO rounds (thread_id, session_id, scope, turn_ids, text, "
                    "created_at) VALUES ($1,$2,$3,$4,$5,$6) RETURNING id",
                    (thread_id, session_id, str(scope), json.dumps(list(draft.turn_ids)),
                     draft.text, draft.created_at))
                stored_rounds.append(Round(
                    id=round_id, thread_id=thread_id, session_id=session_id,
                    turn_ids=draft.turn_ids, text=draft.text, created_at=draft.created_at,
                    scope=scope))
            if outcome.drop_turn_ids:
                await tx.execute("DELETE FROM turns WHERE id = ANY($1::bigint[])",
                                 (list(outcome.drop_turn_ids),))
            if folded_through is not None:
                await tx.execute(
                    "UPDATE sessions SET folded_through = greatest(folded_through, $1) "
                    "WHERE id = $2", (folded_through, session_id))
            if outcome.episode_source is not None:  # a consolidation model was asked
                changed = await self._apply_fact_ops(tx, outcome.fact_ops, now)
                source = await tx.one(
                    "UPDATE episodes SET source = $1 WHERE session_id = $2 RETURNING *",
                    (outcome.episode_source, session_id))
                if stored_episode is not None and source is not None:  # its source changed
                    stored_episode = episode_of(source)
            await tx.execute("UPDATE work SET done_at = $1 WHERE id = $2", (now, work_id))
        return WorkResult(True, stored_episode, tuple(stored_rounds), tuple(changed))

    async def _apply_fact_ops(self, tx: Database, ops: Sequence[FactOp],
                              now: datetime) -> list[int]:
        """Apply a language model's validated fact decisions inside the transaction of
        :meth:`complete_work` (all or nothing with the episode and the work's ``done_at``):
        ``add`` inserts a fact (``mode`` ``llm``) and consumes the rules' candidates of its
        source turn; ``supersede`` does the same and retires ``target_id``, only while that
        fact is still the user's active one (its row locked); ``confirm`` bumps an active fact
        of the user.

        Returns:
            The ids of facts whose index rows must be rewritten (added and superseded ones).
        """
        changed: list[int] = []
        for op in ops:
            target = None
            if op.target_id is not None:
                target = await tx.one(
                    "SELECT id FROM facts WHERE id = $1 AND user_id = $2 AND status = 'active' "
                    "FOR UPDATE", (op.target_id, op.user_id))
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
                "UPDATE fact_candidates SET consumed_at = $1 WHERE turn_id = $2 AND "
                "consumed_at IS NULL", (now, op.source_turn_id))
            changed += [fact_id, *supersedes]
            log.info("fact %s id=%s user=%s kind=%s (model)",
                     "written" if not supersedes else "superseded", fact_id, op.user_id, op.kind)
        return changed
