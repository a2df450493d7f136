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
    """A started platform adapter.

    It may also offer ``readiness() -> str | None`` (None while connected, else a short
    reason) for ``/readyz``; an adapter without it counts as ready once started.
    """

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
    # behind a load balancer, every worker on the database takes a chat's updates in order
    locks = app.thread_locks.updates if app.thread_locks is not None else None
    adapter = TelegramAdapter(app.engine, config, marks=app.store.deliveries,
                              allows=lambda user_id: settings.allows("telegram", user_id),
                              chat_locks=locks if config.webhook_url else None)
    await adapter.start()
    return adapter


async def start_discord(settings: Settings, app: App) -> RunningAdapter:
    """Start the Discord adapter (logs in, syncs slash commands, connects in the background)."""
    from adapters.discord import start_discord as start

    # endpoint overrides (DISCORD_API_BASE_URL, DISCORD_GATEWAY_URL): proxies and tests only
    return await start(settings, app, api_base=settings.discord_api_base_url,
                       gateway_url=settings.discord_gateway_url)


STARTERS: tuple[AdapterStarter, ...] = (
    AdapterStarter("telegram", lambda s: s.telegram_bot_token is not None, start_telegram),
    AdapterStarter("discord", lambda s: s.discord_bot_token is not None, start_discord),
)


async def run_platforms(settings: Settings, *, starters: Sequence[AdapterStarter] = STARTERS,
                        stop: asyncio.Event | None = None) -> int:
    """Run every enabled adapter until SIGINT/SIGTERM (or ``stop`` is set).

    With ``HEALTH_PORT`` set, ``/healthz`` and ``/readyz`` (``bot/health.py``) answer from
    the moment the stores are open until the stores close; ``/readyz`` is 200 only while every
    chosen adapter is started and connected.

    Returns:
        The exit code: 0 after a clean stop, 2 when no adapter is enabled.

    Raises:
        ConfigError: a setting is invalid (e.g. a token the platform refuses, a health port
            in use), or another process holds the data folder (``DataDirInUse``).
        MemoryCoreError: a store or a platform could not be started.
    """
    chosen = [s for s in starters if s.enabled(settings)]
    if not chosen:
        log.error("no platform adapter has a token (TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN)")
        return 2
    warn_open_access(settings)
    stop = stop or asyncio.Event()
    app = await build_app(settings)
    running: list[tuple[str, RunningAdapter]] = []
    loop = asyncio.get_running_loop()
    handled: list[signal.Signals] = []
    health = None
    try:
        if settings.health_port:
            from bot.health import HealthServer

            health = HealthServer(readiness_checks(app, chosen, running),
                                  port=settings.health_port)
            await health.start()
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
        finally:
            if health is not None:
                await health.stop()


OPEN_ACCESS_WARNING = (
    "ALLOWED_USERS is empty and a language model is configured (%s): anyone who finds this "
    "bot can talk to it and spend your model budget. Set ALLOWED_USERS, e.g. "
    "ALLOWED_USERS=telegram:123456789,discord:987654321")


def warn_open_access(settings: Settings) -> bool:
    """Log a warning when a paid model is configured and ``ALLOWED_USERS`` is empty.

    Returns:
        Whether the warning was logged (no warning with the offline model, which costs
        nothing, or with a non-empty list).
    """
    provider = settings.resolved_llm_provider()
    if provider == "offline" or settings.allowed_users:
        return False
    log.warning(OPEN_ACCESS_WARNING, provider)
    return True


def readiness_checks(app: App, chosen: Sequence[AdapterStarter],
                     running: list[tuple[str, RunningAdapter]]
                     ) -> dict[str, Callable[[], str | None]]:
    """The ``/readyz`` checks of one run: ``stores`` (open until shutdown closes them) and
    one per chosen adapter (``not started`` until it is, then its own ``readiness()``).
    ``running`` is read live, so adapters count as they start and stop."""

    def stores() -> str | None:
        return None if app.stores_open else "closed"

    def adapter(name: str) -> Callable[[], str | None]:
        def check() -> str | None:
            found = next((a for n, a in running if n == name), None)
            if found is None:
                return "not started"
            readiness = getattr(found, "readiness", None)
            return readiness() if readiness is not None else None
        return check

    checks: dict[str, Callable[[], str | None]] = {"stores": stores}
    for starter in chosen:
        checks[starter.name] = adapter(starter.name)
    return checks
