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
             message_id: str | None = None, chat_kind: ChatKind = ChatKind.GROUP) -> IncomingMessage:
    return IncomingMessage(
        thread=ThreadKey("eval", conversation_id), chat_kind=chat_kind,
        platform_user_id=speaker, display_name=speaker, text=text, sent_at=at,
        platform_message_id=message_id,
        chat_title=conversation_id if chat_kind is ChatKind.GROUP else None,
    )


class EngineTarget:
    """A :class:`bot.evaluation.target.ReplayTarget` backed by the real app in ``folder``."""

    def __init__(self, app: App, clock: ManualClock, chat_kind: ChatKind = ChatKind.GROUP) -> None:
        self.app = app
        self.clock = clock
        self.chat_kind = chat_kind
        # turn id -> message id of recorded assistant replies (stored without a platform id)
        self._reply_ids: dict[int, str] = {}
        self._ranking: list[EvalItem] = []
        # turn id -> platform message id of the turns recalled so far: questions are asked
        # read-only, so a turn's id never changes meaning; without it every question read
        # the turns of all its ranked candidates (~700 a question on MemDaily's split)
        # inside the recall's timing, work production recall does not do
        self._message_ids: dict[int, str | None] = {}

    @classmethod
    async def create(cls, folder: Path, *, settings: Settings, embedder: Embedder,
                     chat_kind: ChatKind = ChatKind.GROUP) -> "EngineTarget":
        """Build the app on a data folder (fresh, or one replayed before) with a shared embedder (for example a
        ``bot.evaluation.cache.CachingEmbedder``). ``chat_kind``: GROUP for conversations
        between people (LoCoMo), PRIVATE for one user talking to the assistant."""
        clock = ManualClock(datetime.fromisoformat("2000-01-01T00:00:00+00:00"))
        app = await build_app(settings, data_dir=folder, embedder=embedder, clock=clock)
        return cls(app, clock, chat_kind)

    async def ingest(self, *, conversation_id: str, speaker: str, text: str, sent_at: datetime,
                     message_id: str) -> None:
        self.clock.set(sent_at)
        await self.app.engine.ingest(_message(conversation_id, speaker, text, sent_at, message_id,
                                              self.chat_kind))

    async def ingest_reply(self, *, conversation_id: str, user: str, text: str,
                           sent_at: datetime, message_id: str) -> None:
        """Store a recorded assistant reply (``generated_by="recorded"``) in the open session."""
        self.clock.set(sent_at)
        if not text.strip():
            return
        ctx = await self.app.memory.context(
            _message(conversation_id, user, text, sent_at, None, self.chat_kind))
        turn = await self.app.memory.record_assistant_turn(ctx, text.strip(), at=sent_at,
                                                           generated_by="recorded")
        self._reply_ids[turn.id] = message_id

    async def close_session(self, *, conversation_id: str, at: datetime) -> None:
        self.clock.set(at)
        thread = await self.app.store.identities.thread_for_key(
            ThreadKey("eval", conversation_id), self.chat_kind,
            conversation_id if self.chat_kind is ChatKind.GROUP else None, at)
        await self.app.memory.close_session(thread.id, reason="replay", at=at)

    def replay_state(self) -> dict:
        """What a later run needs besides the data folder to ask on this replay
        (``runner.run_histories(reuse_replay=True)``): the message ids of the recorded
        assistant replies, ``{"reply_ids": {turn id (string): message id}}``."""
        return {"reply_ids": {str(k): v for k, v in self._reply_ids.items()}}

    def restore_replay_state(self, state: dict) -> None:
        """Take back what :meth:`replay_state` returned after the replay of this folder."""
        self._reply_ids = {int(k): v for k, v in (state.get("reply_ids") or {}).items()}

    def last_ranking(self) -> list[EvalItem]:
        """Every candidate of the last ``recall`` before packing, pinned first, in rank order."""
        return list(self._ranking)

    async def recall(self, *, conversation_id: str, speaker: str, question: str,
                     asked_at: datetime, budget_tokens: int) -> list[EvalItem]:
        self.clock.set(asked_at)
        memory = self.app.memory
        ctx = await memory.context(_message(conversation_id, speaker, question, asked_at,
                                            None, self.chat_kind))
        result = await memory.recall(ctx, question, budget_tokens=budget_tokens, touch=False)
        ranked = list(result.ranked) or list(result.blocks.items)
        turn_ids = {t for item in (*result.blocks.items, *ranked) for t in item.source_turn_ids}
        message_ids = self._message_ids
        missing = turn_ids - message_ids.keys()
        if missing:
            read = {t.id: t.platform_message_id
                    for t in await self.app.store.conversations.get_turns(missing)}
            message_ids.update((i, self._reply_ids.get(i, read.get(i))) for i in missing)

        threshold = memory.config.threshold

        def convert(items) -> list[EvalItem]:
            return [
                EvalItem(
                    kind=item.kind.value, text=item.text, tokens=item.tokens, pinned=item.pinned,
                    source_message_ids=tuple(message_ids[t] for t in item.source_turn_ids
                                             if message_ids.get(t)),
                    profile=item.profile, matched=not item.pinned or item.score >= threshold,
                )
                for item in items
                if item.kind in (ItemKind.FACT, ItemKind.EPISODE, ItemKind.ROUND)
            ]

        self._ranking = convert(ranked)
        return convert(result.blocks.items)

    async def aclose(self) -> None:
        await self.app.aclose()
