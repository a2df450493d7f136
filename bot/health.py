"""HTTP health endpoints for ``memory-bot run`` (``HEALTH_PORT``; 0 = off).

- ``GET /healthz``: 200 ``ok`` as long as the event loop answers (liveness: restart me if not).
- ``GET /readyz``: 200 when the stores are open and every started platform adapter reports a
  live connection, else 503; the body is JSON naming each check and what is not ready::

      {"ready": false, "checks": {"stores": "ok", "telegram": "ok",
                                  "discord": "not connected"}}

The checks are plain synchronous callables returning ``None`` when ready or a short reason
(they must be cheap: they run on every probe, inside the event loop). Fly.io and systemd
probes use these paths (``docs/deploy.md``); :data:`ROUTES` is the single source of them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping

from aiohttp import web

from memory.errors import ConfigError

log = logging.getLogger(__name__)

HEALTHZ = "/healthz"
READYZ = "/readyz"
#: The health routes this server answers (liveness, readiness).
ROUTES: tuple[str, ...] = (HEALTHZ, READYZ)
DEFAULT_HOST = "0.0.0.0"
"""All interfaces: platform health checkers (Fly.io, a container runtime) probe the machine's
address, not its loopback."""

Check = Callable[[], "str | None"]
"""A readiness check: ``None`` when ready, else a short reason such as ``"not connected"``."""


class HealthServer:
    """A tiny aiohttp server with :data:`ROUTES`. ``await start()``, later ``await stop()``.

    Args:
        checks: readiness checks by name (read on every ``/readyz``; the mapping may change
            while the server runs, e.g. as adapters start).
        port: TCP port; 0 picks a free one (tests), see :attr:`port` after :meth:`start`.
        host: address to listen on.
    """

    def __init__(self, checks: Mapping[str, Check], *, port: int,
                 host: str = DEFAULT_HOST) -> None:
        self.checks = checks
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    def readiness(self) -> dict[str, str]:
        """Every check's state: ``"ok"`` or its reason (a failing check reads as its error)."""
        out: dict[str, str] = {}
        for name, check in list(self.checks.items()):
            try:
                problem = check()
            except Exception as exc:  # noqa: BLE001 - a broken check means not ready
                problem = f"check failed: {exc}"
            out[name] = problem or "ok"
        return out

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        checks = self.readiness()
        ready = bool(checks) and all(v == "ok" for v in checks.values())
        return web.Response(status=200 if ready else 503, content_type="application/json",
                            text=json.dumps({"ready": ready, "checks": checks}))

    async def start(self) -> None:
        """Listen on ``host:port``.

        Raises:
            ConfigError: the port cannot be bound (in use, or privileged).
        """
        server = web.Application()
        server.router.add_get(HEALTHZ, self._healthz)
        server.router.add_get(READYZ, self._readyz)
        runner = web.AppRunner(server, handle_signals=False, access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except OSError as exc:
            await runner.cleanup()
            raise ConfigError(f"invalid setting: HEALTH_PORT: cannot listen on "
                              f"{self.host}:{self.port}: {exc}") from exc
        self._runner = runner
        self.port = runner.addresses[0][1]
        log.info("health endpoints on %s:%s (%s)", self.host, self.port, ", ".join(ROUTES))

    async def stop(self) -> None:
        """Stop listening (idempotent)."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
