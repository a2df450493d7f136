"""What every chat adapter needs to keep received messages durably until they are handled.

A platform update (a Telegram update, a Discord message for the bot) is recorded when it
arrives, kept with its payload until the turn it produced is stored or its command ended, and
then marked handled; the handled mark stays for :data:`SEEN_KEEP` so a redelivery across a
restart is recognised and skipped. The store's deliveries port (``memory.ports.DeliveryStore``)
implements :class:`UpdateMarks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

SEEN_KEEP = timedelta(days=7)
"""How long the store remembers a handled update's key (a redelivery across a restart)."""


class UpdateMarks(Protocol):
    """The durable record of received updates, by ``(platform, update_key)``; times are UTC."""

    async def receive_updates(self, platform: str, updates: Sequence[tuple[str, str]],
                              now: datetime) -> None:
        """Keep ``(update_key, payload JSON)`` pairs as received; known keys are left as they are."""
        ...

    async def update_state(self, platform: str, update_key: str) -> str | None:
        """``"received"``, ``"handled"``, or None for a key never seen."""
        ...

    async def received_updates(self, platform: str, prefix: str = "") -> list[tuple[str, str]]:
        """Kept ``(update_key, payload)`` pairs not yet handled whose key starts with ``prefix``,
        in arrival order."""
        ...

    async def mark_update_handled(self, platform: str, update_key: str, now: datetime) -> None:
        """Mark a kept (or new) key handled and drop its payload."""
        ...

    async def prune_seen_updates(self, before: datetime) -> int:
        """Forget marks older than ``before``; returns how many went."""
        ...
