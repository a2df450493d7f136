"""`memory-bot backup` / `restore` on real SQLite + LanceDB: a backup taken while an
app writes turns and facts, restored into a fresh folder, gives the same users, facts and
episodes, and recall works; the command line refuses unsafe destinations with exit 2."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import lancedb
import pytest

from adapters.embedders import HashingEmbedder
from adapters.models import OfflineChatModel
from bot.app import build_app
from bot.backup import BackupRefused, backup, restore
from bot.settings import load_settings
from memory.backup import index_expectations
from memory.stores.lancedb import table_name
from tests.conftest import Harness

BIN = Path(sys.executable).with_name("memory-bot")
USERS = ("alice", "bob", "carol")


def _settings(data: Path):
    return load_settings({"MEMORY_BOT_DATA_DIR": str(data), "EMBEDDER": "hashing"},
                         env_file=None)


async def _app(data: Path, clock) -> Harness:
    app = await build_app(_settings(data), embedder=HashingEmbedder(), clock=clock,
                          model=OfflineChatModel())
    await app.start()
    h = Harness(app.memory, app.engine, clock)
    h.app = app
    return h


async def _state(store) -> dict:
    """Users, facts and episodes as the store gives them."""
    users = {}
    for name in USERS:
        user = await store.identities.find_user("console", name)
        users[name] = None if user is None else (user.id, user.display_name, user.memory_enabled)
    facts = {f.id: (f.user_id, f.text, f.status.value, f.valid_from, f.valid_to, f.topic, scope)
             for f, scope in await store.facts.all_facts()}
    episodes = {e.id: (e.session_id, e.scope, e.summary, e.status, e.turn_ids)
                for e in await store.episodes.all_episodes()}
    return {"users": users, "facts": facts, "episodes": episodes}


async def _index_rows(folder: Path) -> dict[str, tuple[str, str]]:
    db = await lancedb.connect_async(str(folder))
    table = await db.open_table(table_name(HashingEmbedder().name))
    try:
        rows = (await table.query().select(["key", "status", "text"]).to_arrow()).to_pylist()
    finally:
        table.close()
    return {r["key"]: (r["status"], r["text"]) for r in rows}


def _modes(folder: Path) -> set[tuple[str, int]]:
    return {("dir" if p.is_dir() else "file", stat.S_IMODE(p.stat().st_mode))
            for p in [folder, *folder.rglob("*")]}


async def test_backup_while_messages_flow_restores_the_same_memory(tmp_path, clock):
    data = tmp_path / "data"
    h = await _app(data, clock)
    try:
        await h.say("remember I mainly use Python", user="alice")
        await h.say("I am planning a trip to Lisbon on 2026-12-20 for 3 days", user="alice")
        await h.say("/new", user="alice")
        await h.say("remember I live in Vienna", user="bob")
        await h.say("/new", user="bob")

        started, stop, turn_done = asyncio.Event(), asyncio.Event(), asyncio.Event()
        during = {"backing_up": False, "turns": 0}

        async def writer() -> None:
            i = 0
            while not stop.is_set():
                user = USERS[i % len(USERS)]
                if i % 4 == 3:
                    await h.say("/new", user=user)
                elif i % 4 == 2:
                    await h.say(f"remember I live in City{i} now", user=user)  # supersedes
                else:
                    await h.say(f"remember my locker number {i} is {1000 + i}", user=user)
                i += 1
                if during["backing_up"]:
                    during["turns"] += 1
                turn_done.set()
                if i == 3:
                    started.set()

        task = asyncio.create_task(writer())
        await started.wait()
        before = await _state(h.store)
        during["backing_up"] = True

        async def between() -> None:  # every kind of write lands between the two copies
            for _ in range(4):
                turn_done.clear()
                await turn_done.wait()

        manifest = await backup(data, tmp_path / "bk", embedder="hashing", after_sqlite=between)
        during["backing_up"] = False
        after = await _state(h.store)
        for _ in range(2):  # a few more turns after the backup, then stop
            await asyncio.sleep(0)
        stop.set()
        await task
        assert during["turns"] >= 4
        # rows the index gained after the SQLite copy were left out of the index copy
        assert sum(t["dropped"] for t in manifest["index"]["tables"].values()) >= 1

        # the backup is one consistent state between `before` and `after`
        bk = tmp_path / "bk"
        assert manifest["format"] == "memory-bot-backup/1"
        assert manifest["created_at"].endswith("+00:00")
        assert manifest["embedder"] == "hashing"
        assert json.loads((bk / "manifest.json").read_text())["sqlite"] == manifest["sqlite"]
        assert _modes(bk) <= {("dir", 0o700), ("file", 0o600)}
        restored = tmp_path / "restored"
        await restore(bk, restored)
        assert _modes(restored) <= {("dir", 0o700), ("file", 0o600)}
        r = await _app(restored, clock)
        try:
            got = await _state(r.store)
            for kind in ("facts", "episodes"):
                assert set(before[kind]) <= set(got[kind]) <= set(after[kind]), kind
            for fid, fact in got["facts"].items():
                assert fact[:2] == after["facts"][fid][:2]  # same owner and text
            assert got["facts"] and got["episodes"]
            assert {n for n, u in got["users"].items() if u} >= {"alice", "bob"}
            assert manifest["counts"]["facts"] == len(got["facts"])
            # after start-up reconcile the restored index matches the restored database
            expected = await index_expectations(r.store)
            await r.app.index.wait_for_fold()
            assert await _index_rows(restored / "lancedb") == expected
            ctx = await r.memory.context(r.message("which language do I use?", user="alice"))
            result = await r.memory.recall(ctx, "which language do I mainly use?", touch=False)
            assert any("Python" in i.text for i in result.blocks.items)
        finally:
            await r.app.aclose()

        # the live index is what `index_expectations` says (the backup filter relies on it)
        await h.app.index.wait_for_fold()
        assert await _index_rows(data / "lancedb") == await index_expectations(h.store)

        # a backup of a quiet folder restores exactly the same users, facts and episodes
        live = await _state(h.store)
        await backup(data, tmp_path / "bk2", embedder="hashing")
        await restore(tmp_path / "bk2", tmp_path / "restored2")
        r2 = await _app(tmp_path / "restored2", clock)
        try:
            assert await _state(r2.store) == live
        finally:
            await r2.app.aclose()
    finally:
        await h.app.aclose()


async def test_backup_and_restore_refuse_unsafe_folders(tmp_path, clock):
    data = tmp_path / "data"
    h = await _app(data, clock)
    try:
        await h.say("remember I mainly use Python", user="alice")
        for inside in (data, data / "backups"):
            with pytest.raises(BackupRefused, match="inside the data folder"):
                await backup(data, inside, embedder="hashing")
        with pytest.raises(BackupRefused, match="contains the data folder"):
            await backup(data, tmp_path, embedder="hashing")
        busy = tmp_path / "busy"
        busy.mkdir()
        (busy / "note.txt").write_text("x")
        with pytest.raises(BackupRefused, match="already holds files"):
            await backup(data, busy, embedder="hashing")
        await backup(data, tmp_path / "bk", embedder="hashing")
        with pytest.raises(BackupRefused, match="already holds a backup"):
            await backup(data, tmp_path / "bk", embedder="hashing")
        with pytest.raises(BackupRefused, match="nothing to back up"):
            await backup(tmp_path / "nodata", tmp_path / "bk3", embedder="hashing")
        assert not (tmp_path / "bk3").exists()
        with pytest.raises(BackupRefused, match="already holds data"):
            await restore(tmp_path / "bk", data)
    finally:
        await h.app.aclose()
    # a damaged or incomplete backup is refused before anything is copied
    (tmp_path / "bk" / "memory.db").write_bytes(b"not a database")
    with pytest.raises(BackupRefused, match="checksum"):
        await restore(tmp_path / "bk", tmp_path / "fresh")
    (tmp_path / "bk" / "manifest.json").unlink()
    with pytest.raises(BackupRefused, match="no manifest.json"):
        await restore(tmp_path / "bk", tmp_path / "fresh")
    assert not (tmp_path / "fresh" / "memory.db").exists()


def _cli(tmp_path: Path, *args: str, data: Path) -> subprocess.Popen:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "EMBEDDER"))}
    environ.update(MEMORY_BOT_DATA_DIR=str(data), EMBEDDER="hashing")
    return subprocess.Popen([str(BIN), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path, env=environ)


def _wait(*procs: subprocess.Popen) -> list[tuple[int, str, str]]:
    """Wait for command-line runs started together (two at a time keeps the test short)."""
    outputs = [p.communicate(timeout=300) for p in procs]
    return [(p.returncode, *out) for p, out in zip(procs, outputs)]


async def test_cli_backup_and_restore(tmp_path, clock):
    data, fresh = tmp_path / "data", tmp_path / "fresh"
    h = await _app(data, clock)
    try:  # the app holds the data folder's lock: backup still works, restore is refused
        await h.say("remember I mainly use Python", user="alice")
        (code, out, err), (inside, _, inside_err) = await asyncio.to_thread(
            _wait, _cli(tmp_path, "backup", "bk", data=data),  # relative to the working folder
            _cli(tmp_path, "backup", str(data / "bk"), data=data))
        assert code == 0, err
        assert "1 user(s), 1 fact(s)" in out
        assert (inside, "inside the data folder" in inside_err) == (2, True), inside_err
        (code, out, err), (into_live, _, live_err) = await asyncio.to_thread(
            _wait, _cli(tmp_path, "restore", "bk", data=fresh),
            _cli(tmp_path, "restore", "bk", data=data))
        assert code == 0, err
        assert "the next start reconciles" in out
        assert (into_live, "already holds data" in live_err) == (2, True), live_err
        live = await _state(h.store)
    finally:
        await h.app.aclose()
    r = await _app(fresh, clock)
    try:
        assert await _state(r.store) == live
    finally:
        await r.app.aclose()
