"""Episodes, rounds and the work queue in the in-memory store
(:class:`memory.ports.EpisodeStore`, :class:`memory.ports.WorkQueue`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from datetime import datetime

from memory.records import EpisodeDraft, FactOp, WorkOutcome, WorkResult, WorkRow
from memory.stores.columns import dt, episode_of, round_of, ts
from memory.stores.memory_store.facts import confirm, insert_fact
from memory.stores.memory_store.tables import Tables
from memory.types import Episode, Round, Scope

log = logging.getLogger("memory.stores.memory_store")


def episode_columns(draft: EpisodeDraft) -> dict:
    """The columns an episode takes from its draft."""
    return {"summary": draft.summary,
            "key_data": json.dumps([[k.text, k.turn_id] for k in draft.key_data],
                                   ensure_ascii=False),
            "turn_ids": json.dumps(list(draft.turn_ids)), "goal": draft.goal,
            "decisions": json.dumps(list(draft.decisions), ensure_ascii=False),
            "open_tasks": json.dumps(list(draft.open_tasks), ensure_ascii=False),
            "state": draft.state,
            "participants": json.dumps(list(draft.participants), ensure_ascii=False)}


def session_episode_row(t: Tables, session_id: int) -> dict | None:
    """The episode row of a session, or None."""
    return next((e for e in t.episodes.values() if e["session_id"] == session_id), None)


class MemoryEpisodes:
    """:class:`memory.ports.EpisodeStore` on the store's tables."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def session_episode(self, session_id: int) -> Episode | None:
        """The episode of a session (running or closed), or None."""
        row = session_episode_row(self.t, session_id)
        return episode_of(row) if row is not None else None

    async def last_episode(self, thread_id: int) -> Episode | None:
        """The newest closed episode of a thread, or None."""
        rows = [e for e in self.t.episodes.values()
                if e["thread_id"] == thread_id and e["status"] == "closed"]
        newest = max(rows, key=lambda e: (e["ended_at"], e["id"]), default=None)
        return episode_of(newest) if newest is not None else None

    async def get_episodes(self, ids: Iterable[int]) -> dict[int, Episode]:
        """Episodes by id (missing ids absent)."""
        return {i: episode_of(self.t.episodes[i]) for i in ids if i in self.t.episodes}

    async def get_rounds(self, ids: Iterable[int]) -> dict[int, Round]:
        """Rounds by id (missing ids absent)."""
        return {i: round_of(self.t.rounds[i]) for i in ids if i in self.t.rounds}

    async def episodes_in_scope(self, scope: Scope) -> list[Episode]:
        """The episodes of a scope, newest first."""
        rows = [e for e in self.t.episodes.values() if e["scope"] == str(scope)]
        return [episode_of(e) for e in sorted(rows, key=lambda e: (e["ended_at"], e["id"]),
                                               reverse=True)]

    async def write_episode(self, session_id: int, scope: Scope, draft: EpisodeDraft, *,
                            started_at: datetime, ended_at: datetime, now: datetime) -> Episode:
        """Store a closed session's episode again; the session must have none."""
        episode_id = self.t.insert("episodes", {
            "thread_id": self.t.sessions[session_id]["thread_id"], "session_id": session_id,
            "scope": str(scope), **episode_columns(draft), "started_at": ts(started_at),
            "ended_at": ts(ended_at), "created_at": ts(now), "status": "closed", "folds": 0,
            "source": "rules"})
        return episode_of(self.t.episodes[episode_id])

    async def all_episodes(self) -> list[Episode]:
        """Every episode, in id order."""
        return [episode_of(self.t.episodes[i]) for i in sorted(self.t.episodes)]

    async def all_rounds(self) -> list[Round]:
        """Every round, in id order."""
        return [round_of(self.t.rounds[i]) for i in sorted(self.t.rounds)]


