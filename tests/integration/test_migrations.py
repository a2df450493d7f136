"""A database left at any earlier schema version opens with the current one: every pending
migration applies on top of what that version holds (rows included), the result has the same
schema as a new database, and what the newer migrations add starts empty (an update handled by
an earlier version is not handled again, no reply is due for turns an earlier version stored).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory.stores.migrations import MIGRATIONS
from memory.stores.sqlite import SQLiteStore

_NOW = "2026-01-05T10:00:00+00:00"


def _at_version(path: Path, version: int) -> None:
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


def _schema(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                            "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").fetchall()


@pytest.mark.parametrize("version", range(len(MIGRATIONS)))
async def test_every_earlier_version_migrates_to_the_current_schema(tmp_path, version):
    new = tmp_path / "new.db"
    await (await SQLiteStore.open(new)).close()
    old = tmp_path / "old.db"
    _at_version(old, version)

    store = await SQLiteStore.open(old)
    try:
        assert (await store._one("PRAGMA user_version"))[0] == len(MIGRATIONS)
        assert (await store._one("PRAGMA integrity_check"))[0] == "ok"
        assert await store._all("PRAGMA foreign_key_check") == []
        if version >= 1:
            turns = await store.conversations.session_turns(1)
            assert [t.text for t in turns] == ["I keep bees on the roof"]
            assert await store.deliveries.due_messages("telegram") == []  # stored by an earlier version
            assert (await store.identities.get_user(1)).language is None  # no /language chosen yet
        if version >= 6:
            assert await store.deliveries.update_state("telegram", "bot:1001") == "handled"
            assert await store.deliveries.received_updates("telegram") == []
    finally:
        await store.close()
    assert _schema(old) == _schema(new)
