"""A store left at any earlier schema version opens with the current one: every pending
migration applies on top of what that version holds (rows included), the result has the same
schema as a new store, and what the newer migrations add starts empty (an update handled by an
earlier version is not handled again, no reply is due for turns an earlier version stored).

Backends with a schema are the entries of :data:`SCHEMAS`: how many versions they had, how to
leave a store at one of them with one conversation in it, how to read its schema and version.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from memory.stores.sqlite import SQLiteStore
from memory.stores.sqlite.migrations import MIGRATIONS

_NOW = "2026-01-05T10:00:00+00:00"


def _sqlite_at_version(path: Path, version: int) -> None:
    """A database as a release of schema ``version`` left it, with one conversation (and,
    from version 6 on, one handled platform update) in it."""
    conn = sqlite3.connect(path)
    try:
        for number, script in enumerate(MIGRATIONS[:version], start=1):
            conn.executescript(f"BEGIN; {script}; PRAGMA user_version={number}; COMMIT;")
        if version >= 1:  # the columns of version 1 only: later ones have defaults or are NULL
            conn.executescript(f"""
                INSERT INTO users (id, display_name, created_at) VALUES (1, 'Ada', '{_NOW}');
                INSERT INTO accounts (platform, platform_user_id, user_id)
                    VALUES ('telegram', '42', 1);
                INSERT INTO threads (id, platform, chat_id, chat_kind, created_at)
                    VALUES (1, 'telegram', '42', 'private', '{_NOW}');
                INSERT INTO sessions (id, thread_id, started_at, last_turn_at)
                    VALUES (1, 1, '{_NOW}', '{_NOW}');
                INSERT INTO turns (thread_id, session_id, user_id, role, text, created_at,
                                   platform_message_id)
                    VALUES (1, 1, 1, 'user', 'I keep bees on the roof', '{_NOW}', '7');
            """)
        if version >= 6:
            conn.execute("INSERT INTO seen_updates (platform, update_id, seen_at) "
                         "VALUES ('telegram', 'bot:1001', ?)", (_NOW,))
        conn.commit()
    finally:
        conn.close()


def _sqlite_schema(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                            "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").fetchall()


async def _sqlite_checks(store: SQLiteStore) -> None:
    assert (await store.db.one("PRAGMA user_version"))[0] == len(MIGRATIONS)
    assert (await store.db.one("PRAGMA integrity_check"))[0] == "ok"
    assert await store.db.all("PRAGMA foreign_key_check") == []


@dataclass(frozen=True)
class Schema:
    """How one backend's schema versions are exercised."""

    versions: int  # earlier versions: 0 .. versions - 1
    at_version: Callable[[Path, int], None]
    open: Callable  # path -> awaitable store
    schema: Callable[[Path], object]
    checks: Callable  # store -> awaitable: the backend's own integrity checks


SCHEMAS = {"sqlite": Schema(len(MIGRATIONS), _sqlite_at_version, SQLiteStore.open,
                            _sqlite_schema, _sqlite_checks)}


@pytest.mark.parametrize("backend, version", [(name, v) for name, s in sorted(SCHEMAS.items())
                                              for v in range(s.versions)])
async def test_every_earlier_version_migrates_to_the_current_schema(tmp_path, backend, version):
    schema = SCHEMAS[backend]
    new = tmp_path / "new.db"
    await (await schema.open(new)).close()
    old = tmp_path / "old.db"
    schema.at_version(old, version)

    store = await schema.open(old)
    try:
        await schema.checks(store)
        if version >= 1:
            turns = await store.conversations.session_turns(1)
            assert [t.text for t in turns] == ["I keep bees on the roof"]
            assert await store.deliveries.due_messages("telegram") == []  # an earlier version's
            assert (await store.identities.get_user(1)).language is None  # none chosen yet
        if version >= 6:
            assert await store.deliveries.update_state("telegram", "bot:1001") == "handled"
            assert await store.deliveries.received_updates("telegram") == []
    finally:
        await store.close()
    assert schema.schema(old) == schema.schema(new)
