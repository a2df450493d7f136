"""The production pipeline as an evaluation target (``ReplayTarget``).

Each conversation gets its own data folder with real SQLite and LanceDB. Recorded turns go
through the engine's ingest path (redaction, turn storage, explicit facts) with a hand-driven
clock set to each message's time; sessions close through the same consolidation as ``/new``;
questions are recalled read-only (nothing stored, no fact touched) as ``speaker_a`` in a new
session of the same thread.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from bot.app import App, build_app
from bot.evaluation.target import EvalItem
from bot.settings import Settings
from memory.ports import Embedder, ManualClock
from memory.types import ChatKind, IncomingMessage, ItemKind, ThreadKey


def _message(conversation_id: str, speaker: str, text: str, at: datetime,
             message_id: str | None = None) -> IncomingMessage:
    return IncomingMessage(
        thread=ThreadKey("eval", conversation_id), chat_kind=ChatKind.GROUP,
        platform_user_id=speaker, display_name=speaker, text=text, sent_at=at,
        platform_message_id=message_id, chat_title=conversation_id,
    )


class EngineTarget:
    """A :class:`bot.evaluation.target.ReplayTarget` backed by the real app in ``folder``."""

    def __init__(self, app: App, clock: ManualClock) -> None:
        self.app = app
        self.clock = clock

    @classmethod
    async def create(cls, folder: Path, *, settings: Settings, embedder: Embedder) -> "EngineTarget":
        """Build the app on a fresh data folder with a shared embedder."""
        clock = ManualClock(datetime.fromisoformat("2000-01-01T00:00:00+00:00"))
        app = await build_app(settings, data_dir=folder, embedder=embedder, clock=clock)
        return cls(app, clock)

    async def ingest(self, *, conversation_id: str, speaker: str, text: str, sent_at: datetime,
                     message_id: str) -> None:
        self.clock.set(sent_at)
        await self.app.engine.ingest(_message(conversation_id, speaker, text, sent_at, message_id))

    async def close_session(self, *, conversation_id: str, at: datetime) -> None:
        self.clock.set(at)
        thread = await self.app.store.thread_for_key(
            ThreadKey("eval", conversation_id), ChatKind.GROUP, conversation_id, at)
        await self.app.memory.close_session(thread.id, reason="replay", at=at)

    async def recall(self, *, conversation_id: str, speaker: str, question: str,
                     asked_at: datetime, budget_tokens: int) -> list[EvalItem]:
        self.clock.set(asked_at)
        memory = self.app.memory
        ctx = await memory.context(_message(conversation_id, speaker, question, asked_at))
        result = await memory.recall(ctx, question, budget_tokens=budget_tokens, touch=False)
        turn_ids = {t for item in result.blocks.items for t in item.source_turn_ids}
        message_ids = {t.id: t.platform_message_id for t in await memory.store.get_turns(turn_ids)}
        return [
            EvalItem(
                kind=item.kind.value, text=item.text, tokens=item.tokens, pinned=item.pinned,
                source_message_ids=tuple(message_ids[t] for t in item.source_turn_ids
                                         if message_ids.get(t)),
            )
            for item in result.blocks.items
            if item.kind in (ItemKind.FACT, ItemKind.EPISODE, ItemKind.ROUND)
        ]

    async def aclose(self) -> None:
        await self.app.aclose()
