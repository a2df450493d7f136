"""Bad bytes at the console and control characters in stored text: undecodable input is kept
(U+FFFD), and nothing stored is written raw to a terminal by the console or ``inspect``; a
message the disk has no room for is said so, logged once, and the console goes on."""

from __future__ import annotations

import asyncio
import resource
import sqlite3

from tests.e2e.test_startup_failures import BIN, HANG_S, _env


async def _console(tmp_path, stdin: bytes, *, preexec_fn=None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        str(BIN), "console", env=_env(tmp_path / "data"), cwd=tmp_path,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, preexec_fn=preexec_fn)
    out, err = await asyncio.wait_for(proc.communicate(stdin), HANG_S)
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


async def test_undecodable_console_bytes_are_kept_and_answered(tmp_path):
    code, out, err = await _console(tmp_path, b"hello \xff\xfe x\n")
    assert code == 0, err
    assert "Traceback" not in err and "never retrieved" not in err, err
    assert "Sorry" not in out and "couldn't" not in out, out
    con = sqlite3.connect(tmp_path / "data" / "memory.db")
    try:
        texts = [r[0] for r in con.execute("SELECT text FROM turns WHERE role = 'user'")]
    finally:
        con.close()
    assert texts == ["hello \ufffd\ufffd x"]


async def test_control_characters_are_escaped_on_the_terminal(tmp_path):
    line = b"remember that my favourite colour is \x1b[31mred\x1b]0;owned\x07 and blue\n"
    code, out, err = await _console(tmp_path, line)
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out, out
    assert "\\x1b[31mred" in out
    proc = await asyncio.create_subprocess_exec(
        str(BIN), "inspect", "console:local", env=_env(tmp_path / "data"), cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    report, _ = await proc.communicate()
    assert b"\x1b" not in report and b"\x07" not in report
    assert b"\\x1b[31mred" in report


def _no_file_above(limit: int):
    """A child-process hook: no file the process writes may grow past ``limit`` bytes (a write
    beyond fails as on a full disk; Python ignores SIGXFSZ, so the process is not killed)."""
    def hook() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return hook


async def test_a_message_the_disk_has_no_room_for_is_told_honestly(tmp_path):
    code, _, err = await _console(tmp_path, b"a first message\n")  # the database exists
    assert code == 0, err
    db = tmp_path / "data" / "memory.db"
    room = db.stat().st_size + 200_000  # a short turn fits, this message does not
    with open(tmp_path / "data" / "logs" / "memory-bot.log", "a") as log:  # nor a log line
        log.write("earlier lines\n" * (room // 14 + 1))
    big = "a long message " + " ".join(f"w{i}" for i in range(100_000))
    code, out, err = await _console(tmp_path, f"{big}\nand the next one\n".encode(),
                                    preexec_fn=_no_file_above(room))
    assert code == 0, err
    assert "I couldn't save your message: the storage is " in out, out[-2000:]
    # one line per failure, no traceback (Python's "--- Logging error ---" for every record)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 2, err
    assert "WARNING: the log file " in lines[0] and "cannot be written" in lines[0], err
    assert "ERROR: storage failed handling a message" in lines[1], err
    con = sqlite3.connect(db)
    try:
        texts = [r[0] for r in con.execute("SELECT text FROM turns WHERE role = 'user'")]
    finally:
        con.close()
    assert texts == ["a first message", "and the next one"]  # the refused one is not kept
