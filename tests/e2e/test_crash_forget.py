"""A crash during ``/forget all`` leaves nothing of what was deleted on disk: a real process
(real SQLite + LanceDB) is killed while it purges, restarted through the real command line, and
then every file of the data folder is scanned for a word only the deleted memory held.

The kill comes at the worst moment (right after the deletion committed in SQLite, before the
index rows, the index's old versions and the export file are purged) and at random delays after
``yes``. Repeats of the random kill: ``MEMORY_BOT_CRASH_REPEATS`` (default 2)."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).with_name("memory-bot")
MARKER = "Quorblex"

FEEDER = r'''
import asyncio, os, signal, sqlite3, sys
from datetime import datetime, timezone
from bot.app import build_app
from bot.settings import load_settings
from memory.types import ChatKind, IncomingMessage, ThreadKey

MARKER = sys.argv[2]

async def main(mode):
    app = await build_app(load_settings())
    n = 0

    async def say(text, user="alice"):
        nonlocal n
        n += 1
        msg = IncomingMessage(ThreadKey("console", user), ChatKind.PRIVATE, user, user.title(),
                              text, datetime.now(timezone.utc), platform_message_id=f"m{n}")
        return await app.engine.handle(msg)

    await say(f"remember that my secret hobby is {MARKER} carving")
    await say(f"I practised {MARKER} carving for two hours today, the knife is 12 cm long")
    await say("/new")
    await say(f"what do you know about my {MARKER} hobby?")
    await say("remember that I live in Graz")
    await say("remember that I like green tea", user="bob")
    print("export:", (await say("/export"))[0], flush=True)
    await app.memory.drain()  # consolidation done: what /forget all must delete is fixed now
    con = sqlite3.connect(os.path.join(os.environ["MEMORY_BOT_DATA_DIR"], "memory.db"))
    print("facts:", con.execute(
        "SELECT count(*) FROM facts f JOIN accounts a ON a.user_id = f.user_id "
        "WHERE a.platform_user_id = 'alice'").fetchone()[0], flush=True)
    con.close()
    await say("/forget all")
    if mode == "hook":  # die right after the deletion committed, before any purge step
        index_delete = app.index.delete

        async def die(keys):
            os.kill(os.getpid(), signal.SIGKILL)
            await index_delete(keys)

        app.index.delete = die
    print("confirming", flush=True)
    print("answer:", (await say("yes"))[0], flush=True)
    await app.aclose()

asyncio.run(main(sys.argv[1]))
'''


def _env(data: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "OPENAI"))}
    env.update({"MEMORY_BOT_DATA_DIR": str(data), "EMBEDDER": "hashing", "LOG_LEVEL": "DEBUG"})
    return env


def _files_holding(folder: Path, word: str) -> list[str]:
    needle = word.lower().encode()
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and needle in p.read_bytes().lower())


def _run_and_kill(tmp_path: Path, data: Path, mode: str, delay: float | None) -> int:
    """Run the feeder, kill it ``delay`` seconds after ``yes`` (None: it kills itself in its
    hook); returns how many facts alice had before ``/forget all``."""
    script = tmp_path / "feeder.py"
    script.write_text(FEEDER)
    child = subprocess.Popen([sys.executable, str(script), mode, MARKER], env=_env(data),
                             stdout=subprocess.PIPE, text=True)
    try:
        for line in child.stdout:
            if line.startswith("facts:"):
                before = int(line.split()[1])
            if line.startswith("export:"):
                assert Path(line.rsplit(" to ", 1)[1].strip()).exists()
            if line.startswith("confirming"):
                break
        if delay is not None:
            try:
                child.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                child.send_signal(signal.SIGKILL)
        child.wait(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
    return before


def _restart(data: Path) -> None:
    """Start the product through its command line and quit at once (start-up runs before
    the first input is read)."""
    done = subprocess.run([str(BIN), "console", "--user", "carol"], input="/quit\n",
                          env=_env(data), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _check(data: Path, *, deleted: bool, before: int) -> None:
    if deleted:
        assert _files_holding(data, MARKER) == []
    con = sqlite3.connect(data / "memory.db")
    try:
        alice = con.execute("SELECT u.id FROM users u JOIN accounts a ON a.user_id = u.id "
                            "WHERE a.platform_user_id = 'alice'").fetchone()[0]
        facts = con.execute("SELECT count(*) FROM facts WHERE user_id = ?", (alice,)).fetchone()[0]
        bob = con.execute("SELECT count(*) FROM facts WHERE text LIKE '%green tea%'").fetchone()[0]
        pending = con.execute("SELECT count(*) FROM purges").fetchone()[0]
    finally:
        con.close()
    assert bob == 1  # the other user keeps everything
    assert pending == 0  # no purge left unfinished
    assert facts == (0 if deleted else before)  # killed before the commit: nothing happened


def test_a_crash_right_after_the_deletion_committed_is_purged_at_the_next_start(tmp_path):
    data = tmp_path / "data"
    before = _run_and_kill(tmp_path, data, "hook", None)
    assert before >= 2  # the hobby and the city
    # the kill came after the commit, before the purge: the index and the export still hold it
    assert "exports" in {Path(p).parts[0] for p in _files_holding(data, MARKER)}
    _restart(data)
    _check(data, deleted=True, before=before)
    _restart(data)  # a second start finds nothing left to do
    _check(data, deleted=True, before=before)


def test_a_kill_at_a_random_moment_after_yes_leaves_nothing_or_everything(tmp_path):
    rng = random.Random(7)
    for n in range(int(os.environ.get("MEMORY_BOT_CRASH_REPEATS", "2"))):
        data = tmp_path / f"data{n}"
        before = _run_and_kill(tmp_path, data, "plain", rng.uniform(0.0, 0.6))
        assert before >= 2  # the hobby and the city
        _restart(data)
        con = sqlite3.connect(data / "memory.db")
        try:
            left = con.execute("SELECT count(*) FROM facts f JOIN accounts a ON "
                               "a.user_id = f.user_id WHERE a.platform_user_id = 'alice'"
                               ).fetchone()[0]
        finally:
            con.close()
        _check(data, deleted=left == 0, before=before)
