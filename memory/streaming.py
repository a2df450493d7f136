"""Partial replies while a model is still writing, for chat adapters that show a reply as it
grows (Discord, Telegram).

A chat adapter wraps its call of the conversation engine in :func:`listen`; a chat model that
streams calls :func:`report` with the text written so far. Only the task that called
:func:`listen` hears reports: work it starts in other tasks (consolidation, scheduled jobs)
never leaks into a user's reply, and nothing happens when no adapter listens (console,
evaluation, background jobs). The final reply still comes back from the engine as usual; the
partial texts are a preview only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

log = logging.getLogger(__name__)

_listener: ContextVar[tuple[asyncio.Task | None, Callable[[str], None]] | None] = ContextVar(
    "memory_bot_partial_reply_listener", default=None)


def _current_task() -> asyncio.Task | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop
        return None


@contextmanager
def listen(callback: Callable[[str], None]) -> Iterator[None]:
    """Deliver partial replies written inside this block (in this task) to ``callback``.

    Args:
        callback: called with the whole text written so far (not a delta); must not block.
    """
    token = _listener.set((_current_task(), callback))
    try:
        yield
    finally:
        _listener.reset(token)


def wanted() -> bool:
    """True when someone listens to partial replies in the current task (a model may then
    choose to stream)."""
    current = _listener.get()
    return current is not None and current[0] is _current_task()


def report(text_so_far: str) -> None:
    """Offer the reply written so far to the listener, if any (never raises)."""
    current = _listener.get()
    if current is None or current[0] is not _current_task():
        return
    try:
        current[1](text_so_far)
    except Exception:  # a broken preview must never break the reply
        log.exception("partial reply listener failed")
