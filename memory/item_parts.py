"""Recalled items as data for a person to read (:class:`memory.types.ItemParts`).

A recalled item's line in the prompt is worded for the model, in English framing ("- The user
lives in Graz (since 2026-12-02)", "- (2026-12-01) (this conversation so far) ... Open tasks:
..."). What a person reads of the same item (``/why``, the offline reply) is worded by the
edges in the reader's language from these parts: the item's own words and its dates, no
framing. Pure functions; no I/O.
"""

from __future__ import annotations

from memory.types import Episode, Fact, FactStatus, ItemParts

#: The newest open tasks an episode's prompt line shows (``memory.indexing.episode_text``,
#: compact form).
EPISODE_TASKS_SHOWN = 2


def fact_parts(fact: Fact, *, dated: bool = True) -> ItemParts:
    """The parts of a fact's line: its text, since when it holds (``dated``; a profile line
    shows no date) and, when it no longer does, until when."""
    current = fact.status is FactStatus.ACTIVE
    return ItemParts(fact.text, day=fact.valid_from if dated else None,
                     until=None if current else fact.valid_to, current=current)


def episode_parts(episode: Episode, *, body: str, full_line: str, shown_line: str,
                  key_data_lines: int) -> ItemParts:
    """The parts of an episode's prompt line.

    Args:
        episode: the episode.
        body: its compact text in the line (``episode_text(..., compact=True)``), which ends
            ``full_line``.
        full_line: the whole line, before any cut.
        shown_line: the line as the prompt holds it: ``full_line``, or a prefix of it cut at a
            word boundary and ended with ``" …"`` (``MemoryService._clip_tokens``).
        key_data_lines: how many of the newest key data the line shows.

    Returns:
        The summary, open tasks and key data the shown line holds (a part the cut went
        through is kept up to the cut, the ones after it are left out, ``cut`` set).
    """
    tasks = tuple(episode.open_tasks[-EPISODE_TASKS_SHOWN:])
    data = tuple(k.text for k in episode.key_data[-key_data_lines:]) if key_data_lines else ()
    whole = ItemParts(episode.summary, day=episode.started_at,
                      running=episode.status == "running", open_tasks=tasks, key_data=data)
    if shown_line == full_line or not shown_line.endswith(" …"):
        return whole
    kept = len(shown_line) - 2 - (len(full_line) - len(body))  # characters of the body shown
    if kept < len(episode.summary):
        return ItemParts(episode.summary[:max(kept, 0)].rstrip(), day=whole.day,
                         running=whole.running, cut=True)
    shown: dict[str, list[str]] = {"open_tasks": [], "key_data": []}
    at = len(episode.summary)
    for name, values in (("open_tasks", tasks), ("key_data", data)):
        for value in values:
            start = body.find(value, at)
            if start < 0 or kept <= start:  # the cut came before this value
                return _with(whole, shown)
            end = start + len(value)
            shown[name].append(value if kept >= end else value[:kept - start].rstrip(" ;"))
            if kept < end:
                return _with(whole, shown)
            at = end
    return _with(whole, shown)


def _with(whole: ItemParts, shown: dict[str, list[str]]) -> ItemParts:
    return ItemParts(whole.text, day=whole.day, running=whole.running,
                     open_tasks=tuple(v for v in shown["open_tasks"] if v),
                     key_data=tuple(v for v in shown["key_data"] if v), cut=True)
