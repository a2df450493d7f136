"""One process per data folder: ``build_app`` takes an exclusive ``flock`` on
``<data>/memory-bot.lock``; a second app or CLI process on the folder refuses with a clear
message and exit code 2, a killed holder never leaves a stale lock, and the database itself is
never locked (readers such as ``inspect`` and ``backup`` keep working)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.embedders import HashingEmbedder
from bot.app import build_app
from bot.datadir import LOCK_FILE_NAME, DataDirInUse, lock_data_dir
from bot.settings import Settings
from memory.errors import ConfigError

BIN = Path(sys.executable).with_name("memory-bot")
WAIT_S = 120  # guards against a hung process only


def _settings(folder: Path) -> Settings:
    return Settings(data_dir=folder, embedder="hashing")


async def test_a_second_app_on_the_same_folder_refuses_until_the_first_closes(tmp_path):
    data = tmp_path / "data"
    first = await build_app(_settings(data), embedder=HashingEmbedder())
    try:
        assert first.lock is not None and first.lock.held
        with pytest.raises(DataDirInUse) as caught:
            await build_app(_settings(data), embedder=HashingEmbedder())
        assert caught.value.pid == os.getpid()  # flock conflicts within one process too
        assert isinstance(caught.value, ConfigError)
        assert str(caught.value) == (f"the data folder {data} is in use by another "
                                     f"memory-bot process (pid {os.getpid()})")
        other = await build_app(_settings(tmp_path / "other"), embedder=HashingEmbedder())
        await other.aclose()  # another folder is another lock
        with sqlite3.connect(data / "memory.db") as db:  # the database itself is not locked
            assert db.execute("SELECT count(*) FROM users").fetchone() == (0,)
    finally:
        await first.aclose()
    assert not first.lock.held
    again = await build_app(_settings(data), embedder=HashingEmbedder())
    await again.aclose()


def test_lock_is_per_open_file_and_released_by_the_os_when_the_holder_is_killed(tmp_path):
    lock = lock_data_dir(tmp_path)
    with pytest.raises(DataDirInUse):
        lock_data_dir(tmp_path)
    lock.release()
    lock.release()  # idempotent
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from bot.datadir import lock_data_dir\nlock_data_dir(Path(sys.argv[1]))\n"
         "print('held', flush=True)\ntime.sleep(600)\n", str(tmp_path)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(DataDirInUse) as caught:
            lock_data_dir(tmp_path)
        assert caught.value.pid == holder.pid
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=WAIT_S)
    lock_data_dir(tmp_path).release()  # no stale lock after SIGKILL
    assert (tmp_path / LOCK_FILE_NAME).exists()


def _env(data: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "HEALTH"))}
    env.update({"MEMORY_BOT_DATA_DIR": str(data), "EMBEDDER": "hashing", **extra})
    return env


def test_cli_second_process_refuses_with_the_message_and_exit_code_2(tmp_path):
    data = tmp_path / "data"
    console = subprocess.Popen([str(BIN), "console", "--user", "ana"], env=_env(data),
                               cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert console.stdout.readline().startswith("memory-bot console"), console.stderr
        expected = (f"memory-bot: the data folder {data.resolve()} is in use by another "
                    f"memory-bot process (pid {console.pid})")
        # run with a token pointing nowhere: the lock refuses before any network call
        for args in (["console"], ["reindex"], ["run"]):
            env = _env(data, TELEGRAM_BOT_TOKEN="1:x",
                       TELEGRAM_API_BASE_URL="http://127.0.0.1:9/bot")
            second = subprocess.run([str(BIN), *args], env=env, cwd=tmp_path, input="",
                                    capture_output=True, text=True, timeout=WAIT_S)
            assert second.returncode == 2, (args, second.stderr)
            assert expected in second.stderr, (args, second.stderr)
        inspect = subprocess.run([str(BIN), "inspect", "console:ana"], env=_env(data),
                                 cwd=tmp_path, capture_output=True, text=True, timeout=WAIT_S)
        assert inspect.returncode in (0, 2) and "in use" not in inspect.stderr  # reads freely
    finally:
        out, err = console.communicate("/quit\n", timeout=WAIT_S)
    assert console.returncode == 0, err
    after = subprocess.run([str(BIN), "reindex"], env=_env(data), cwd=tmp_path,
                           capture_output=True, text=True, timeout=WAIT_S)
    assert after.returncode == 0, after.stderr
