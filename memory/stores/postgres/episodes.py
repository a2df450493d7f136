"""Episodes and rounds in PostgreSQL (:class:`memory.ports.EpisodeStore`): one episode per
session, and the rounds (a user turn with its replies) recalled on their own."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

from memory.records import EpisodeDraft
from memory.stores.postgres.database import Database
from memory.stores.postgres.rows import by_ids, episode_of, round_of
from memory.types import Episode, Round, Scope


class PgEpisodes:
    """:class:`memory.ports.EpisodeStore` on the store's pool."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def session_episode(self, session_id: int) -> Episode | None:
        """The episode of a session (running or closed), or None."""
        row = await self.db.one("SELECT * FROM episodes WHERE session_id = $1", (session_id,))
        return episode_of(row) if row else None

    async def last_episode(self, thread_id: int) -> Episode | None:
        """Return the newest closed episode of a thread, or None."""
        row = await self.db.one(
            "SELECT * FROM episodes WHERE thread_id = $1 AND status = 'closed' "
            "ORDER BY ended_at DESC, id DESC LIMIT 1", (thread_id,))
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
            "SELECT * FROM episodes WHERE scope = $1 ORDER BY ended_at DESC, id DESC",
            (str(scope),))
        return [episode_of(r) for r in rows]

    async def write_episode(self, session_id: int, scope: Scope, draft: EpisodeDraft, *,
                            started_at: datetime, ended_at: datetime, now: datetime) -> Episode:
        """Store a closed session's episode again (re-summarised after ``/forget N`` deleted
        turns it cited); the session must have none."""
        row = await self.db.one(
            "INSERT INTO episodes (thread_id, session_id, scope, summary, key_data, turn_ids,"
            " started_at, ended_at, created_at, goal, decisions, open_tasks, state,"
            " participants, status, folds) SELECT thread_id, id, $2,$3,$4,$5,$6,$7,$8,$9,$10,"
            "$11,$12,$13,'closed',0 FROM sessions WHERE id = $1 RETURNING *",
            (session_id, str(scope), draft.summary,
             json.dumps([[k.text, k.turn_id] for k in draft.key_data], ensure_ascii=False),
             json.dumps(list(draft.turn_ids)), started_at, ended_at, now,
             draft.goal, json.dumps(list(draft.decisions), ensure_ascii=False),
             json.dumps(list(draft.open_tasks), ensure_ascii=False), draft.state,
             json.dumps(list(draft.participants), ensure_ascii=False)))
        return episode_of(row)

    async def all_episodes(self) -> list[Episode]:
        """Every episode (for reindexing)."""
        return [episode_of(r) for r in await self.db.all("SELECT * FROM episodes ORDER BY id")]

    async def all_rounds(self) -> list[Round]:
        """Every round (for reindexing)."""
        return [round_of(r) for r in await self.db.all("SELECT * FROM rounds ORDER BY id")]
