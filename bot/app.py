"""Composition root: builds every part from the settings and owns their life cycle.

Only ``bot/`` reads the environment, configures logging or owns the event loop. Start-up order:
SQLite (migrations), the embedder, the LanceDB index of that embedder, reconcile the index with
SQLite, run consolidation work left over from a previous run; then adapters may take input.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from adapters.embedders import make_embedder
from adapters.models import OfflineChatModel
from bot.engine import ConversationEngine
from bot.settings import Settings
from memory.ports import Clock, Embedder, SystemClock
from memory.service import MemoryConfig, MemoryService
from memory.stores.lancedb import LanceIndex
from memory.stores.sqlite import SQLiteStore
from memory.tokens import HeuristicTokenCounter

log = logging.getLogger(__name__)


@dataclass
class App:
    """The running product: stores, memory service and conversation engine."""

    settings: Settings
    store: SQLiteStore
    index: LanceIndex
    memory: MemoryService
    engine: ConversationEngine

    async def aclose(self) -> None:
        """Finish pending consolidation and close the stores."""
        try:
            await self.engine.shutdown()
        finally:
            await self.index.close()
            await self.store.close()


def memory_config(settings: Settings) -> MemoryConfig:
    """The core's view of the product settings."""
    return MemoryConfig(
        max_working_messages=settings.max_working_messages,
        max_working_tokens=settings.max_working_tokens,
        top_k=settings.semantic_top_k,
        threshold=settings.similarity_threshold,
        budget_tokens=settings.memory_token_budget,
    )


def build_model(settings: Settings):
    """Return the chat model for ``LLM_PROVIDER`` (the offline model until the Claude and
    OpenAI-compatible adapters land; a warning says so when a key is configured)."""
    provider = settings.resolved_llm_provider()
    if provider != "offline":
        log.warning("LLM_PROVIDER resolves to %s, but that adapter is not built yet; "
                    "using the offline model", provider)
    return OfflineChatModel()


async def build_app(
    settings: Settings,
    *,
    data_dir: Path | None = None,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
    model=None,
) -> App:
    """Open the stores under the data folder and wire the services.

    Args:
        settings: the product settings.
        data_dir: overrides ``MEMORY_BOT_DATA_DIR`` (evaluation work folders).
        embedder: overrides ``EMBEDDER`` (tests, evaluation with a shared model).
        clock: overrides the system clock (tests, replays).
        model: overrides the chat model.

    Raises:
        StoreError: a store cannot be opened.
        ConfigError: a setting is invalid.
    """
    folder = Path(data_dir or settings.data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    embedder = embedder or make_embedder(settings.embedder)
    store = await SQLiteStore.open(folder / "memory.db")
    try:
        index = await LanceIndex.open(folder / "lancedb", embedder_name=embedder.name,
                                      dim=embedder.dim)
    except BaseException:
        await store.close()
        raise
    memory = MemoryService(store=store, index=index, embedder=embedder,
                           counter=HeuristicTokenCounter(), clock=clock or SystemClock(),
                           config=memory_config(settings))
    engine = ConversationEngine(memory=memory, model=model or build_model(settings),
                                max_tokens=settings.max_tokens)
    app = App(settings=settings, store=store, index=index, memory=memory, engine=engine)
    added, removed = await memory.reconcile()
    done = await memory.consolidate_pending()
    log.info("app started data_dir=%s embedder=%s reconciled=+%d/-%d pending_done=%d",
             folder, embedder.name, added, removed, done)
    return app


async def reindex(settings: Settings) -> tuple[int, int]:
    """Rebuild the LanceDB index of the configured embedder from SQLite: every key is
    deleted and written again. Returns ``(rows written, rows removed)``."""
    app = await build_app(settings)
    try:
        keys = sorted(await app.index.keys())
        await app.index.delete(keys)
        added, _ = await app.memory.reconcile()
        await app.index.compact()
        return added, len(keys)
    finally:
        await app.aclose()
