"""The Discord adapter (discord.py 2.x): DMs, server channels and threads, slash commands.

One public entry point, :func:`start_discord`, used by ``memory-bot run``::

    handle = await start_discord(settings, app)   # logs in, syncs commands, connects
    ...
    await handle.stop()

What it does (details in the private modules):

- ``_normalise``: which messages are for the bot (every DM; in servers when @mentioned or
  replied to; every message of a thread the bot started; never other bots) and the core's
  message for them (thread keys, display names, mentions as names).
- ``_adapter``: messages through the conversation engine with typing and a streamed preview;
  slash commands deferred first, then answered through the same handlers; one error handler.
- ``_reply`` and ``_text``: 2,000-character messages split on paragraph boundaries, code
  blocks kept intact, no mention in model output can ping anyone.
- ``_commands`` and ``_views``: the chat commands of ``bot.commands``, ``/memories`` pages and the
  confirm button.

The product sets no discord.py endpoint; ``api_base`` and ``gateway_url`` exist for tests
against a fake Discord on 127.0.0.1 and are process-wide in discord.py (they are restored by
:meth:`DiscordHandle.stop`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord._adapter import CONTENT_INTENT_MISSING, DiscordAdapter, MemoryBotClient
from adapters.discord._normalise import PLATFORM
from adapters.discord._text import MESSAGE_LIMIT, neutralise, split_message
from memory.errors import ConfigError

log = logging.getLogger(__name__)

__all__ = ["MESSAGE_LIMIT", "PLATFORM", "DiscordAdapter", "DiscordHandle", "MemoryBotClient",
           "neutralise", "split_message", "start_discord"]


class _Endpoints:
    """discord.py's REST base and gateway URL, overridden for tests and restored after."""

    def __init__(self, api_base: str | None, gateway_url: str | None) -> None:
        self.api_base = api_base
        self.gateway_url = gateway_url
        self._saved = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)

    def apply(self) -> None:
        if self.api_base is not None:
            Route.BASE = self.api_base.rstrip("/")
        if self.gateway_url is not None:
            DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.gateway_url)

    def restore(self) -> None:
        Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = self._saved


class DiscordHandle:
    """A running Discord adapter: :attr:`task` runs the gateway connection (reconnecting by
    itself) until :meth:`stop`.

    Attributes:
        name: ``"discord"``.
        adapter: the adapter (its ``ready`` event is set by the first gateway READY).
        client: the current ``discord.Client`` (replaced once if Discord refuses the
            message-content intent).
        task: the gateway task; it ends with an exception only on a failure discord.py does not
            retry (e.g. the token is revoked).
    """

    name = PLATFORM

    def __init__(self, adapter: DiscordAdapter, token: str, endpoints: _Endpoints) -> None:
        self.adapter = adapter
        self.client: MemoryBotClient = adapter.build_client()
        self.task: asyncio.Task | None = None
        self._token = token
        self._endpoints = endpoints
        self._stopping = False

    async def _login(self) -> None:
        try:
            await self.client.login(self._token)
        except BaseException as exc:
            await self.client.close()
            if not isinstance(exc, discord.LoginFailure):
                raise
            raise ConfigError("invalid setting: DISCORD_BOT_TOKEN: Discord rejected the token "
                              "(copy it again from Developer Portal > Bot > Reset Token)") from exc
        if not self.adapter.content_intent and self.client.intents.message_content:
            await self._rebuild_without_content()  # known before connecting: no doomed IDENTIFY

    async def _rebuild_without_content(self) -> None:
        await self.client.close()
        self.adapter.content_intent = False
        self.client = self.adapter.build_client()
        await self.client.login(self._token)  # setup_hook again; commands are not synced twice

    async def _run(self) -> None:
        try:
            try:
                await self.client.connect()
            except discord.PrivilegedIntentsRequired:
                if self._stopping:
                    return
                log.warning(CONTENT_INTENT_MISSING)
                await self._rebuild_without_content()
                await self.client.connect()
        except Exception:
            if not self._stopping:
                log.exception("discord gateway stopped")
                raise

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until the gateway has sent READY (once is enough; reconnects do not reset
        it)."""
        await asyncio.wait_for(self.adapter.ready.wait(), timeout)

    def readiness(self) -> str | None:
        """None while the gateway connection is up (READY seen, not closed, not between a
        disconnect and its resume), else a short reason (``/readyz``). Reads flags only."""
        if self.client.is_closed():
            return "closed"
        if self.task is not None and self.task.done():
            return "gateway stopped"
        if not self.client.is_ready() or not self.adapter.connected:
            return "not connected"
        return None

    async def stop(self, *, grace: float = 10.0) -> None:
        """Stop taking input, let the messages in progress be answered (up to ``grace``
        seconds), then close the connection and the HTTP session; restore discord.py's
        endpoints."""
        self._stopping = True
        try:
            await self.adapter.drain(grace)
            await self.client.close()
            if self.task is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(self.task, 10)
        finally:
            self._endpoints.restore()


async def start_discord(settings: Any, app: Any, *, api_base: str | None = None,
                        gateway_url: str | None = None, edit_interval: float = 1.5,
                        client_options: dict | None = None) -> DiscordHandle:
    """Log in to Discord, register the slash commands and connect in the background.

    Args:
        settings: the product settings (``DISCORD_BOT_TOKEN``, ``DISCORD_GUILD_ID``,
            ``ALLOWED_USERS``; ``DISCORD_SHARD_COUNT`` and ``DISCORD_SHARD_IDS`` make the
            client an ``AutoShardedClient`` running those shards).
        app: the composition root's ``App`` (its ``engine``, and its ``store`` to keep
            received messages until handled).
        api_base: REST base URL instead of discord.py's (tests only; e.g.
            ``http://127.0.0.1:PORT/api/v10``).
        gateway_url: gateway URL instead of discord.py's (tests only).
        edit_interval: least seconds between two edits of a reply preview.
        client_options: extra ``discord.Client`` keyword arguments.

    Returns:
        The running adapter; ``await handle.stop()`` ends it.

    Raises:
        ConfigError: ``DISCORD_BOT_TOKEN`` is unset or Discord rejects it.
    """
    token = settings.discord_bot_token
    if token is None:
        raise ConfigError("invalid setting: DISCORD_BOT_TOKEN: not set")
    options = dict(client_options or {})
    if getattr(settings, "discord_shard_count", None) is not None:
        options.update(shard_count=settings.discord_shard_count,
                       shard_ids=list(settings.discord_shard_ids) or None)
    adapter = DiscordAdapter(engine=app.engine, allows=settings.allows,
                             guild_id=settings.discord_guild_id, edit_interval=edit_interval,
                             client_options=options, marks=app.store.deliveries)
    endpoints = _Endpoints(api_base, gateway_url)
    endpoints.apply()
    handle = DiscordHandle(adapter, token.get_secret_value(), endpoints)
    try:
        await handle._login()
    except BaseException:
        endpoints.restore()
        raise
    handle.task = asyncio.get_running_loop().create_task(handle._run(), name="discord-gateway")
    return handle
