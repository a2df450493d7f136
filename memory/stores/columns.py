"""The column form of the memory records: how the stores' tables hold them (SQLite's, and the
in-memory store's, which keeps the same columns) and the shape of the export document's rows.

Timestamps are UTC ISO-8601 text with microseconds (so text order is time order), id lists
JSON arrays, scopes their text form (``user:3``), booleans 0 or 1. A row is anything indexed by
column name (``Row``, a dict).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone

from memory.records import SessionRow, ThreadRow, UserRow
from memory.types import (
    ChatKind,
    Episode,
    Fact,
    FactStatus,
    KeyDatum,
    Role,
    Round,
    Scope,
    ThreadKey,
    Turn,
)

Row = Mapping
"""A stored row: column name to value."""


def ts(value: datetime) -> str:
    """The stored text of an aware datetime.

    Raises:
        ValueError: ``value`` is naive.
    """
    if value.tzinfo is None:
        raise ValueError("naive datetime given to the store; use aware UTC datetimes")
    return value.astimezone(timezone.utc).isoformat(timespec="microseconds")


def dt(value: str | None) -> datetime | None:
    """The aware datetime of a stored text (None for NULL or empty)."""
    return datetime.fromisoformat(value) if value else None


def id_list(value: str) -> tuple[int, ...]:
    """A stored JSON id list."""
    return tuple(int(v) for v in json.loads(value))


def user_of(row: Row) -> UserRow:
    """A user row as a :class:`~memory.records.UserRow`."""
    return UserRow(id=row["id"], display_name=row["display_name"],
                   memory_enabled=bool(row["memory_enabled"]), timezone=row["timezone"],
                   language=row["language"])


def thread_of(row: Row) -> ThreadRow:
    """A thread row as a :class:`~memory.records.ThreadRow`."""
    key = ThreadKey(row["platform"], row["chat_id"], row["topic_id"] or None)
    return ThreadRow(row["id"], key, ChatKind(row["chat_kind"]), row["title"])


def session_of(row: Row) -> SessionRow:
    """A session row as a :class:`~memory.records.SessionRow`."""
    return SessionRow(id=row["id"], thread_id=row["thread_id"],
                      started_at=dt(row["started_at"]), last_turn_at=dt(row["last_turn_at"]),
                      closed_at=dt(row["closed_at"]), folded_through=row["folded_through"])


def turn_of(row: Row) -> Turn:
    """A turn row as a :class:`~memory.types.Turn`."""
    return Turn(
        id=row["id"], thread_id=row["thread_id"], session_id=row["session_id"],
        role=Role(row["role"]), text=row["text"], created_at=dt(row["created_at"]),
        user_id=row["user_id"], speaker=row["speaker"],
        platform_message_id=row["platform_message_id"], generated_by=row["generated_by"],
        memory_off=bool(row["memory_off"]),
    )


def episode_of(row: Row) -> Episode:
    """An episode row as an :class:`~memory.types.Episode`."""
    return Episode(
        id=row["id"], thread_id=row["thread_id"], session_id=row["session_id"],
        summary=row["summary"],
        key_data=tuple(KeyDatum(t, i) for t, i in json.loads(row["key_data"])),
        turn_ids=id_list(row["turn_ids"]), started_at=dt(row["started_at"]),
        ended_at=dt(row["ended_at"]), created_at=dt(row["created_at"]),
        scope=Scope.parse(row["scope"]),
        goal=row["goal"], decisions=tuple(json.loads(row["decisions"])),
        open_tasks=tuple(json.loads(row["open_tasks"])), state=row["state"],
        participants=tuple(json.loads(row["participants"])), status=row["status"],
        folds=row["folds"], source=row["source"] if "source" in row.keys() else "rules",
    )


def round_of(row: Row) -> Round:
    """A round row as a :class:`~memory.types.Round`."""
    return Round(
        id=row["id"], thread_id=row["thread_id"], session_id=row["session_id"],
        turn_ids=id_list(row["turn_ids"]), text=row["text"], created_at=dt(row["created_at"]),
        scope=Scope.parse(row["scope"]),
    )


def fact_of(row: Row) -> Fact:
    """A fact row as a :class:`~memory.types.Fact`."""
    return Fact(
        id=row["id"], user_id=row["user_id"], kind=row["kind"], text=row["text"],
        topic=row["topic"], status=FactStatus(row["status"]),
        created_at=dt(row["created_at"]), valid_from=dt(row["valid_from"]),
        valid_to=dt(row["valid_to"]), last_confirmed_at=dt(row["last_confirmed_at"]),
        last_recalled_at=dt(row["last_recalled_at"]), confirmations=row["confirmations"],
        origin_thread_id=row["origin_thread_id"], origin_kind=ChatKind(row["origin_kind"]),
        origin_title=row["origin_title"], source_turn_ids=id_list(row["source_turn_ids"]),
        lang=row["lang"], value=row["value"], mode=row["mode"],
    )