class MemoryWorkQueue:
    """:class:`memory.ports.WorkQueue` on the store's tables."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def pending_work(self, *, thread_id: int | None = None,
                           due_at: datetime | None = None) -> list[WorkRow]:
        """Jobs not done, oldest first (of one thread; due at ``due_at``)."""
        t, due = self.t, ts(due_at) if due_at is not None else None
        rows = t.where(t.work, lambda w: w["done_at"] is None and w["session_id"] in t.sessions
                       and (thread_id is None
                            or t.sessions[w["session_id"]]["thread_id"] == thread_id)
                       and (due is None or w["retry_after"] is None or w["retry_after"] <= due))
        return [WorkRow(w["id"], w["kind"], w["session_id"], w["attempts"], w["seq"],
                        dt(w["retry_after"])) for w in rows]

    async def work_done(self, work_id: int) -> bool:
        """True when a job is done (or gone with its session)."""
        row = self.t.work.get(work_id)
        return row is None or row["done_at"] is not None

    async def fail_work(self, work_id: int, error: str, *,
                        retry_after: datetime | None = None) -> None:
        """Count a failed attempt (the job stays pending), not to run before ``retry_after``."""
        row = self.t.work.get(work_id)
        if row is not None:
            self.t.update(self.t.work, work_id, attempts=row["attempts"] + 1,
                          last_error=error[:500],
                          retry_after=ts(retry_after) if retry_after else None)

    async def complete_work(self, work_id: int, outcome: WorkOutcome) -> WorkResult:
        """Write a job's outcome and mark it done, all or nothing, exactly once."""
        t = self.t
        row = t.work.get(work_id)
        if row is None or row["done_at"] is not None:
            return WorkResult(done=False)
        with t.transaction():
            return self._complete(work_id, outcome)

    def _complete(self, work_id: int, o: WorkOutcome) -> WorkResult:
        t, session_id = self.t, o.session_id
        thread_id = t.sessions[session_id]["thread_id"]
        folding = o.folded_through is not None
        stored = session_episode_row(t, session_id)
        if o.episode is not None:
            columns = {**episode_columns(o.episode), "ended_at": ts(o.ended_at),
                       "status": "running" if folding else "closed"}
            if stored is None:
                t.insert("episodes", {
                    "thread_id": thread_id, "session_id": session_id, "scope": str(o.scope),
                    **columns, "started_at": ts(o.started_at), "created_at": ts(o.now),
                    "folds": 1 if folding else 0, "source": "rules"})
            else:
                t.update(t.episodes, stored["id"], **columns,
                         folds=stored["folds"] + (1 if folding else 0))
        elif not folding and stored is not None:
            t.update(t.episodes, stored["id"], status="closed")
        rounds = []
        for draft in o.rounds:
            round_id = t.insert("rounds", {
                "thread_id": thread_id, "session_id": session_id, "scope": str(o.scope),
                "turn_ids": json.dumps(list(draft.turn_ids)), "text": draft.text,
                "created_at": ts(draft.created_at)})
            rounds.append(Round(id=round_id, thread_id=thread_id, session_id=session_id,
                                turn_ids=draft.turn_ids, text=draft.text,
                                created_at=draft.created_at, scope=o.scope))
        t.delete_turns(o.drop_turn_ids)
        if folding:
            mark = t.sessions[session_id]["folded_through"]
            t.update(t.sessions, session_id, folded_through=max(mark, o.folded_through))
        changed: list[int] = []
        if o.episode_source is not None:  # a consolidation model was asked
            changed = self._apply_fact_ops(o.fact_ops, o.now)
            if (row := session_episode_row(t, session_id)) is not None:
                t.update(t.episodes, row["id"], source=o.episode_source)
        t.update(t.work, work_id, done_at=ts(o.now))
        episode = session_episode_row(t, session_id) if o.episode is not None else None
        return WorkResult(True, episode_of(episode) if episode is not None else None,
                          tuple(rounds), tuple(changed))

    def _apply_fact_ops(self, ops: Sequence[FactOp], now: datetime) -> list[int]:
        """The consolidation model's decisions: ``add`` and ``supersede`` insert a fact
        (``mode`` ``llm``) and consume the candidates of its source turn, ``supersede`` only
        while the target is the user's active fact (retiring it), ``confirm`` bumps one."""
        t, changed = self.t, []
        for op in ops:
            target = t.facts.get(op.target_id) if op.target_id is not None else None
            active = (target is not None and target["user_id"] == op.user_id
                      and target["status"] == "active")
            if op.action == "confirm":
                if active:
                    confirm(t, op.target_id, op.source_turn_id, now)
                continue
            if op.action == "supersede" and not active:
                log.info("fact supersede skipped: id=%s no longer active", op.target_id)
                continue
            supersedes = [op.target_id] if op.action == "supersede" else []
            fact_id = insert_fact(t, user_id=op.user_id, kind=op.kind, text=op.text,
                                  topic=op.topic, origin=op.origin,
                                  source_turn_ids=[op.source_turn_id], lang=op.lang,
                                  scope=op.scope, now=now, valid_from=op.valid_from, mode="llm",
                                  supersedes=supersedes)
            for key, cand in list(t.candidates.items()):
                if cand["turn_id"] == op.source_turn_id and cand["consumed_at"] is None:
                    t.update(t.candidates, key, consumed_at=ts(now))
            changed += [fact_id, *supersedes]
        return changed
