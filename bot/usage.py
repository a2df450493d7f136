"""Model usage and cost per user and UTC day: recorded after every model call, shown by
``/stats``. Prices come from :mod:`adapters.llm.pricing` (models without a price: tokens only)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from adapters.llm.pricing import PRICES_CHECKED, cost_usd
from i18n import say
from memory.ports import RecordStore
from memory.records import UsageEntry, UsageRow
from memory.types import ModelReply

STATS_DAYS = 30
STATS_LINES = 14


def utc_day(at: datetime) -> str:
    """``YYYY-MM-DD`` of an aware datetime in UTC."""
    return at.astimezone(timezone.utc).date().isoformat()


async def record_usage(records: RecordStore, user_id: int, reply: ModelReply,
                       at: datetime) -> None:
    """Add one call's reported usage (and its cost, when the model has a price) to the user's
    totals for the UTC day of ``at``."""
    await records.add_model_usage(usage_entry(user_id, reply, at))


def usage_entry(user_id: int, reply: ModelReply, at: datetime) -> UsageEntry:
    """One call's reported usage and its cost (when the model has a price), for the user's
    totals of the UTC day of ``at``: recorded on its own (``MemoryService.record_usage``) or
    with the reply's turn in one transaction (``TurnWrites.usage``)."""
    tokens = {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
              "cache_creation_input_tokens": reply.cache_creation_input_tokens,
              "cache_read_input_tokens": reply.cache_read_input_tokens}
    return UsageEntry(user_id, utc_day(at), reply.model, cost_usd=cost_usd(reply.model, **tokens),
                      **tokens)


def _line(lang: str, label: str, calls: int, tin: int, tout: int, write: int, read: int,
          cost: float | None) -> str:
    text = say(lang, "stats.line", label=label, calls=calls, input=f"{tin:,}", output=f"{tout:,}")
    if write or read:
        text += say(lang, "stats.cache", written=f"{write:,}", read=f"{read:,}")
    return text + (say(lang, "stats.cost", cost=f"{cost:.4f}") if cost is not None
                   else say(lang, "stats.no_price"))


def render_stats(rows: list[UsageRow], *, today: datetime, lang: str = "en") -> str:
    """The ``/stats`` text in ``lang``: one line per day and model (newest first), then the
    total of the last :data:`STATS_DAYS` days."""
    if not rows:
        return say(lang, "stats.none")
    since = utc_day(today - timedelta(days=STATS_DAYS - 1))
    lines = [say(lang, "stats.heading", checked=PRICES_CHECKED)]
    for row in rows[:STATS_LINES]:
        lines.append(_line(lang, f"{row.day} {row.model}", row.calls, row.input_tokens,
                           row.output_tokens, row.cache_creation_input_tokens,
                           row.cache_read_input_tokens, row.cost_usd))
    if len(rows) > STATS_LINES:
        lines.append(say(lang, "stats.more", count=len(rows) - STATS_LINES))
    recent = [r for r in rows if r.day >= since]
    costs = [r.cost_usd for r in recent if r.cost_usd is not None]
    total = _line(lang, say(lang, "stats.total", days=STATS_DAYS), sum(r.calls for r in recent),
                  sum(r.input_tokens for r in recent), sum(r.output_tokens for r in recent),
                  sum(r.cache_creation_input_tokens for r in recent),
                  sum(r.cache_read_input_tokens for r in recent), sum(costs) if costs else None)
    if costs and len(costs) < len(recent):
        total += say(lang, "stats.unpriced")
    lines.append(total)
    return "\n".join(lines)
