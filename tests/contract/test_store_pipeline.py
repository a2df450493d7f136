"""The whole pipeline (memory service and conversation engine, offline model, in-memory index)
behaves the same on every backend: what is remembered, recalled, listed and forgotten."""

from __future__ import annotations

from adapters.embedders import HashingEmbedder
from adapters.models import OfflineChatModel
from bot.engine import ConversationEngine
from memory.ports import ManualClock
from memory.service import MemoryConfig, MemoryService
from memory.stores.inmemory import InMemoryIndex
from memory.tokens import HeuristicTokenCounter
from memory.types import ChatKind, IncomingMessage, ThreadKey

from tests.contract.support import store  # noqa: F401 (every backend in turn)
from tests.contract.support import T0


async def _conversation(store) -> list[list[str]]:
    clock = ManualClock(T0)
    memory = MemoryService(store=store, index=InMemoryIndex(), embedder=HashingEmbedder(),
                           counter=HeuristicTokenCounter(), clock=clock, config=MemoryConfig())
    engine = ConversationEngine(memory=memory, model=OfflineChatModel())

    async def say(text: str, user: str = "ada") -> list[str]:
        clock.advance(30)
        return await engine.handle(IncomingMessage(
            thread=ThreadKey("console", user), chat_kind=ChatKind.PRIVATE,
            platform_user_id=user, display_name=user.title(), text=text, sent_at=clock.now()))

    out = [await say("remember that I live in Graz"), await say("I keep bees on the roof"),
           await say("bye"), await say("where do I live?"), await say("remember I live in Linz"),
           await say("/memories all"), await say("where do I live?", user="bob"),
           await say("/forget all"), await say("yes"), await say("/memories")]
    await memory.drain()
    return out


async def test_a_conversation_reads_the_same_on_every_backend(store):
    replies = await _conversation(store)
    assert any("Graz" in line for line in replies[3])  # recalled in the next session
    assert any("Linz" in line for line in replies[5]) and any("Graz" in line
                                                              for line in replies[5])
    assert not any("Graz" in line or "Linz" in line for line in replies[6])  # bob's scope
    assert not any("Linz" in line for line in replies[9])  # forgotten
    assert await store.count_rows("facts") == 0
    assert await store.privacy.pending_purges() == []
