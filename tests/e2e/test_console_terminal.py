"""The console in a real terminal: ``make run`` inside tmux (a terminal emulator with its own
pty), typed into with tmux's send-keys and pasted into with its bracketed paste, read back
from the screen and from SQLite. Needs tmux (``.ci/run`` installs it when it is missing)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.fakes.llm import FakeLLMServer, Stall
from tests.e2e.test_console import BIN
from tests.e2e.test_lifecycle_console import Console

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None,
                                reason="tmux is not installed (.ci/run installs it)")


def _environ(tmp_path: Path) -> dict:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "EMBEDDER",
                                    "TMUX", "MAKE", "MFLAGS"))}
    environ.update({"MEMORY_BOT_DATA_DIR": str(tmp_path / "data"), "TERM": "xterm-256color"})
    return environ


def _assistant_turns(data: Path) -> int:
    """Replies stored in the data folder's database so far (0 before it exists)."""
    db = data / "memory.db"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT count(*) FROM turns WHERE role = 'assistant'"
                                ).fetchone()[0]
    except sqlite3.OperationalError:  # the schema is still being created
        return 0


class Terminal:
    """One tmux server of its own (private socket) running ``command`` in a 200x50 pane; the
    command's exit status is written to ``rc``."""

    def __init__(self, tmp_path: Path, command: str, name: str = "1",
                 env: dict | None = None) -> None:
        self.socket = str(tmp_path / f"tmux-{name}.sock")  # a new server never reuses a socket
        self.rc = tmp_path / f"rc-{name}"
        self.env = _environ(tmp_path) | (env or {})
        self.data = tmp_path / "data"
        self.replies_before = _assistant_turns(self.data)  # of earlier runs on this data
        self.tmux("new-session", "-d", "-s", "console", "-x", "200", "-y", "50",
                  f"{command}; echo $? > {self.rc}; sleep 600")

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", self.socket, *args], env=self.env,
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"tmux {args[0]}: {done.stderr.strip()}"
        return done.stdout

    def screen(self) -> list[str]:
        """The visible lines, trailing blanks removed."""
        lines = self.tmux("capture-pane", "-p", "-t", "console").rstrip("\n").splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        return lines

    def wait_for_prompt(self, number: int, timeout: float = 180) -> list[str]:
        """Wait for the ``number``-th prompt: the replies to the ``number - 1`` lines before it
        are stored and the last line of the screen is an empty ``you>`` prompt (keys typed
        before it would be typeahead, handled before the prompt has loaded its history)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = self.screen()
            if (lines and lines[-1].rstrip() == "you>"
                    and _assistant_turns(self.data) - self.replies_before >= number - 1):
                return lines
            time.sleep(0.2)
        raise AssertionError("no prompt on the screen:\n" + "\n".join(self.screen()))

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "console", *keys)

    def paste(self, text: str, tmp_path: Path) -> None:
        """Paste ``text`` as a terminal does (bracketed, since the prompt asks for it)."""
        source = tmp_path / "paste.txt"
        source.write_text(text)
        self.tmux("load-buffer", "-b", "clip", str(source))
        self.tmux("paste-buffer", "-p", "-d", "-b", "clip", "-t", "console")

    def exit_status(self, timeout: float = 120) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.rc.exists() and self.rc.read_text().strip():
                return int(self.rc.read_text())
            time.sleep(0.2)
        raise AssertionError("the console did not exit:\n" + "\n".join(self.screen()))

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], env=self.env,
                       capture_output=True, timeout=30)


@pytest.fixture
def terminal_factory(tmp_path):
    opened: list[Terminal] = []

    def start(command: str, env: dict | None = None) -> Terminal:
        opened.append(Terminal(tmp_path, command, name=str(len(opened) + 1), env=env))
        return opened[-1]

    yield start
    for term in opened:
        term.close()


def _user_turns(tmp_path: Path) -> list[str]:
    with sqlite3.connect(tmp_path / "data" / "memory.db") as conn:
        return [r[0] for r in conn.execute(
            "SELECT text FROM turns WHERE role = 'user' ORDER BY id")]


def test_typing_editing_history_and_a_long_paste_in_make_run(tmp_path, terminal_factory):
    term = terminal_factory(f"make --no-print-directory -C {REPO} run ARGS='--user tess'")
    first = term.wait_for_prompt(1)
    assert first[0].startswith("memory-bot console - user tess - model offline")
    term.keys("I like gren tea", *["Left"] * 5, "e", "Enter")  # an edit mid-line
    term.wait_for_prompt(2)
    term.keys("Up", *["BSpace"] * 9, "coffee", "Enter")  # the history, edited
    term.wait_for_prompt(3)
    pasted = " ".join(f"word{n}" for n in range(6000))[:30_000]
    term.paste(pasted, tmp_path)
    term.keys("Enter")
    term.wait_for_prompt(4)
    term.keys("C-c")
    assert term.exit_status() == 0
    screen = "\n".join(term.screen())
    assert "Goodbye." in screen
    assert "make: ***" not in screen and "Error" not in screen
    turns = _user_turns(tmp_path)
    assert turns == ["I like green tea", "I like coffee", pasted]
    assert len(turns[2]) == 30_000  # whole: no 4,095-character cut of a cooked terminal
    history = tmp_path / "data" / "console" / "tess.history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert "+I like coffee" in history.read_text().splitlines()


async def test_keys_typed_while_the_model_answers_reach_the_next_prompt(tmp_path,
                                                                         terminal_factory):
    """Type-ahead: Up, Backspace and words typed while the (slow) model is still answering edit
    the earlier line at the next prompt, as typed there would; the terminal's own line editing
    used to act on them first (Backspace erased Up's escape sequence, "coffee" was sent). Ctrl-C
    while a reply is on its way still ends the console."""
    llm = await FakeLLMServer(echo=True).start()
    llm.push(Stall(3), Stall(3), Stall(30))
    try:
        term = terminal_factory(f"{BIN} console --user tess", env={
            "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": llm.anthropic_url})
        await asyncio.to_thread(term.wait_for_prompt, 1)

        async def asked(n: int) -> None:  # the n-th line is with the model
            for _ in range(600):
                if len(llm.requests) >= n:
                    return
                await asyncio.sleep(0.1)
            raise AssertionError(f"line {n} never reached the model")

        term.keys("I like green tea", "Enter")
        await asked(1)
        term.keys("Up", *["BSpace"] * 9, "coffee", "Enter")  # while the answer is on its way
        await asyncio.to_thread(term.wait_for_prompt, 3)
        term.keys("tell me more", "Enter")
        await asked(3)
        term.keys("C-c")
        assert await asyncio.to_thread(term.exit_status) == 0
    finally:
        await llm.close()
    assert _user_turns(tmp_path) == ["I like green tea", "I like coffee", "tell me more"]
    screen = "\n".join(term.screen())
    assert "answer to: I like coffee" in screen and "Goodbye." in screen


def test_ctrl_d_quits_and_the_next_run_recalls_the_history(tmp_path, terminal_factory):
    term = terminal_factory(f"{BIN} console")
    term.wait_for_prompt(1)
    term.keys("where did I park", "Enter")
    term.wait_for_prompt(2)
    term.keys("C-d")
    assert term.exit_status() == 0
    term.close()
    again = terminal_factory(f"{BIN} console")
    again.wait_for_prompt(1)
    again.keys("Up", "?", "Enter")
    again.wait_for_prompt(2)
    again.keys("/quit", "Enter")
    assert again.exit_status() == 0
    assert _user_turns(tmp_path) == ["where did I park", "where did I park?"]


def test_sigint_to_a_piped_console_is_quit(tmp_path):
    """SIGINT (Ctrl-C while a reply is made, or ``kill -INT``) ends the console as ``/quit``
    does: "Goodbye." last, exit 0, nothing on standard error."""
    console = Console(tmp_path, _environ(tmp_path))
    try:
        console.send("hello")
        console.wait_for_answer("hello")
        console.proc.send_signal(signal.SIGINT)  # standard input stays open
        assert console.proc.wait(timeout=120) == 0
    finally:
        console.close()
    assert console.lines[-1] == "Goodbye."
    assert (tmp_path / "stderr.txt").read_text() == ""
