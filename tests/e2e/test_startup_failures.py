"""Every start-up failure ends the process promptly with one clear line and exit code 1 (2 for
configuration), closing what it opened: a damaged database, a database on a full disk, and a
platform client that fails in an unexpected way. Real processes; a hang is caught by the 30 s
guard."""

from __future__ import annotations

import asyncio
import os
import resource
import sys
from pathlib import Path

from tests.e2e.fakes.telegram import FakeTelegram

BIN = Path(sys.executable).with_name("memory-bot")
HANG_S = 30.0  # more than any start-up here needs; reaching it means the process hung


def _env(data: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(
        ("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "HEALTH", "LLM_", "ALLOWED"))}
    env.update({"MEMORY_BOT_DATA_DIR": str(data), "EMBEDDER": "hashing", **extra})
    return env


async def _run(args: list[str], env: dict, cwd: Path, stdin: bytes = b"",
               preexec_fn=None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        str(BIN), *args, env=env, cwd=cwd, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, preexec_fn=preexec_fn)
    try:
        _, err = await asyncio.wait_for(proc.communicate(stdin), HANG_S)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise AssertionError(f"memory-bot {' '.join(args)} hung after reporting the error")
    return proc.returncode, err.decode(errors="replace")


def _damaged(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    (data / "memory.db").write_bytes(b"this is not a database at all\n" * 200)
    return data


async def test_a_damaged_database_ends_console_and_inspect_with_one_line(tmp_path):
    data = _damaged(tmp_path)
    for args in (["console"], ["inspect", "console:local"]):
        code, err = await _run(args, _env(data), tmp_path)
        assert code == 1, err
        assert "Traceback" not in err, err
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and "file is not a database" in lines[0], err
        assert lines[0].startswith("memory-bot: cannot open the database at "), err


async def test_a_database_on_a_full_disk_ends_inspect_with_one_line(tmp_path):
    """No byte may be written (a file-size limit of 0, as a full disk refuses new blocks):
    opening the database in WAL mode fails with SQLite's "disk I/O error"."""
    data = tmp_path / "data"
    code, err = await _run(["console"], _env(data), tmp_path, b"hello\n")
    assert code == 0, err

    def full() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # Python ignores SIGXFSZ

    code, err = await _run(["inspect", "console:local"], _env(data), tmp_path, preexec_fn=full)
    assert code == 1, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("memory-bot: cannot open the database at "), err
    assert "disk I/O error" in lines[0], err


async def test_a_damaged_database_ends_run_with_one_line(tmp_path):
    data = _damaged(tmp_path)
    fake = await FakeTelegram().start()
    try:
        code, err = await _run(["run"], _env(data, TELEGRAM_BOT_TOKEN=fake.token,
                                             TELEGRAM_API_BASE_URL=fake.base_url), tmp_path)
    finally:
        await fake.close()
    assert code == 1, err
    assert "Traceback" not in err and "file is not a database" in err, err


async def test_an_unexpected_error_in_the_platform_client_ends_run_with_one_line(tmp_path):
    """A Bot API emulator whose getMe answer python-telegram-bot cannot build a User from (a
    TypeError inside ``Application.initialize``)."""
    fake = FakeTelegram()
    fake.bot = {"id": 777000, "is_bot": True}  # no first_name: PTB raises TypeError
    await fake.start()
    try:
        code, err = await _run(["run"], _env(tmp_path / "data", TELEGRAM_BOT_TOKEN=fake.token,
                                             TELEGRAM_API_BASE_URL=fake.base_url), tmp_path)
    finally:
        await fake.close()
    assert code == 1, err
    assert "Traceback" not in err, err
    assert "TypeError" in err and "could not use" in err, err
