"""Privacy and control on real SQLite + LanceDB: export and import, two users who try
each other's numbers and words, memory off, an owner-only data folder."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from memory.ports import ManualClock
from memory.portability import UserExistsError
from memory.types import FactStatus
from tests.conftest import T0, make_harness

BIN = Path(sys.executable).with_name("memory-bot")


async def _close(h):
    await h.index.close()
    await h.store.close()


async def _seed_alice(h):
    await h.say("remember I mainly use Python", user="alice")
    await h.say("I am planning a trip to Lisbon on 2026-12-20 for 3 days", user="alice")
    await h.say("/new", user="alice")
    await h.say("remember I live in Vienna", user="alice")
    h.clock.advance(86400 * 3)
    await h.say("remember I live in Linz now", user="alice")  # supersedes Vienna
    await h.say("remember I mainly use Go", user="alice")
    await h.say("/new", user="alice")


async def _snapshot(h, user="alice"):
    u = await h.store.identities.find_user("console", user)
    facts = await h.store.facts.list_facts(
        u.id, [FactStatus.ACTIVE, FactStatus.SUPERSEDED, FactStatus.ARCHIVED])
    episodes = await h.memory.episodes_for(u.id)
    return ([(f.text, f.status.value, f.valid_from, f.valid_to, f.topic) for f in facts],
            [(e.summary, e.key_data, e.started_at, e.ended_at) for e in episodes])


async def test_export_then_import_into_a_fresh_folder_gives_the_same_memory(tmp_path, clock):
    a = await make_harness(tmp_path / "a", clock, lance=True)
    try:
        await _seed_alice(a)
        await a.say("remember bob Zorptangle", user="bob")
        reply = (await a.say("/export", user="alice"))[0]
        path = Path(reply.rsplit(" to ", 1)[1])
        assert path.parent == (tmp_path / "a" / "exports").resolve()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        before = await _snapshot(a)
    finally:
        await _close(a)
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["version"]) == ("memory-bot-export", 1)
    assert doc["exported_at"].endswith("+00:00")
    assert all(f["created_at"].endswith("+00:00") for f in doc["facts"])
    assert "Zorptangle" not in path.read_text()  # nothing of bob
    old = {f["id"]: f for f in doc["facts"]}
    vienna = next(f for f in doc["facts"] if "Vienna" in f["text"])
    assert vienna["status"] == "superseded" and "Linz" in old[vienna["superseded_by"]]["text"]
    assert old[vienna["superseded_by"]]["supersedes"] == [vienna["id"]]
    assert len(doc["episodes"]) == 2 and doc["turns"]

    b = await make_harness(tmp_path / "b", clock, lance=True)
    try:
        await b.memory.import_user(doc)
        assert await _snapshot(b) == before
        ctx = await b.memory.context(b.message("where do I live?", user="alice"))
        result = await b.memory.recall(ctx, "where do I live?", touch=False)
        assert any("Linz" in i.text for i in result.blocks.items)
        memories = (await b.say("/memories all", user="alice"))[0]
        assert "Linz" in memories and "Superseded and archived:" in memories
    finally:
        await _close(b)


def _cli(tmp_path: Path, *args: str, data: Path) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "EMBEDDER"))}
    environ.update(MEMORY_BOT_DATA_DIR=str(data), EMBEDDER="hashing")
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, cwd=tmp_path,
                          env=environ, timeout=300)


async def test_cli_import_refuses_an_existing_user_unless_replace(tmp_path, clock):
    a = await make_harness(tmp_path / "a", clock, lance=True)
    try:
        await _seed_alice(a)
        doc = await a.memory.export_user((await a.store.identities.find_user("console", "alice")).id)
        before = await _snapshot(a)
    finally:
        await _close(a)
    file = tmp_path / "alice.json"
    file.write_text(json.dumps(doc))
    data = tmp_path / "fresh" / "data"
    first = _cli(tmp_path, "import", str(file), data=data)
    assert first.returncode == 0, first.stderr
    assert "imported user" in first.stdout
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    again = _cli(tmp_path, "import", str(file), data=data)
    assert again.returncode == 2 and "--replace" in again.stderr
    replaced = _cli(tmp_path, "import", str(file), "--replace", data=data)
    assert replaced.returncode == 0, replaced.stderr
    (data / "junk.json").write_text('{"format": "something-else"}')
    assert _cli(tmp_path, "import", str(data / "junk.json"), data=data).returncode == 2
    b = await make_harness(data, clock, lance=True)
    try:
        assert await b.store.count_rows("users") == 1
        assert await _snapshot(b) == before
    finally:
        await _close(b)


async def test_two_users_cannot_see_or_touch_each_other(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await h.say("remember my cat is called Snorkelwhip", user="alice")
        await h.say("remember I live in Graz", user="alice")
        await h.say("We talked about Snorkelwhip toys", user="alice")
        await h.say("/new", user="alice")
        await h.say("remember I like Brubeckian jazz", user="bob")
        alice = await h.store.identities.find_user("console", "alice")
        before = await _snapshot(h, "alice")
        keys_before = await h.index.keys()
        bob_says = []
        for cmd in ("/memories", "/memories all", "/memories episodes", "/why", "/export",
                    "/forget Snorkelwhip", "/forget Graz", "/forget 2", "/forget 3",
                    f"/forget {alice.id}", "/forget 99", "what is my cat called Snorkelwhip?",
                    "/why", "/stats"):
            bob_says += await h.say(cmd, user="bob")
        # bob's own /forget 2 and 3 point at nothing (he has one fact); /forget 1 would be his
        text = "\n".join(bob_says).replace('"Snorkelwhip"', "").replace('"Graz"', "")
        assert "Snorkelwhip" not in text and "Graz" not in text, text  # only his own words echoed
        await h.say("/forget all", user="bob")
        await h.say("yes", user="bob")
        assert await _snapshot(h, "alice") == before
        alice_facts = await h.store.facts.list_facts(alice.id, [FactStatus.ACTIVE])
        assert len(alice_facts) == 2
        alice_keys = ({f"fact:{f.id}" for f in alice_facts}
                      | {f"episode:{e.id}" for e in await h.memory.episodes_for(alice.id)})
        assert alice_keys <= keys_before and alice_keys <= await h.index.keys()
    finally:
        await _close(h)


async def test_memory_off_writes_nothing_and_on_brings_facts_back(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await h.say("remember I mainly use Python", user="carol")
        await h.say("/new", user="carol")
        carol = await h.store.identities.find_user("console", "carol")
        counts = [await h.store.count_rows(t) for t in ("facts", "episodes", "rounds")]
        await h.say("/memory_off", user="carol")
        assert "Memory is OFF" in (await h.say("/memories", user="carol"))[0]
        for text in ("remember I live in Oslo", "I like skiing a lot",
                     "which language do I use?", "remember my dog is Rex", "thanks"):
            await h.say(text, user="carol")
        why = (await h.say("/why", user="carol"))[0]
        assert "recalled 0 memory item(s)" in why or "nothing" in why
        await h.say("/new", user="carol")
        assert [await h.store.count_rows(t) for t in ("facts", "episodes", "rounds")] == counts
        await h.say("/memory_on", user="carol")
        ctx = await h.memory.context(h.message("which language do I use?", user="carol"))
        result = await h.memory.recall(ctx, "which language do I use?", touch=False)
        assert any("Python" in i.text for i in result.blocks.items)
        assert carol.memory_enabled
    finally:
        await _close(h)


async def test_memories_all_shows_history_lines(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await _seed_alice(h)
        listing = (await h.say("/memories all", user="alice"))[0]
        lines = listing.splitlines()
        start = lines.index("History of where the user lives:")
        history = lines[start + 1:start + 3]  # one value per line, oldest first
        assert history[0].startswith("   until 2026-") and history[0].endswith("Vienna")
        assert history[1] == "   then: The user lives in Linz"
        assert "History of primary language:" in lines
    finally:
        await _close(h)


async def test_consent_note_once_and_chat_switch_for_admins_only(tmp_path, clock):
    from memory.types import ChatKind

    h = await make_harness(tmp_path, clock, lance=True)
    try:
        first = await h.say("remember I live in Graz", user="dora")
        assert any("/memories" in r and "/forget" in r for r in first)
        second = await h.say("remember I drink green tea", user="dora")
        assert not any("/forget" in r for r in second)
        group = {"chat": "team", "kind": ChatKind.GROUP}
        refused = await h.engine.handle(h.message("/memory_off chat", user="dora", **group))
        assert "Only an admin" in refused[0]
        from dataclasses import replace
        admin = replace(h.message("/memory_off chat", user="erin", **group), is_admin=True)
        assert "off for this whole chat" in (await h.engine.handle(admin))[0]
        facts = await h.store.count_rows("facts")
        await h.say("remember the team standup is at 9:15", user="dora", **group)
        await h.say("/new", user="dora", **group)
        assert await h.store.count_rows("facts") == facts
        assert await h.store.count_rows("episodes") == 0
        private = await h.say("remember I like cycling", user="dora")  # only the group is off
        assert any("Noted" in r for r in private)
        admin_on = replace(h.message("/memory_on chat", user="erin", **group), is_admin=True)
        assert "on again" in (await h.engine.handle(admin_on))[0]
        await h.say("remember the team standup is at 9:30", user="dora", **group)
        assert await h.store.count_rows("facts") == facts + 2
    finally:
        await _close(h)


async def test_audit_log_records_that_not_what(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await h.say("remember my secret hobby is Plimbletonery", user="alice")
        await h.say("/forget 1", user="alice")
        await h.say("remember I like Quorbish", user="alice")
        await h.say("/export", user="alice")
        assert list((tmp_path / "exports").glob("*.json"))
        await h.say("/forget all", user="alice")
        await h.say("yes", user="alice")
        assert list((tmp_path / "exports").glob("*.json")) == []  # no stale copy in the folder
        rows = await h.store.db.all("SELECT * FROM audit_log")
        assert {r["action"] for r in rows} >= {"forget_fact", "forget_all"}
        assert set(rows[0].keys()) == {"id", "at", "user_id", "action", "count"}
        flat = " ".join(str(v) for r in rows for v in tuple(r))
        assert "Plimbleton" not in flat and "Quorbish" not in flat
    finally:
        await _close(h)


async def test_cli_inspect_shows_one_user(tmp_path, clock):
    data = tmp_path / "data"
    h = await make_harness(data, clock, lance=True)
    try:
        await _seed_alice(h)
        await h.say("remember bob Zorptangle", user="bob")
    finally:
        await _close(h)
    out = _cli(tmp_path, "inspect", "console:alice", data=data)
    assert out.returncode == 0, out.stderr
    assert "accounts: console:alice" in out.stdout and "2 active, 2 superseded" in out.stdout
    assert "Linz" in out.stdout and "Zorptangle" not in out.stdout
    assert _cli(tmp_path, "inspect", "console:nobody", data=data).returncode == 2


@pytest.fixture(scope="module")
def alice_seeded_export(tmp_path_factory) -> dict:
    """Alice's export document from a folder of her own, seeded once for the module (each
    test changes a copy: :func:`alice_doc`). Seeded on an event loop of its own thread,
    as a synchronous module fixture must."""
    folder = tmp_path_factory.mktemp("alice")

    async def export() -> dict:
        a = await make_harness(folder, ManualClock(T0), lance=True)
        try:
            await _seed_alice(a)
            user = await a.store.identities.find_user("console", "alice")
            return await a.memory.export_user(user.id)
        finally:
            await _close(a)

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, export()).result()


@pytest.fixture
def alice_doc(alice_seeded_export) -> dict:
    """A copy of Alice's export document for one test to change."""
    return copy.deepcopy(alice_seeded_export)


