"""Language-model adapters behind :class:`memory.ports.ChatModel`.

- :class:`AnthropicChatModel`: Claude through the ``anthropic`` SDK (prompt caching, streaming).
- :class:`OpenAICompatChatModel`: any OpenAI-compatible server through the ``openai`` SDK.
- :class:`RetryPolicy`: bounded retries with backoff and jitter, shared by both.
- :func:`cost_usd`, :func:`price_for`: cost of reported usage from the documented price table.

The two adapters are imported on first use (the SDKs take seconds to import, which the offline
console should not pay). The offline model stays in :mod:`adapters.models`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from adapters.llm._retry import RetryPolicy
from adapters.llm._usage import CUT_OFF_NOTE
from adapters.llm.pricing import PRICES_CHECKED, cost_usd, price_for

if TYPE_CHECKING:
    from adapters.llm.anthropic import AnthropicChatModel
    from adapters.llm.openai_compat import OpenAICompatChatModel

_LAZY = {"AnthropicChatModel": "adapters.llm.anthropic",
         "OpenAICompatChatModel": "adapters.llm.openai_compat"}

__all__ = ["CUT_OFF_NOTE", "PRICES_CHECKED", "AnthropicChatModel", "OpenAICompatChatModel",
           "RetryPolicy", "cost_usd", "price_for"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
