"""``memory-bot run`` as a real process: both platform adapters against the fake
Telegram Bot API and the fake Discord (REST + gateway) on 127.0.0.1, the health endpoints,
SIGTERM while a consolidation is queued, a restart on the same folder, and a second process
refused by the data folder's lock.

Nothing is timed: every wait polls until a condition holds, with a generous deadline that only
guards against a hung process."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from bot.settings import load_settings
from memory.errors import ConfigError
from tests.e2e.fakes.discord import FakeDiscord
from tests.e2e.fakes.telegram import FakeTelegram
from tests.e2e.test_health import free_port, get, poll

BIN = Path(sys.executable).with_name("memory-bot")
WAIT_S = 180.0  # a hung process guard only (start-up imports are slow on a busy 2-core box)
ALICE = FakeTelegram.user(11, "Alice")


class Proc:
    """One ``memory-bot run`` process with its output in files (no pipe can fill up)."""

    def __init__(self, folder: Path, env: dict, name: str) -> None:
        self.folder, self.env, self.name = folder, env, name
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, *args: str) -> Proc:
        out = open(self.folder / f"{self.name}.out", "wb")  # noqa: SIM115 - closed by the OS
        err = open(self.folder / f"{self.name}.err", "wb")  # noqa: SIM115
        try:
            self.proc = await asyncio.create_subprocess_exec(
                str(BIN), "run", *args, env=self.env, cwd=self.folder, stdout=out, stderr=err)
        finally:
            out.close()
            err.close()
        return self

    @property
    def stderr(self) -> str:
        return (self.folder / f"{self.name}.err").read_text(errors="replace")

    async def wait(self) -> int:
        assert self.proc is not None
        return await asyncio.wait_for(self.proc.wait(), WAIT_S)

    async def ready(self, port: int) -> None:
        """Poll ``/readyz`` until 200; fail early if the process ended."""
        async def until_ready():
            while True:
                assert self.proc is not None and self.proc.returncode is None, self.stderr
                try:
                    if (await get(port, "/readyz"))[0] == 200:
                        return
                except OSError:
                    pass
                await asyncio.sleep(0.1)
        await asyncio.wait_for(until_ready(), WAIT_S)

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()


def _env(data: Path, port: int, telegram: FakeTelegram, discord: FakeDiscord) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(
        ("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "HEALTH", "LLM_", "ALLOWED"))}
    env.update({
        "MEMORY_BOT_DATA_DIR": str(data), "EMBEDDER": "hashing", "HEALTH_PORT": str(port),
        "TELEGRAM_BOT_TOKEN": telegram.token, "TELEGRAM_API_BASE_URL": telegram.base_url,
        "DISCORD_BOT_TOKEN": "discord-test-token", "DISCORD_API_BASE_URL": discord.api_base,
        "DISCORD_GATEWAY_URL": discord.gateway_url, "SHUTDOWN_GRACE_SECONDS": "30",
        "LOG_LEVEL": "INFO"})
    return env


async def _until(predicate, what: str) -> None:
    async def check():
        while not predicate():
            await asyncio.sleep(0.05)
    try:
        await asyncio.wait_for(check(), WAIT_S)
    except asyncio.TimeoutError:
        raise AssertionError(f"never happened: {what}") from None


def _rows(db: Path, sql: str, args=()) -> list[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


async def test_run_serves_both_platforms_stops_on_sigterm_and_restarts_with_nothing_lost(
        tmp_path):
    telegram = await FakeTelegram().start()
    discord = FakeDiscord()
    discord.add_guild("Lab", ["general"])
    ana = discord.user("ana")
    await discord.start()
    data = tmp_path / "data"
    port = free_port()
    env = _env(data, port, telegram, discord)
    first = Proc(tmp_path, env, "first")
    second = Proc(tmp_path, env, "second")
    again = Proc(tmp_path, env, "again")
    dm = discord.dm_channel(ana)
    try:
        await first.start()
        await first.ready(port)
        assert await get(port, "/healthz") == (200, "ok")

        # a second process on the same folder refuses: message and exit code 2
        await second.start()
        assert await second.wait() == 2, second.stderr
        assert (f"memory-bot: the data folder {data} is in use by another memory-bot process "
                f"(pid {first.proc.pid})") in second.stderr

        # a fact stated on each platform
        telegram.push(telegram.private(ALICE, "remember that I live in Graz"))
        await _until(lambda: any(t.startswith("Noted: ") for t in telegram.sent(11)),
                     "telegram fact noted")
        await discord.say(ana, "remember that I live in Linz")
        await _until(lambda: any(m["content"].startswith("Noted: ")
                                 for m in discord.sent(dm)), "discord fact noted")
        # a session end on each, so consolidations are queued: Discord's answered first, then
        # SIGTERM as soon as Telegram's "bye" is in the client's queue (not yet answered)
        await discord.say(ana, "bye")
        await _until(lambda: any(m["content"].startswith("Bye for now")
                                 for m in discord.sent(dm)), "the discord goodbye")
        bye = telegram.private(ALICE, "bye")
        telegram.push(bye)
        await telegram.taken(bye)
        first.proc.send_signal(signal.SIGTERM)
        assert await first.wait() == 0, first.stderr
        assert "Traceback" not in first.stderr, first.stderr
        # the update taken before the signal was still answered while stopping
        assert any(t.startswith("Bye for now") for t in telegram.sent(11)), telegram.sent(11)

        # the same folder again: consolidation left over (if any) runs, nothing is missing
        await again.start()
        await again.ready(port)
        db = data / "memory.db"
        facts = {r[0] for r in _rows(db, "SELECT text FROM facts WHERE status = 'active'")}
        assert facts == {"The user lives in Graz", "The user lives in Linz"}
        per_platform = dict(_rows(db, "SELECT a.platform, count(*) FROM turns t JOIN accounts a "
                                      "ON a.user_id = t.user_id WHERE t.role = 'user' "
                                      "GROUP BY a.platform"))
        assert per_platform == {"telegram": 1, "discord": 1}  # "bye" closes, it is not a turn
        episodes = _rows(db, "SELECT th.platform, count(e.id) FROM sessions s JOIN threads th "
                             "ON th.id = s.thread_id LEFT JOIN episodes e ON e.session_id = s.id"
                             " WHERE s.closed_at IS NOT NULL GROUP BY s.id")
        assert sorted(episodes) == [("discord", 1), ("telegram", 1)]

        async def no_pending_work() -> None:
            while _rows(db, "SELECT count(*) FROM work WHERE done_at IS NULL") != [(0,)]:
                await asyncio.sleep(0.05)
        await asyncio.wait_for(no_pending_work(), WAIT_S)
        # and the restarted bot recalls the fact on the platform it was learned on
        before = len(telegram.sent(11))
        telegram.push(telegram.private(ALICE, "where do I live?"))
        await _until(lambda: len(telegram.sent(11)) > before, "an answer after the restart")
        assert "Graz" in telegram.sent(11)[-1] and "Linz" not in telegram.sent(11)[-1]
        again.proc.send_signal(signal.SIGTERM)
        assert await again.wait() == 0, again.stderr
        with pytest.raises(OSError):
            await get(port, "/healthz")
    finally:
        for proc in (first, second, again):
            proc.kill()
            if proc.proc is not None:
                await proc.proc.wait()
        await discord.close()
        await telegram.close()


def test_discord_endpoint_overrides_are_checked():
    settings = load_settings({"DISCORD_API_BASE_URL": "http://127.0.0.1:1/api/v10/",
                              "DISCORD_GATEWAY_URL": "ws://127.0.0.1:1/gateway"}, env_file=None)
    assert settings.discord_api_base_url == "http://127.0.0.1:1/api/v10"
    with pytest.raises(ConfigError, match="DISCORD_GATEWAY_URL"):
        load_settings({"DISCORD_GATEWAY_URL": "http://127.0.0.1:1/gateway"}, env_file=None)
    with pytest.raises(ConfigError, match="DISCORD_API_BASE_URL"):
        load_settings({"DISCORD_API_BASE_URL": "discord.com"}, env_file=None)
