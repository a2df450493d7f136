"""``memory-bot migrate-to-postgres``: a SQLite data folder (real SQLite + LanceDB, written by
the real engine) copied by the real command into the real PostgreSQL the tests start; every
row of every table arrives, every user's memory reads the same through the ports, recall
works on the copy, and a database that is not empty is refused with nothing written."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

import asyncpg
import pytest

from bot.app import build_app
from bot.settings import Settings
from memory.stores.columns import ts
from memory.stores.postgres import PostgresStore
from memory.stores.postgres.sqlite_copy import COPY_ORDER
from memory.stores.sqlite import SQLiteStore
from memory.types import ChatKind, FactStatus, IncomingMessage, ThreadKey
from tests.conftest import make_harness

pytestmark = pytest.mark.postgres

BIN = Path(sys.executable).with_name("memory-bot")
ALL = [FactStatus.ACTIVE, FactStatus.SUPERSEDED, FactStatus.ARCHIVED]


def _url(pg_schema) -> str:
    url, schema = pg_schema
    return f"{url}&search_path={quote(schema + ',public')}"


def _run(args, url, tmp_path):
    env = {**os.environ, "DATABASE_URL": url, "EMBEDDER": "hashing",
           "MEMORY_BOT_DATA_DIR": str(tmp_path / "live")}
    return subprocess.run([str(BIN), *args], env=env, capture_output=True, text=True,
                          timeout=300)


async def _seed(folder: Path, clock) -> None:
    """Two users, a group chat with memory switched off by its admin, a corrected fact (its
    history), closed sessions (episodes), a language setting, and a forgotten fact."""
    h = await make_harness(folder, clock, lance=True)
    try:
        await h.say("remember I live in Vienna", user="alice")
        clock.advance(86400)
        await h.say("remember I live in Linz now", user="alice")  # supersedes Vienna
        await h.say("remember my cat is called Snorkelwhip", user="alice")
        await h.say("I am planning a trip to Lisbon on 2026-12-20 for 3 days", user="alice")
        await h.say("/new", user="alice")
        await h.say("/language zh", user="bob")
        await h.say("remember I play the cello", user="bob")
        group = dict(chat="band", kind=ChatKind.GROUP)
        await h.say("we rehearse every Tuesday in the old mill", user="bob", **group)
        await h.say("bring the spare strings next time", user="alice", **group)
        await h.engine.handle(replace(h.message("/memory_off chat", user="bob", **group),
                                      is_admin=True))
        await h.say("/new", user="bob", **group)
        matching = (await h.say("/forget Snorkelwhip", user="alice"))[0]
        number = re.search(r"/forget (\d+)", matching).group(1)
        await h.say(f"/forget {number}", user="alice")
        await h.say("what do I play?", user="bob")
    finally:
        await h.index.close()
        await h.memory.store.close()


def _sqlite_tables(path: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(path)
    try:
        out = {}
        for table in COPY_ORDER:
            names = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            out[table] = sorted((tuple(sorted(zip(names, row)))
                                 for row in conn.execute(f"SELECT * FROM {table}")), key=repr)
        return out
    finally:
        conn.close()


async def _pg_tables(pg_schema) -> dict[str, list[tuple]]:
    conn = await asyncpg.connect(pg_schema[0])
    try:
        await conn.execute(f'SET search_path = "{pg_schema[1]}"')
        out = {}
        for table in COPY_ORDER:
            rows = await conn.fetch(f"SELECT * FROM {table}")
            out[table] = sorted((tuple(sorted(
                (k, ts(v) if isinstance(v, datetime) else v) for k, v in r.items()
                if k != "received")) for r in rows), key=repr)
        return out
    finally:
        await conn.close()


async def _memory_of(store) -> dict:
    """What each user can see of their memory through the ports: facts of every status
    (history), episodes and turns of their scope, settings, the export's rows."""
    out = {}
    for platform, user in (("console", "alice"), ("console", "bob")):
        u = await store.identities.find_user(platform, user)
        rows = await store.privacy.user_rows(u.id)
        out[user] = {"user": u, "facts": await store.facts.list_facts(u.id, ALL),
                     "rows": {k: sorted(map(repr, v)) for k, v in rows.items()}}
    return out


async def test_a_sqlite_folder_is_copied_into_postgresql_with_nothing_lost(
        tmp_path, pg_schema, clock):
    source = tmp_path / "src"
    await _seed(source, clock)
    url = _url(pg_schema)
    done = _run(["migrate-to-postgres", str(source)], url, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "copied" in done.stdout and "turns" in done.stdout

    before = _sqlite_tables(source / "memory.db")
    after = await _pg_tables(pg_schema)
    assert {t: len(r) for t, r in after.items()} == {t: len(r) for t, r in before.items()}
    assert before["facts"] and before["episodes"] and before["chat_settings"]
    assert before["audit_log"]  # the forgetting is on record
    for table in COPY_ORDER:  # every column of every row, ids kept
        assert after[table] == before[table], table

    sqlite_store = await SQLiteStore.open(source / "memory.db")
    pg_store = await PostgresStore.open(url)
    try:
        expected, got = await _memory_of(sqlite_store), await _memory_of(pg_store)
        assert got == expected
        alice = got["alice"]
        assert {f.status for f in alice["facts"]} >= {FactStatus.ACTIVE, FactStatus.SUPERSEDED}
        assert not any("Snorkelwhip" in f.text for f in alice["facts"])  # stays forgotten
        assert got["bob"]["user"].language == "zh"
        assert await pg_store.identities.chat_memory_enabled("console", "band") is False
    finally:
        await sqlite_store.close()
        await pg_store.close()

    # recall on the copy: the bot on PostgreSQL answers from the migrated memory, and new
    # rows get ids after the copied ones
    settings = Settings(data_dir=tmp_path / "live", embedder="hashing", database_url=url)
    app = await build_app(settings)
    try:
        ask = IncomingMessage(ThreadKey("console", "alice"), ChatKind.PRIVATE, "alice", "Alice",
                              "Do I live in Linz or in Vienna?", clock.now(),
                              platform_message_id="900")
        reply = " ".join(await app.engine.handle(ask))
        assert "Linz" in reply
        why = " ".join(await app.engine.handle(replace(ask, text="/memories",
                                                       platform_message_id="901")))
        assert "Snorkelwhip" not in why and "Linz" in why
    finally:
        await app.aclose()


async def test_a_database_that_is_not_empty_is_refused_and_left_as_it_was(
        tmp_path, pg_schema, clock):
    source = tmp_path / "src"
    h = await make_harness(source, clock)
    await h.say("remember I live in Vienna", user="alice")
    await h.memory.store.close()
    url = _url(pg_schema)
    assert _run(["migrate-to-postgres", str(source)], url, tmp_path).returncode == 0
    before = await _pg_tables(pg_schema)
    again = _run(["migrate-to-postgres", str(source)], url, tmp_path)
    assert again.returncode == 2
    assert "not empty" in again.stderr and "users: 1 rows" in again.stderr
    assert await _pg_tables(pg_schema) == before
    unset = _run(["migrate-to-postgres", str(source)], "", tmp_path)
    assert unset.returncode == 2 and "DATABASE_URL" in unset.stderr