@pytest.mark.parametrize(("section", "field", "value", "message"), [
    ("facts", "created_at", "notadate", "facts row 1: created_at"),
    ("turns", "role", "hacker", "turns row 1: role"),
    ("turns", "text", None, "turns row 1: text"),
    ("episodes", "turn_ids", "1,2", "episodes row 1: turn_ids"),
    ("facts", "supersedes", [12345], "facts row 1: supersedes names 12345"),
    ("sessions", "thread_id", 777, "sessions row 1: thread_id 777"),
])
async def test_an_invalid_export_is_refused_and_writes_nothing(tmp_path, clock, section, field,
                                                               value, message, alice_doc):
    from memory.portability import ExportFormatError

    doc = alice_doc
    doc[section][0][field] = value
    b = await make_harness(tmp_path / "b", clock, lance=True)
    try:
        with pytest.raises(ExportFormatError, match=re.escape(message)):
            await b.memory.import_user(doc)
        assert await b.store.count_rows("users") == 0 and await b.store.count_rows("facts") == 0
        assert (await b.say("hello", user="carol"))  # the folder still works
    finally:
        await _close(b)
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(doc))
    data = tmp_path / "fresh" / "data"
    result = _cli(tmp_path, "import", str(file), data=data)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert _cli(tmp_path, "reindex", data=data).returncode == 0  # the next start works


