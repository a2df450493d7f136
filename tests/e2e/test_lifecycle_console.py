"""The idle timeout in real processes: ``memory-bot console`` with its stdin written over time,
and a process killed with SIGKILL before the timeout and restarted after it."""

from __future__ import annotations

import os
import queue
import re
import sqlite3
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests.e2e.test_console import BIN, answers, run_console

STATEMENT = "Our staging database runs PostgreSQL 16 on port 6543 in Frankfurt."
QUESTION = "Which port does the staging database listen on?"


def _env(tmp_path: Path, timeout: str) -> dict:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "EMBEDDER"))}
    environ.update({"MEMORY_BOT_DATA_DIR": str(tmp_path / "data"),
                    "IDLE_TIMEOUT_SECONDS": timeout})
    return environ


class Console:
    """A console subprocess whose stdout is read line by line on a thread."""

    def __init__(self, tmp_path: Path, env: dict) -> None:
        self.stderr = open(tmp_path / "stderr.txt", "a")
        self.proc = subprocess.Popen([str(BIN), "console"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True,
                                     cwd=tmp_path, env=env)
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._eof = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for_answer(self, line: str, timeout: float = 120) -> None:
        """Block until ``line`` is echoed and the first answer line after it is printed."""
        deadline = time.monotonic() + timeout
        echoed = False
        while True:
            item = self._queue.get(timeout=max(0.1, deadline - time.monotonic()))
            self._eof = item is None
            assert item is not None, "the console exited early"
            self.lines.append(item)
            if echoed:
                return
            echoed = item == f"> {line}"

    def finish(self, timeout: float = 120) -> str:
        """Close stdin (= /quit), wait for the exit, return the whole stdout."""
        self.proc.stdin.close()
        assert self.proc.wait(timeout=timeout) == 0
        self.close()
        return "\n".join(self.lines) + "\n"

    def kill(self) -> None:
        """SIGKILL: no shutdown, no consolidation."""
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.close()

    def close(self) -> None:
        """Drain the output and release the pipes (kills the process if still running)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        while not self._eof:
            item = self._queue.get(timeout=10)
            self._eof = item is None
            if item is not None:
                self.lines.append(item)
        for stream in (self.proc.stdin, self.proc.stdout, self.stderr):
            if not stream.closed:
                try:
                    stream.close()
                except BrokenPipeError:
                    pass


def _sessions(tmp_path: Path) -> list[tuple]:
    with sqlite3.connect(tmp_path / "data" / "memory.db") as conn:
        return conn.execute("SELECT id, closed_at IS NOT NULL, close_reason FROM sessions "
                            "ORDER BY id").fetchall()


def _episode_sessions(tmp_path: Path) -> list[int]:
    with sqlite3.connect(tmp_path / "data" / "memory.db") as conn:
        return [r[0] for r in conn.execute("SELECT session_id FROM episodes ORDER BY id")]


def _log(tmp_path: Path) -> str:
    return (tmp_path / "data" / "logs" / "memory-bot.log").read_text()


WAIT_S = 120.0  # guards against a hung test only; nothing is timed


def _wait_until(condition, what: str) -> None:
    """Poll ``condition`` every 0.1 s until it holds (at most :data:`WAIT_S` seconds)."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.1)


def _last_turn_at(tmp_path: Path, session_id: int) -> datetime:
    """The session's ``last_turn_at`` (aware UTC): its idle deadline is this plus the timeout."""
    with sqlite3.connect(tmp_path / "data" / "memory.db") as conn:
        (value,) = conn.execute("SELECT last_turn_at FROM sessions WHERE id = ?",
                                (session_id,)).fetchone()
    stamp = datetime.fromisoformat(value)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def test_idle_session_closes_while_the_console_waits(tmp_path):
    console = Console(tmp_path, _env(tmp_path, "3"))
    try:
        console.send(STATEMENT)
        console.wait_for_answer(STATEMENT)
        # silence: the 3 s idle timeout passes while the console waits for input, and the
        # running process closes the session and consolidates it (its episode in the store and
        # the index: the log line the scheduler writes once it is recallable)
        _wait_until(lambda: "recallable_after_deadline_ms=" in _log(tmp_path),
                    "the idle session closed and recallable")
        console.send(QUESTION)
        stdout = console.finish()
    finally:
        console.close()
    answer = "\n".join(answers(stdout)[QUESTION])
    assert "6543" in answer and "Frankfurt" in answer, stdout  # recalled from the closed session
    assert _sessions(tmp_path)[0] == (1, 1, "idle")
    assert _episode_sessions(tmp_path) == [1]
    lags = [int(v) for v in re.findall(r"recallable_after_deadline_ms=(\d+)", _log(tmp_path))]
    assert len(lags) == 1, lags  # the delay is measured and logged, not asserted (load varies)
    assert (tmp_path / "stderr.txt").read_text() == ""


def test_killed_before_the_timeout_is_closed_at_restart(tmp_path):
    env = _env(tmp_path, "5")
    console = Console(tmp_path, env)
    try:
        console.send(STATEMENT)
        console.wait_for_answer(STATEMENT)
        console.kill()
    finally:
        console.close()
    assert _sessions(tmp_path) == [(1, 0, None)]  # killed before the idle timeout
    idle_at = _last_turn_at(tmp_path, 1) + timedelta(seconds=5)  # IDLE_TIMEOUT_SECONDS
    _wait_until(lambda: datetime.now(timezone.utc) > idle_at, "the idle deadline passed")
    result = run_console(tmp_path, [QUESTION, "/why"], env={"IDLE_TIMEOUT_SECONDS": "5"})
    assert result.returncode == 0, result.stderr
    answer = "\n".join(answers(result.stdout)[QUESTION])
    assert "6543" in answer, result.stdout
    assert _sessions(tmp_path)[0] == (1, 1, "idle")
    assert _episode_sessions(tmp_path) == [1]
    assert "closed_at_startup=1" in _log(tmp_path)
    assert "(session 1)" in "\n".join(answers(result.stdout)["/why"])
