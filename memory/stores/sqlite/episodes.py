"""Episodes and rounds in SQLite (:class:`memory.ports.EpisodeStore`): one episode per session,
and the rounds (a user turn with its replies) recalled on their own."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

from memory.records import EpisodeDraft
from memory.stores.sqlite.connection import Database
from memory.stores.sqlite.rows import by_ids, episode_of, round_of, ts
from memory.types import Episode, Round, Scope


class SQLiteEpisodes:
    """:class:`memory.ports.EpisodeStore` on the store's connection."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def session_episode(self, session_id: int) -> Episode | None:
        """The episode of a session (running or closed), or None."""
        row = await self.db.one("SELECT * FROM episodes WHERE session_id = ?", (session_id,))
        return episode_of(row) if row else None

    async def last_episode(self, thread_id: int) -> Episode | None:
        """Return the newest closed episode of a thread, or None."""
        row = await self.db.one(
            "SELECT * FROM episodes WHERE thread_id = ? AND status = 'closed' "
            "ORDER BY ended_at DESC, id DESC LIMIT 1",
            (thread_id,),
        )
        return episode_of(row) if row else None

    async def get_episodes(self, ids: Iterable[int]) -> dict[int, Episode]:
        """Return episodes by id (missing ids are absent from the result)."""
        return {e.id: e for e in await by_ids(self.db, "episodes", ids, episode_of)}

    async def get_rounds(self, ids: Iterable[int]) -> dict[int, Round]:
        """Return rounds by id (missing ids are absent from the result)."""
        return {r.id: r for r in await by_ids(self.db, "rounds", ids, round_of)}

    async def episodes_in_scope(self, scope: Scope) -> list[Episode]:
        """Return the episodes of a scope, newest first."""
        rows = await self.db.all(
            "SELECT * FROM episodes WHERE scope = ? ORDER BY ended_at DESC, id DESC", (str(scope),)
        )
        return [episode_of(r) for r in rows]

    async def write_episode(self, session_id: int, scope: Scope, draft: EpisodeDraft, *,
                            started_at: datetime, ended_at: datetime, now: datetime) -> Episode:
        """Store a closed session's episode again (re-summarised after ``/forget N`` deleted
        turns it cited); the session must have none."""
        async with self.db.tx() as tx:
            sess = await self.db.one("SELECT thread_id FROM sessions WHERE id = ?", (session_id,))
            await tx.execute(
                "INSERT INTO episodes (thread_id, session_id, scope, summary, key_data, turn_ids,"
                " started_at, ended_at, created_at, goal, decisions, open_tasks, state,"
                " participants, status, folds) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,'closed',0)",
                (sess["thread_id"], session_id, str(scope), draft.summary,
                 json.dumps([[k.text, k.turn_id] for k in draft.key_data], ensure_ascii=False),
                 json.dumps(list(draft.turn_ids)), ts(started_at), ts(ended_at), ts(now),
                 draft.goal, json.dumps(list(draft.decisions), ensure_ascii=False),
                 json.dumps(list(draft.open_tasks), ensure_ascii=False), draft.state,
                 json.dumps(list(draft.participants), ensure_ascii=False)))
        return episode_of(await self.db.one("SELECT * FROM episodes WHERE session_id = ?",
                                             (session_id,)))

    async def all_episodes(self) -> list[Episode]:
        """Every episode (for reindexing)."""
        return [episode_of(r) for r in await self.db.all("SELECT * FROM episodes ORDER BY id")]

    async def all_rounds(self) -> list[Round]:
        """Every round (for reindexing)."""
        return [round_of(r) for r in await self.db.all("SELECT * FROM rounds ORDER BY id")]
