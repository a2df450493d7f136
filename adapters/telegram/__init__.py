"""Telegram adapter on python-telegram-bot 22 (``Application``).

The public front door is :class:`TelegramAdapter` with its :class:`TelegramConfig`; the core it
serves is anything with the :class:`Conversation` methods (the conversation engine), and
:class:`Marks` keeps its durable marks (the SQLite store). Modules: ``_normalise`` (updates into
the core's message type), ``_send`` (split, HTML, retries, blocked users, typing), ``_format``,
``_buttons`` (``/memories`` pages, confirmations) and ``_adapter`` (handlers and life cycle).
"""

from __future__ import annotations

from adapters.telegram._adapter import (
    menu,
    PRIVACY_NOTE,
    Conversation,
    Marks,
    TelegramAdapter,
    TelegramConfig,
    TelegramStartError,
)
from adapters.telegram._format import MESSAGE_LIMIT, split_message, to_html

__all__ = [
    "MESSAGE_LIMIT",
    "PRIVACY_NOTE",
    "Conversation",
    "Marks",
    "TelegramAdapter",
    "TelegramConfig",
    "TelegramStartError",
    "menu",
    "split_message",
    "to_html",
]
