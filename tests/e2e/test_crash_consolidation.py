"""Durable consolidation under SIGKILL: a real process feeding a long conversation (folds and
session closes happening all the time) is killed at random moments and restarted. After each
restart: exactly one episode per closed session, no duplicate fact, no lost turn.

Repeats: ``MEMORY_BOT_CRASH_REPEATS`` (default 3; set it to 20 for a soak run)."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

FEEDER = r'''
import asyncio, sys
from datetime import datetime, timezone
from bot.app import build_app
from bot.settings import load_settings
from memory.types import ChatKind, IncomingMessage, ThreadKey

async def main(start):
    app = await build_app(load_settings())
    print("ready", flush=True)
    i = start
    while True:
        text = f"message {i}: the parcel number is PN{i:05d}."
        if i % 7 == 3:
            text = f"remember my locker number is {i % 5}"
        if i % 25 == 24:
            text = "/new"
        msg = IncomingMessage(ThreadKey("console", "crash"), ChatKind.PRIVATE, "crash", "Crash",
                              text, datetime.now(timezone.utc), platform_message_id=f"m{i}")
        await app.engine.handle(msg)
        if not text.startswith("/"):  # commands are not stored as turns
            print(f"handled m{i}", flush=True)
        i += 1

asyncio.run(main(int(sys.argv[1])))
'''


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "OPENAI"))}
    env.update({"MEMORY_BOT_DATA_DIR": str(tmp_path / "data"), "EMBEDDER": "hashing",
                "SUMMARY_TRIGGER_MESSAGES": "12", "LOG_LEVEL": "WARNING"})
    return env


def _check(db: Path, handled: set[str]) -> None:
    con = sqlite3.connect(db)
    try:
        pending = con.execute("SELECT count(*) FROM work WHERE done_at IS NULL").fetchone()[0]
        assert pending == 0  # start-up ran what the kill interrupted
        per_session = con.execute(
            "SELECT s.id, count(e.id) FROM sessions s LEFT JOIN episodes e ON e.session_id = s.id "
            "WHERE s.closed_at IS NOT NULL GROUP BY s.id").fetchall()
        assert all(n == 1 for _, n in per_session), per_session
        twins = con.execute(
            "SELECT text, count(*) FROM facts WHERE status = 'active' GROUP BY text "
            "HAVING count(*) > 1").fetchall()
        assert twins == []
        stored = {r[0] for r in con.execute(
            "SELECT platform_message_id FROM turns WHERE platform_message_id IS NOT NULL")}
        assert handled <= stored, sorted(handled - stored)[:5]
        rounds = [r[0] for r in con.execute("SELECT turn_ids FROM rounds")]
        ids = [int(t) for r in rounds for t in r.strip("[]").split(",") if t.strip()]
        assert len(ids) == len(set(ids))  # no turn in two rounds: no fold applied twice
    finally:
        con.close()


def test_sigkill_at_random_points_loses_nothing_and_duplicates_nothing(tmp_path):
    repeats = int(os.environ.get("MEMORY_BOT_CRASH_REPEATS", "3"))
    rng = random.Random(4)
    env = _env(tmp_path)
    handled: set[str] = set()
    start = 0
    for _ in range(repeats):
        proc = subprocess.Popen([sys.executable, "-c", FEEDER, str(start)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=tmp_path)
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(rng.uniform(0.5, 2.5))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        done = [int(line.split()[1][1:]) for line in out.splitlines()
                if line.startswith("handled ")]
        handled.update(f"m{i}" for i in done)
        start = max(done, default=start) + 2  # the killed message may or may not be stored
        checker = subprocess.run(
            [sys.executable, "-c", "import asyncio; from bot.app import build_app; "
             "from bot.settings import load_settings\n"
             "async def m():\n a = await build_app(load_settings())\n await a.aclose()\n"
             "asyncio.run(m())"], env=env, cwd=tmp_path, capture_output=True, text=True,
            timeout=120)
        assert checker.returncode == 0, checker.stderr
        _check(tmp_path / "data" / "memory.db", handled)
    assert len(handled) > repeats  # the feeder made progress between kills
