"""The seam between the evaluation harness and the system under test.

The harness replays a conversation into a ``ReplayTarget`` and asks it one recall per question,
with the largest budget of the run; it then re-packs the returned list for each smaller budget
itself (see ``bot.evaluation.metrics.pack``). Times are aware UTC datetimes; budgets and item
sizes are tokens by the product's counter (``memory.tokens.HeuristicTokenCounter``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

#: The item kinds the harness knows how to credit (see ``metrics.credited_turns``).
ITEM_KINDS = frozenset({"fact", "episode", "round", "key_data"})


@dataclass(frozen=True)
class EvalItem:
    """One recalled memory item, as it appears in the memory block.

    Attributes:
        kind: ``"fact"``, ``"episode"``, ``"round"`` or ``"key_data"``.
        text: the rendered line as it appears in the memory block.
        tokens: tokens of that line by the product's counter (>= 0).
        source_message_ids: platform message ids of the turns it came from, most relevant
            first where the engine knows an order (for LoCoMo: dia_ids such as ``"D3:7"``).
        pinned: included regardless of rank (e.g. the last episode of the thread, profile
            facts); still costs tokens.
        profile: a fact of the profile block (pinned too).
        matched: the question itself recalls it (its recall score reaches the threshold);
            abstention counts a pinned item only then.
    """

    kind: str
    text: str
    tokens: int
    source_message_ids: tuple[str, ...]
    pinned: bool = False
    profile: bool = False
    matched: bool = False


@runtime_checkable
class ReplayTarget(Protocol):
    """A memory system that can be fed a conversation and asked what it recalls.

    Call order per conversation: ``ingest`` for every turn of a session in order, then
    ``close_session``; repeat per session; then ``recall`` once per question (read-only: it must
    not store the question); finally ``aclose``.
    """

    async def ingest(
        self, *, conversation_id: str, speaker: str, text: str, sent_at: datetime, message_id: str
    ) -> None:
        """Store one message of ``speaker`` in the thread ``conversation_id``."""
        ...

    async def close_session(self, *, conversation_id: str, at: datetime) -> None:
        """End the current session of the thread at time ``at`` (consolidation runs here)."""
        ...

    async def recall(
        self,
        *,
        conversation_id: str,
        speaker: str,
        question: str,
        asked_at: datetime,
        budget_tokens: int,
    ) -> list[EvalItem]:
        """Return the memory items production recall would show for ``question``.

        The list is already packed for ``budget_tokens`` and in rank order (pinned items
        flagged). Read-only: nothing about the question is stored.
        """
        ...

    async def aclose(self) -> None:
        """Release resources (files, indexes, background tasks)."""
        ...


@runtime_checkable
class DialogueTarget(ReplayTarget, Protocol):
    """A ``ReplayTarget`` that also takes the assistant's side of a recorded dialogue and
    exposes its full ranking (LongMemEval: a user talking to an assistant).

    ``ingest_reply`` stores a recorded assistant turn in the thread's open session, after the
    user turn it answers; ``last_ranking`` returns every candidate of the last ``recall`` in
    rank order before packing (pinned items first, as the memory block shows them), for
    measures that are not budgeted, such as session recall@k.
    """

    async def ingest_reply(
        self, *, conversation_id: str, user: str, text: str, sent_at: datetime, message_id: str
    ) -> None:
        """Store one recorded assistant reply to ``user`` in the thread ``conversation_id``."""
        ...

    def last_ranking(self) -> list[EvalItem]:
        """The ranked candidates of the last ``recall`` call (empty before any)."""
        ...
