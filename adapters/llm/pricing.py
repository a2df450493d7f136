"""Per-model prices, to turn reported token usage into a cost.

Prices in USD per million tokens (MTok), for the Messages API without batch or long-context
surcharges. Cache writes are priced at the 5-minute rate (the adapter's ``ephemeral`` marker has
the default 5-minute TTL). Source: Anthropic's pricing page,
https://platform.claude.com/docs/en/about-claude/pricing ("Model pricing"), read 2026-11-30
through the stored copies of that page (the Opus rows from the current page, the Sonnet 4.5,
Sonnet 4, Haiku 4.5, Haiku 3.5 and Haiku 3 rows from its 2025-11-15 copy). Claude Sonnet 4.6 is
not in either copy; its row ($3 / $15, cache as Sonnet 4.5) comes from third-party write-ups
(apidog.com, "Claude Sonnet 4.6 pricing", 2026) that agree with each other. Models not listed
here (newer Claude models, anything behind an OpenAI-compatible server) get no price: ``/stats``
then shows their tokens only.

=====================  =======  ============  ==========  ======
model                  input    cache write   cache read  output
=====================  =======  ============  ==========  ======
Opus 4.5 - 4.8, 5      5.00     6.25          0.50        25.00
Opus 4, 4.1            15.00    18.75         1.50        75.00
Sonnet 4, 4.5, 4.6     3.00     3.75          0.30        15.00
Haiku 4.5              1.00     1.25          0.10        5.00
Haiku 3.5              0.80     1.00          0.08        4.00
Haiku 3                0.25     0.30          0.03        1.25
=====================  =======  ============  ==========  ======
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PRICES_CHECKED = "2026-11-30"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    cache_write: float
    cache_read: float
    output: float


_OPUS_NEW = Price(5.00, 6.25, 0.50, 25.00)
_OPUS_OLD = Price(15.00, 18.75, 1.50, 75.00)
_SONNET = Price(3.00, 3.75, 0.30, 15.00)
_HAIKU_45 = Price(1.00, 1.25, 0.10, 5.00)
_FREE = Price(0.0, 0.0, 0.0, 0.0)

PRICES: dict[str, Price] = {
    "claude-opus-5": _OPUS_NEW,
    "claude-opus-4-8": _OPUS_NEW,
    "claude-opus-4-7": _OPUS_NEW,
    "claude-opus-4-6": _OPUS_NEW,
    "claude-opus-4-5": _OPUS_NEW,
    "claude-opus-4-1": _OPUS_OLD,
    "claude-opus-4-0": _OPUS_OLD,
    "claude-opus-4": _OPUS_OLD,
    "claude-sonnet-4-6": _SONNET,
    "claude-sonnet-4-5": _SONNET,
    "claude-sonnet-4-0": _SONNET,
    "claude-sonnet-4": _SONNET,
    "claude-haiku-4-5": _HAIKU_45,
    "claude-3-5-haiku": Price(0.80, 1.00, 0.08, 4.00),
    "claude-3-haiku": Price(0.25, 0.30, 0.03, 1.25),
    "offline": _FREE,
}

_SUFFIX = re.compile(r"(-\d{8}|-latest|@\d{8}|-v\d+:\d+)$")


def price_for(model: str) -> Price | None:
    """The price of ``model`` (dated ids such as ``claude-haiku-4-5-20251001`` and the
    ``-latest`` aliases map to their family), or None when unknown."""
    name = model.strip().lower().removeprefix("anthropic/").removeprefix("anthropic.")
    while True:
        if name in PRICES:
            return PRICES[name]
        stripped = _SUFFIX.sub("", name)
        if stripped == name:
            return None
        name = stripped


def cost_usd(model: str, *, input_tokens: int, output_tokens: int,
             cache_creation_input_tokens: int = 0, cache_read_input_tokens: int = 0
             ) -> float | None:
    """Cost in USD of one call's reported usage, or None when the model has no known price.

    ``input_tokens`` is uncached input (the Messages API reports cache writes and reads apart).
    """
    price = price_for(model)
    if price is None:
        return None
    return (input_tokens * price.input + cache_creation_input_tokens * price.cache_write
            + cache_read_input_tokens * price.cache_read + output_tokens * price.output) / 1e6
