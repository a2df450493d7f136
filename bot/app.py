"""Composition root: builds every part from the settings and owns their life cycle.

Only ``bot/`` reads the environment, configures logging or owns the event loop. Start-up order:
SQLite (migrations), the embedder, the LanceDB index of that embedder, finish deletions a crash
interrupted (``MemoryService.finish_purges``), reconcile the index with SQLite, run consolidation work left over from a previous run; then :meth:`App.start` starts the
scheduler, closes sessions that went idle while the process was down and watches the others
(``bot/scheduler.py``); then adapters may take input.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from adapters.embedders import make_embedder
from adapters.models import OfflineChatModel
from bot.datadir import DataDirLock, ensure_data_dir, lock_data_dir
from bot.engine import ConversationEngine
from bot.scheduler import SWEEP_JOB_INTERVAL_SECONDS, MemoryScheduler
from bot.settings import Settings
from bot.usage import record_usage
from memory.errors import ConfigError, StoreError
from memory.ports import (
    ChatModel,
    Clock,
    Embedder,
    SearchIndex,
    Store,
    StructuredModel,
    SystemClock,
    ThreadLocks,
)
from memory.service import MemoryConfig, MemoryService
from memory.stores.lancedb import LanceIndex
from memory.stores.sqlite import SQLiteStore
from memory.tokens import HeuristicTokenCounter
from memory.work_runner import LocalThreadLocks

log = logging.getLogger(__name__)


@dataclass
class App:
    """The running product: stores, memory service, conversation engine and scheduler."""

    settings: Settings
    store: Store
    index: SearchIndex
    memory: MemoryService
    engine: ConversationEngine
    scheduler: MemoryScheduler | None = None
    lock: DataDirLock | None = None
    thread_locks: ThreadLockSets | None = None
    closed: bool = False

    @property
    def stores_open(self) -> bool:
        """True from :func:`build_app` until :meth:`aclose` begins (``/readyz``)."""
        return not self.closed

    async def start(self) -> None:
        """Start the scheduler and run the start-up work (once, even if called twice; see
        :meth:`MemoryScheduler.start`). Call it inside the running loop before taking input.

        Raises:
            ConfigError: scheduled jobs would not run on this event loop.
        """
        if self.scheduler is not None:
            await self.scheduler.start()

    async def aclose(self) -> None:
        """Stop the scheduler, finish pending consolidation, close the stores and release
        the data folder's lock (last, also when closing fails or is cancelled)."""
        self.closed = True
        try:
            try:
                if self.scheduler is not None:
                    await self.scheduler.shutdown()
                await self.engine.shutdown()
            except StoreError as exc:  # a full or read-only disk: the work stays recorded
                log.warning("pending consolidation not finished at shutdown: %s", exc)
            finally:
                close_model = getattr(self.engine.model, "aclose", None)
                if close_model is not None:
                    await close_model()
                await self.index.close()
                await self.store.close()
                if self.thread_locks is not None:
                    await self.thread_locks.close()
        finally:
            if self.lock is not None:
                self.lock.release()


@dataclass
class ThreadLockSets:
    """The per-thread locks of one process: ``turns`` (the engine's, one turn of a thread at a
    time), ``work`` (consolidation jobs of a thread), ``updates`` (a chat's received platform
    updates, taken in order by one process of several; None for a store of one process), and
    what closes them."""

    turns: ThreadLocks
    work: ThreadLocks
    updates: ThreadLocks | None = None

    async def close(self) -> None:
        """Release the locks' connections (nothing to do for in-process locks)."""
        for locks in (self.turns, self.work, self.updates):
            close = getattr(locks, "close", None)
            if close is not None:
                await close()


async def open_thread_locks(settings: Settings, store: Store) -> ThreadLockSets:
    """The thread locks for ``store``: this process's (``asyncio`` locks) for SQLite, or
    with ``DATABASE_URL`` PostgreSQL's advisory locks in the store's schema
    (:class:`memory.stores.postgres.locks.PgThreadLocks`), which every process on that
    database shares, so turns and jobs of one thread run one at a time across processes.

    Raises:
        StoreError: the database cannot be reached.
    """
    if settings.database_url is None:
        return ThreadLockSets(LocalThreadLocks(), LocalThreadLocks())
    from memory.stores.postgres.locks import PgThreadLocks

    url = settings.database_url.get_secret_value()
    schema = getattr(store, "schema")
    turns = await PgThreadLocks.open(url, name="turns", schema=schema)
    opened = [turns]
    try:
        for name in ("work", "updates"):
            opened.append(await PgThreadLocks.open(url, name=name, schema=schema))
    except BaseException:
        for locks in opened:
            await locks.close()
        raise
    return ThreadLockSets(*opened)


