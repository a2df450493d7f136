"""Bad bytes at the console and control characters in stored text: undecodable input is kept
(U+FFFD), and nothing stored is written raw to a terminal by the console or ``inspect``."""

from __future__ import annotations

import asyncio
import sqlite3

from tests.e2e.test_startup_failures import BIN, HANG_S, _env


async def _console(tmp_path, stdin: bytes) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        str(BIN), "console", env=_env(tmp_path / "data"), cwd=tmp_path,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
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