async def test_an_export_citing_deleted_turns_still_imports(tmp_path, clock, alice_doc):
    doc = alice_doc
    doc["episodes"][0]["turn_ids"].append(99999)  # retention and /forget N delete turns
    doc["facts"][0]["source_turn_ids"].append(99998)
    b = await make_harness(tmp_path / "b", clock, lance=True)
    try:
        await b.memory.import_user(doc)
        assert await b.store.count_rows("facts") == len(doc["facts"])
    finally:
        await _close(b)


async def test_an_import_into_another_users_private_chat_is_refused(tmp_path, clock,
                                                                      alice_doc):
    doc = alice_doc
    doc["user"]["accounts"] = [{"platform": "console", "platform_user_id": "mallory"}]
    b = await make_harness(tmp_path / "b", clock, lance=True)
    try:
        await b.say("my secret plan is ready", user="alice")
        with pytest.raises(UserExistsError, match="belongs to another user"):
            await b.memory.import_user(doc)
        assert await b.store.identities.find_user("console", "mallory") is None
    finally:
        await _close(b)


def test_everything_created_in_an_existing_0755_folder_is_owner_only(tmp_path):
    """A data folder the operator made world-readable (0755, umask 022): the bot leaves the
    folder's own mode alone, and everything it creates inside (the database and its WAL, the
    log, LanceDB's tables and files, exports) is readable by its owner only."""
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    (data / "logs").mkdir(mode=0o755)  # left by an earlier version
    (data / "logs").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "OPENAI"))}
    env.update({"MEMORY_BOT_DATA_DIR": str(data), "EMBEDDER": "hashing", "LOG_LEVEL": "DEBUG"})
    done = subprocess.run([str(BIN), "console", "--user", "dora"], env=env, umask=0o022,
                          input="remember that I like green tea\nwhat do I like?\n/export\n/new\n"
                                "/quit\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    made = sorted(p for p in data.rglob("*") if not p.is_symlink())
    names = {p.relative_to(data).parts[0] for p in made}
    assert {"memory.db", "logs", "lancedb", "exports"} <= names
    assert any(p.suffix == ".lance" for p in made)
    loose = [(str(p.relative_to(data)), oct(stat.S_IMODE(p.stat().st_mode))) for p in made
             if stat.S_IMODE(p.stat().st_mode) & 0o077]
    assert loose == []
    assert stat.S_IMODE(data.stat().st_mode) == 0o755  # the operator's choice for the folder


async def test_forget_n_asks_before_taking_history_and_names_everything_it_took(tmp_path, clock):
    """/forget N of a fact with earlier values: the question lists every fact that will go,
    the answer names every fact that went; a later value of the topic is never taken along,
    and a fact with no earlier value goes at once, alone."""
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await h.say("remember I live in Vienna")
        h.clock.advance(86400)
        await h.say("remember I live in Linz now")
        h.clock.advance(86400)
        await h.say("remember I live in Graz now")
        listing = (await h.say("/memories all"))[0]
        numbers = {text: line.split(".")[0] for line in listing.splitlines()
                   for text in ("Vienna", "Linz", "Graz") if text in line and line[0].isdigit()}
        question = (await h.say(f"/forget {numbers['Linz']}"))[0]
        assert question.startswith(f"This will delete fact {numbers['Linz']} and the earlier")
        assert "- The user lives in Linz\n- The user lives in Vienna\n" in question
        assert "Graz" not in question
        u = await h.store.identities.find_user("console", "alice")
        assert len(await h.memory.facts_for(u.id, history=True)) == 3  # nothing yet
        answer = (await h.say("yes"))[0]
        assert answer.startswith("Forgotten: The user lives in Linz and its earlier value(s): "
                                 "The user lives in Vienna")
        left = await h.memory.facts_for(u.id, history=True)
        assert [f.text for f in left] == ["The user lives in Graz"]

        await h.say("remember I live in Salzburg now")  # Graz becomes an earlier value
        listing = (await h.say("/memories all"))[0]
        graz = next(line.split(".")[0] for line in listing.splitlines()
                    if "Graz" in line and line[0].isdigit())
        answer = (await h.say(f"/forget {graz}"))[0]
        assert answer.startswith("Forgotten: The user lives in Graz (with the")
        assert [f.text for f in await h.memory.facts_for(u.id, history=True)] == [
            "The user lives in Salzburg"]
    finally:
        await _close(h)
