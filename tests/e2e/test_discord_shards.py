"""Discord sharding per process: with ``DISCORD_SHARD_COUNT`` and ``DISCORD_SHARD_IDS`` the
real discord.py client (``AutoShardedClient``), started by ``start_discord`` with the real app
(SQLite + LanceDB in a temporary folder, hashing embedder), identifies to the fake gateway as
its shards only, is sent the guilds of those shards, and answers there."""

from __future__ import annotations

import discord
import pytest

from adapters.discord import start_discord
from adapters.embedders import HashingEmbedder
from bot.app import build_app
from bot.settings import load_settings
from memory.errors import ConfigError
from tests.e2e.fakes.discord import DISCORD_EPOCH_MS, FakeDiscord
from tests.e2e.waiting import WAIT_S, until


def _guild_id(shard: int, count: int, n: int) -> int:
    """A snowflake whose guild belongs to ``shard`` of ``count`` (its time part picks it)."""
    stamp = 1_700_000_000_000 - DISCORD_EPOCH_MS
    stamp += (shard - stamp) % count
    return (stamp << 22) + n


async def test_a_process_running_shard_1_of_2_identifies_as_it_and_serves_its_guilds(tmp_path):
    fake = FakeDiscord()
    even = fake.add_guild("Even", ["general"], guild_id=_guild_id(0, 2, 1))
    odd = fake.add_guild("Odd", ["general"], guild_id=_guild_id(1, 2, 2))
    assert fake.shard_of(even.id, 2) == 0 and fake.shard_of(odd.id, 2) == 1
    ana = fake.user("ana")
    await fake.start()
    settings = load_settings({"DISCORD_BOT_TOKEN": "test-token", "EMBEDDER": "hashing",
                              "MEMORY_BOT_DATA_DIR": str(tmp_path / "data"),
                              "DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "1"},
                             env_file=None)
    app = await build_app(settings, embedder=HashingEmbedder())
    handle = None
    try:
        await app.start()
        handle = await start_discord(settings, app, api_base=fake.api_base,
                                     gateway_url=fake.gateway_url,
                                     client_options={"guild_ready_timeout": 0.05})
        await handle.wait_ready(WAIT_S)
        client = handle.client
        assert isinstance(client, discord.AutoShardedClient)
        assert [i["shard"] for i in fake.identifies] == [[1, 2]]
        assert client.shard_count == 2 and list(client.shards) == [1]
        assert [g.id for g in client.guilds] == [odd.id]  # shard 0's guild went elsewhere

        channel = fake.channel(odd, "general")
        before = len(fake.sent(channel))
        await fake.say(ana, f"<@{fake.bot['id']}> remember that I play the viola", guild=odd,
                       channel_id=channel, mentions=[fake.bot])
        await until(lambda: len(fake.sent(channel)) > before)
        assert "viola" in fake.sent(channel)[-1]["content"]
    finally:
        if handle is not None:
            await handle.stop()
        await app.aclose()
        await fake.close()


@pytest.mark.parametrize("values, words", [
    ({"DISCORD_SHARD_IDS": "1"}, "needs DISCORD_SHARD_COUNT"),
    ({"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "0,2"}, "not below"),
    ({"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "one"}, "shard ids are numbers"),
    ({"DISCORD_SHARD_COUNT": "0"}, "DISCORD_SHARD_COUNT"),
])
def test_shard_settings_that_cannot_work_are_refused_naming_the_setting(values, words):
    with pytest.raises(ConfigError, match=words):
        load_settings(values, env_file=None)


def test_shard_ids_default_to_every_shard_of_the_count():
    settings = load_settings({"DISCORD_SHARD_COUNT": "3"}, env_file=None)
    assert settings.discord_shard_count == 3 and settings.discord_shard_ids == ()
    assert load_settings({"DISCORD_SHARD_COUNT": "3", "DISCORD_SHARD_IDS": "2, 0"},
                         env_file=None).discord_shard_ids == (2, 0)
