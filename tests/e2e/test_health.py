"""Health endpoints and start-up warnings of ``memory-bot run``: the real aiohttp
server on 127.0.0.1 asked with aiohttp's client; ``run_platforms`` with the real Telegram and
Discord adapters against the fakes. Waits poll with deadlines that only guard against a hang."""

from __future__ import annotations

import asyncio
import logging
import socket

import aiohttp
import pytest

from adapters.discord import start_discord
from bot.health import ROUTES, HealthServer
from bot.runner import STARTERS, AdapterStarter, run_platforms, warn_open_access
from bot.settings import load_settings
from tests.e2e.fakes.discord import FakeDiscord
from tests.e2e.fakes.telegram import FakeTelegram

WAIT_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def get(port: int, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}{path}") as r:
        return r.status, await r.text()


async def poll(port: int, path: str, status: int) -> str:
    """GET ``path`` until it answers ``status``; return the body."""
    async def attempt():
        while True:
            try:
                code, body = await get(port, path)
                if code == status:
                    return body
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.05)
    return await asyncio.wait_for(attempt(), WAIT_S)


@pytest.fixture(autouse=True)
def _ptb_timedelta(monkeypatch):
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # as bot/runner.py opts in


async def test_healthz_is_alive_and_readyz_names_what_is_not_ready():
    state: dict[str, str | None] = {"stores": None, "telegram": "not connected"}
    checks = {name: (lambda n=name: state[n]) for name in state}
    server = HealthServer(checks, port=0, host="127.0.0.1")
    await server.start()
    try:
        assert ROUTES == ("/healthz", "/readyz")
        assert await get(server.port, "/healthz") == (200, "ok")
        status, body = await get(server.port, "/readyz")
        assert status == 503 and '"telegram": "not connected"' in body
        assert '"stores": "ok"' in body
        state["telegram"] = None
        assert (await get(server.port, "/readyz"))[0] == 200
        checks["broken"] = lambda: 1 / 0
        status, body = await get(server.port, "/readyz")
        assert status == 503 and "check failed" in body
    finally:
        await server.stop()
    await server.stop()  # idempotent


async def test_a_health_port_in_use_is_a_config_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = HealthServer({}, port=taken.getsockname()[1], host="127.0.0.1")
        with pytest.raises(Exception, match="HEALTH_PORT"):
            await server.start()


async def test_run_is_ready_only_while_stores_and_every_adapter_are_connected(tmp_path):
    telegram = await FakeTelegram().start()
    discord_fake = FakeDiscord()
    discord_fake.add_guild("Lab", ["general"])
    await discord_fake.start()
    port = free_port()
    settings = load_settings({
        "MEMORY_BOT_DATA_DIR": str(tmp_path / "data"), "EMBEDDER": "hashing",
        "HEALTH_PORT": str(port), "TELEGRAM_BOT_TOKEN": telegram.token,
        "TELEGRAM_API_BASE_URL": telegram.base_url, "DISCORD_BOT_TOKEN": "d-token",
    }, env_file=None)
    gate = asyncio.Event()
    handles = []

    async def start_discord_at_fake(settings, app):
        await gate.wait()  # held back: /readyz must say "not started" meanwhile
        handles.append(await start_discord(settings, app, api_base=discord_fake.api_base,
                                           gateway_url=discord_fake.gateway_url,
                                           client_options={"guild_ready_timeout": 0.05}))
        return handles[-1]

    starters = [STARTERS[0], AdapterStarter("discord", lambda s: True, start_discord_at_fake)]
    stop = asyncio.Event()
    run = asyncio.get_running_loop().create_task(
        run_platforms(settings, starters=starters, stop=stop))
    try:
        assert await poll(port, "/healthz", 200) == "ok"
        body = await poll(port, "/readyz", 503)
        assert '"discord": "not started"' in body and '"stores": "ok"' in body
        await telegram.wait_for(lambda: telegram.of("getUpdates"))
        status, body = await get(port, "/readyz")
        assert status == 503 and '"telegram": "ok"' in body
        gate.set()
        await poll(port, "/readyz", 200)
        await handles[0].client.close()  # the gateway connection is gone
        body = await poll(port, "/readyz", 503)
        assert '"discord": "closed"' in body and '"telegram": "ok"' in body
        stop.set()
        assert await asyncio.wait_for(run, WAIT_S) == 0
        with pytest.raises(aiohttp.ClientConnectionError):
            await get(port, "/healthz")  # stopped with the process's stores
    finally:
        stop.set()
        gate.set()
        if not run.done():
            await asyncio.wait_for(run, WAIT_S)
        await discord_fake.close()
        await telegram.close()


def test_a_model_key_with_no_allowed_users_warns_at_start_up(caplog):
    def settings(**values):
        return load_settings({"EMBEDDER": "hashing", **values}, env_file=None)

    with caplog.at_level(logging.WARNING, logger="bot.runner"):
        assert warn_open_access(settings(ANTHROPIC_API_KEY="sk-ant-test-key-123"))
        assert not warn_open_access(settings())  # the offline model costs nothing
        assert not warn_open_access(settings(ANTHROPIC_API_KEY="sk-ant-test-key-123",
                                             ALLOWED_USERS="telegram:1"))
        assert warn_open_access(settings(OPENAI_BASE_URL="http://127.0.0.1:9/v1"))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert "ALLOWED_USERS is empty" in warnings[0].getMessage()
    assert "anthropic" in warnings[0].getMessage()
    assert "sk-ant-test-key-123" not in caplog.text


async def test_run_platforms_gives_the_warning(tmp_path, caplog):
    settings = load_settings({"MEMORY_BOT_DATA_DIR": str(tmp_path / "data"),
                              "EMBEDDER": "hashing", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                              "OPENAI_MODEL": "m"}, env_file=None)

    class Idle:
        async def stop(self) -> None:
            pass

    async def start(settings, app):
        return Idle()

    stop = asyncio.Event()
    stop.set()
    with caplog.at_level(logging.WARNING, logger="bot.runner"):
        assert await run_platforms(settings, stop=stop, starters=[
            AdapterStarter("idle", lambda s: True, start)]) == 0
    assert any("ALLOWED_USERS is empty" in r.getMessage() for r in caplog.records)