async def open_store(path: str | Path) -> Store:
    """Open the relational store of a data folder (``<folder>/memory.db``), or a copy of one:
    the product's backend, SQLite (:class:`memory.stores.sqlite.SQLiteStore`). The one place
    outside ``memory.stores`` that names a store implementation (an import contract in
    pyproject.toml).

    Raises:
        StoreError: it cannot be opened or migrated.
    """
    return await SQLiteStore.open(path)


async def open_settings_store(settings: Settings, folder: Path, *, scratch: bool = False
                              ) -> Store:
    """The product's relational store: SQLite under ``folder`` (:func:`open_store`), or with
    ``DATABASE_URL`` the PostgreSQL store in that database
    (:class:`memory.stores.postgres.PostgresStore`), in the URL's schema; ``scratch`` (a work
    folder, as evaluation runs hand to :func:`build_app`) puts it in a new schema that closing
    the store drops, never the live tables.

    Raises:
        StoreError: it cannot be opened or migrated.
    """
    if settings.database_url is None:
        return await open_store(folder / "memory.db")
    from memory.stores.postgres import PostgresStore, redacted

    url = settings.database_url.get_secret_value()
    store = await PostgresStore.open(url, scratch=scratch)
    log.info("store on postgresql url=%s schema=%s", redacted(url), store.schema)
    return store


def memory_config(settings: Settings) -> MemoryConfig:
    """The core's view of the product settings."""
    return MemoryConfig(
        max_working_messages=settings.max_working_messages,
        max_working_tokens=settings.max_working_tokens,
        top_k=settings.semantic_top_k,
        threshold=settings.similarity_threshold,
        budget_tokens=settings.memory_token_budget,
        profile_tokens=settings.profile_tokens,
        default_timezone=settings.default_timezone,
        summary_trigger_messages=settings.summary_trigger_messages,
    )


def build_model(settings: Settings) -> ChatModel:
    """Return the chat model for ``LLM_PROVIDER`` (``auto``: Claude when ``ANTHROPIC_API_KEY``
    is set, else an OpenAI-compatible server when ``OPENAI_BASE_URL`` is set, else offline).

    Raises:
        ConfigError: the OpenAI-compatible provider is chosen without ``OPENAI_MODEL``.
    """
    provider = settings.resolved_llm_provider()
    if provider == "anthropic":
        from adapters.llm.anthropic import AnthropicChatModel

        assert settings.anthropic_api_key is not None  # checked by resolved_llm_provider/Settings
        return AnthropicChatModel(api_key=settings.anthropic_api_key.get_secret_value(),
                                  base_url=settings.anthropic_base_url,
                                  model=settings.anthropic_model,
                                  consolidation_model=settings.consolidation_model)
    if provider == "openai":
        from adapters.llm.openai_compat import OpenAICompatChatModel

        assert settings.openai_base_url is not None
        if not settings.openai_model:
            raise ConfigError("invalid setting: OPENAI_MODEL: needed with an OpenAI-compatible "
                              f"server (OPENAI_BASE_URL={settings.openai_base_url})")
        key = settings.openai_api_key
        return OpenAICompatChatModel(base_url=settings.openai_base_url,
                                     model=settings.openai_model,
                                     api_key=key.get_secret_value() if key else None)
    return OfflineChatModel()


def consolidation_model(model) -> StructuredModel | None:
    """The model that consolidates (episode summaries and fact extraction):
    ``CONSOLIDATION_MODEL`` on the reply model's client for Claude (``for_consolidation``), the
    reply model itself for an OpenAI-compatible server, None for the offline model (rules only,
    exactly as before: it has no structured output)."""
    target = model.for_consolidation() if hasattr(model, "for_consolidation") else model
    return target if isinstance(target, StructuredModel) else None


