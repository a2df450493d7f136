"""``memory-bot run``: the app and every platform adapter that has a token, in one process.

Start-up order: the app (stores, index, pending consolidation), then :meth:`App.start` (the
scheduler and overdue work, inside the running loop), then the adapters, which only then take
input. Shutdown (SIGINT/SIGTERM, or ``stop``): adapters first (no new input; queued turns
finish), then the app within ``SHUTDOWN_GRACE_SECONDS``.

Adding a platform is one :class:`AdapterStarter` in :data:`STARTERS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.app import App, build_app
from bot.settings import Settings

log = logging.getLogger(__name__)


class RunningAdapter(Protocol):
    """A started platform adapter."""

    async def stop(self) -> None:
        """Stop taking input, finish queued work, release connections."""
        ...


@dataclass(frozen=True)
class AdapterStarter:
    """How to start one platform adapter.

    Attributes:
        name: platform name for logs.
        enabled: whether the settings ask for it (its token is set).
        start: builds and starts it on the app; raises ``ConfigError`` for bad settings.
    """

    name: str
    enabled: Callable[[Settings], bool]
    start: Callable[[Settings, App], Awaitable[RunningAdapter]]


async def start_telegram(settings: Settings, app: App) -> RunningAdapter:
    """Start the Telegram adapter (long polling, or webhook with ``TELEGRAM_WEBHOOK_URL``)."""
    from adapters.telegram import TelegramAdapter, TelegramConfig

    # Opt in to PTB's coming timedelta durations (``RetryAfter.retry_after``), which the
    # adapter already handles, instead of a deprecation warning on every flood-control reply.
    os.environ.setdefault("PTB_TIMEDELTA", "true")
    assert settings.telegram_bot_token is not None
    secret = settings.telegram_webhook_secret
    config = TelegramConfig(
        token=settings.telegram_bot_token.get_secret_value(),
        base_url=settings.telegram_api_base_url,
        webhook_url=settings.telegram_webhook_url,
        webhook_secret=secret.get_secret_value() if secret is not None else None,
        webhook_port=settings.telegram_webhook_port,
    )
    adapter = TelegramAdapter(app.engine, config, marks=app.store,
                              allows=lambda user_id: settings.allows("telegram", user_id))
    await adapter.start()
    return adapter


async def start_discord(settings: Settings, app: App) -> RunningAdapter:
    """Start the Discord adapter (logs in, syncs slash commands, connects in the background)."""
    from adapters.discord import start_discord as start

    return await start(settings, app)


STARTERS: tuple[AdapterStarter, ...] = (
    AdapterStarter("telegram", lambda s: s.telegram_bot_token is not None, start_telegram),
    AdapterStarter("discord", lambda s: s.discord_bot_token is not None, start_discord),
)


async def run_platforms(settings: Settings, *, starters: Sequence[AdapterStarter] = STARTERS,
                        stop: asyncio.Event | None = None) -> int:
    """Run every enabled adapter until SIGINT/SIGTERM (or ``stop`` is set).

    Returns:
        The exit code: 0 after a clean stop, 2 when no adapter is enabled.

    Raises:
        ConfigError: a setting is invalid (e.g. a token the platform refuses).
        MemoryCoreError: a store or a platform could not be started.
    """
    chosen = [s for s in starters if s.enabled(settings)]
    if not chosen:
        log.error("no platform adapter has a token (TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN)")
        return 2
    stop = stop or asyncio.Event()
    app = await build_app(settings)
    running: list[tuple[str, RunningAdapter]] = []
    loop = asyncio.get_running_loop()
    handled: list[signal.Signals] = []
    try:
        await app.start()  # overdue sessions close before any input is taken
        for starter in chosen:
            running.append((starter.name, await starter.start(settings, app)))
            log.info("platform adapter started: %s", starter.name)
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop.set)
                handled.append(sig)
        await stop.wait()
        log.info("stopping: %s", ", ".join(name for name, _ in running))
        return 0
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        for name, adapter in reversed(running):
            try:
                await adapter.stop()
            except Exception:  # one adapter's failure must not keep the others running
                log.exception("stopping the %s adapter failed", name)
        try:
            await asyncio.wait_for(app.aclose(), timeout=settings.shutdown_grace_seconds)
        except asyncio.TimeoutError:
            log.warning("shutdown grace of %ss exceeded; pending work stays recorded",
                        settings.shutdown_grace_seconds)
