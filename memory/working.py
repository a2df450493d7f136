"""Working memory: the prompt window of one thread.

A pure policy over the thread's stored turns: keep the last ``max_turns`` turns within
``max_tokens``. When over a bound, ordinary older turns (user and assistant) leave first;
system notes, tool results and the last ``keep_last`` turns stay, unless the last turns alone
exceed ``max_tokens`` (a pasted document): then they leave too, oldest first, all but the
newest turn (the current message always reaches the model). Eviction removes turns from the
prompt only, never from storage.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.ports import TokenCounter
from memory.types import Role, Turn

_PROTECTED_ROLES = (Role.SYSTEM, Role.TOOL)


def select_window(
    turns: Sequence[Turn],
    *,
    max_turns: int,
    max_tokens: int,
    counter: TokenCounter,
    keep_last: int = 4,
) -> list[Turn]:
    """Choose which turns of a thread enter the prompt.

    Args:
        turns: the candidate turns, oldest first (typically the current session's).
        max_turns: at most this many turns (``MAX_WORKING_MESSAGES``).
        max_tokens: at most this many tokens in total (``MAX_WORKING_TOKENS``), counted by
            ``counter`` on each turn's text.
        counter: the product's token counter.
        keep_last: the newest turns that stay over the turn bound and leave for the token
            bound only when nothing older is left to evict; the newest turn always stays (the
            current question must reach the model, whatever its size).

    Returns:
        The kept turns, oldest first, a subsequence of ``turns``.
    """
    kept = list(turns)
    cost = {t.id: counter.count(t.text) for t in kept}
    total = sum(cost.values())

    def evictable(index: int) -> bool:
        return index < len(kept) - keep_last and kept[index].role not in _PROTECTED_ROLES

    while len(kept) > max_turns or total > max_tokens:
        victim = next((i for i in range(len(kept)) if evictable(i)), None)
        if victim is None and total > max_tokens:  # the newest turns alone are too long
            victim = next((i for i in range(len(kept) - 1)
                           if kept[i].role not in _PROTECTED_ROLES), None)
        if victim is None:
            break
        total -= cost[kept[victim].id]
        del kept[victim]
    return kept