def _release(lock: DataDirLock | None) -> None:
    if lock is not None:
        lock.release()


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
        DataDirInUse: another memory-bot process holds the data folder (a ``ConfigError``;
            never with ``DATABASE_URL``, where several processes share the database).
    """
    folder = ensure_data_dir(Path(data_dir or settings.data_dir))
    # before anything is opened for writing; released by aclose. With DATABASE_URL the data
    # lives in the database, which any number of processes share: no folder lock
    lock = lock_data_dir(folder) if settings.database_url is None else None
    try:
        model = model or build_model(settings)  # a ConfigError here leaves nothing open
        embedder = embedder or make_embedder(settings.embedder)
        store = await open_settings_store(settings, folder, scratch=data_dir is not None)
    except BaseException:
        _release(lock)
        raise
    try:
        index = await open_index(settings, folder, embedder, scratch=data_dir is not None)
    except BaseException:
        await store.close()
        _release(lock)
        raise
    try:
        locks = await open_thread_locks(settings, store)
    except BaseException:
        await index.close()
        await store.close()
        _release(lock)
        raise
    memory = MemoryService(store=store, index=index, embedder=embedder,
                           counter=HeuristicTokenCounter(), clock=clock or SystemClock(),
                           config=memory_config(settings),
                           consolidation_model=consolidation_model(model),
                           on_model_usage=lambda user_id, reply, at: record_usage(
                               store.records, user_id, reply, at), locks=locks.work)
    scheduler = MemoryScheduler(memory=memory, idle_timeout_seconds=settings.idle_timeout_seconds,
                                expire_days=settings.memory_expire_days,
                                retention_days=settings.raw_turn_retention_days,
                                sweep_seconds=None if settings.database_url is None
                                else SWEEP_JOB_INTERVAL_SECONDS)
    engine = ConversationEngine(memory=memory, model=model or build_model(settings),
                                max_tokens=settings.max_tokens, on_turn=scheduler.on_turn,
                                reply_timeout_s=settings.reply_timeout_seconds,
                                locks=locks.turns)
    app = App(settings=settings, store=store, index=index, memory=memory, engine=engine,
              scheduler=scheduler, lock=lock, thread_locks=locks)
    try:
        purged = await memory.finish_purges()  # a deletion a crash interrupted, first
        added, removed = await memory.reconcile()
        done = await memory.consolidate_pending(waiting_too=True)  # a restart tries all
    except BaseException:  # close what is open without running more work
        app.closed = True
        try:
            await index.close()
            await store.close()
            await locks.close()
        finally:
            _release(lock)
        raise
    log.info("app started data_dir=%s embedder=%s purges_finished=%d reconciled=+%d/-%d "
             "pending_done=%d", folder, embedder.name, purged, added, removed, done)
    return app


async def open_index(settings: Settings, folder: Path, embedder: Embedder, *,
                     scratch: bool = False) -> SearchIndex:
    """The search index of ``embedder``: LanceDB under ``folder``, or with ``DATABASE_URL`` the
    PostgreSQL index in that database, beside the PostgreSQL store whose rows it derives from
    and which every bot process on the database shares (each one's start-up reconcile works
    from the same store, so they agree). ``scratch`` (a work folder handed to :func:`build_app`, as evaluation runs
    do) puts the PostgreSQL tables in a new schema that closing the index drops, so such a
    run never touches the live tables.

    Raises:
        StoreError: the index cannot be opened.
    """
    if settings.database_url is None:
        return await LanceIndex.open(folder / "lancedb", embedder_name=embedder.name,
                                     dim=embedder.dim)
    from memory.stores.postgres import PgSearchIndex, redacted

    url = settings.database_url.get_secret_value()
    index = await PgSearchIndex.open(url, embedder_name=embedder.name, dim=embedder.dim,
                                     scratch=scratch)
    log.info("search index on postgresql url=%s schema=%s", redacted(url), index.schema)
    return index


async def migrate_to_postgres(settings: Settings, source: Path) -> dict[str, int]:
    """Copy the SQLite store of the data folder ``source`` into the empty PostgreSQL store of
    ``DATABASE_URL`` (``memory-bot migrate-to-postgres``): every table with its own ids
    (:func:`memory.stores.postgres.sqlite_copy.copy_sqlite`), then one start-up of the bot on
    PostgreSQL builds its search index from the copied rows (the index is derived; the
    embedder of ``EMBEDDER`` writes it). ``source`` is locked for the copy, so no bot may run
    on it meanwhile; it is migrated to the latest SQLite schema first and not changed
    otherwise. Returns the rows copied per table.

    Raises:
        ConfigError: ``DATABASE_URL`` is not set, ``source`` holds no ``memory.db``, a bot
            runs on it (``DataDirInUse``), or the PostgreSQL store holds rows (nothing is
            written).
        StoreError: either store cannot be opened, or a row cannot be copied (nothing is
            written).
    """
    from memory.stores.postgres import PostgresStore, redacted
    from memory.stores.postgres.sqlite_copy import TargetNotEmptyError, copy_sqlite

    if settings.database_url is None:
        raise ConfigError("DATABASE_URL is not set: it names the PostgreSQL database to "
                          "migrate into (postgresql://user:password@host:port/database)")
    database = source / "memory.db"
    if not database.is_file():
        raise ConfigError(f"{source} is not a data folder: it holds no memory.db")
    url = settings.database_url.get_secret_value()
    lock = lock_data_dir(source)
    try:
        await (await SQLiteStore.open(database)).close()  # at the latest schema version
        target = await PostgresStore.open(url)
        try:
            copied = await copy_sqlite(database, target.db)
        except TargetNotEmptyError as exc:  # a usage error: exit 2
            raise ConfigError(str(exc)) from exc
        finally:
            await target.close()
    finally:
        lock.release()
    log.info("sqlite store %s copied to postgresql url=%s rows=%s", database, redacted(url),
             copied)
    app = await build_app(settings)  # the start-up reconcile indexes what was copied
    await app.aclose()
    return copied


async def reindex(settings: Settings) -> tuple[int, int]:
    """Rebuild the search index of the configured embedder from SQLite: every key is
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
