"""SQLite store (aiosqlite): the source of truth for users, threads, turns, sessions, episodes,
rounds, facts, pending work, prompt records and the audit log.

One connection, WAL journal, foreign keys on, ``secure_delete`` on (deleted rows are zeroed,
not left in free pages), numbered migrations applied at open. Writes run in explicit
``BEGIN IMMEDIATE`` transactions under one lock, so a memory item is written in the same
transaction as the work record it completes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
import contextlib
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import aiosqlite

from memory.errors import StoreError
from memory.records import (
    NO_WRITES,
    EditCascade,
    EpisodeDraft,
    FactOp,
    ForgetResult,
    HandledUpdate,
    PromptRecord,
    PurgeRow,
    RoundDraft,
    SessionRow,
    ThreadRow,
    TurnWrites,
    UsageEntry,
    UsageRow,
    UserRow,
    WorkOutcome,
    WorkResult,
    WorkRow,
)
from memory.stores.hot import HotTurns
from memory.stores.migrations import MIGRATIONS
from memory.types import (
    ChatKind,
    Episode,
    Fact,
    FactStatus,
    IncomingMessage,
    KeyDatum,
    Role,
    Round,
    Scope,
    ThreadKey,
    Turn,
)

log = logging.getLogger(__name__)


def _ts(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError("naive datetime given to the store; use aware UTC datetimes")
    return value.astimezone(timezone.utc).isoformat(timespec="microseconds")


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


#: SQLite's primary result codes (https://www.sqlite.org/rescode.html) and what they mean for
#: a user; any other failure is "storage failed".
_REASONS = {13: "full", 8: "read-only", 11: "damaged", 26: "damaged"}


def store_error(exc: sqlite3.Error, what: str) -> StoreError:
    """The core's :class:`StoreError` for a SQLite error, with its reason in words (disk or
    database full, read-only file or mount, damaged file; anything else is "failing")."""
    code = getattr(exc, "sqlite_errorcode", None)
    reason = _REASONS.get(code & 0xFF, "failing") if code is not None else "failing"
    return StoreError(f"{what}: {exc}", reason=reason)


def _in_transaction(conn: aiosqlite.Connection, fn: Callable, args: Sequence):
    """Run ``fn(db, *args)`` (``db``: the ``sqlite3.Connection``) between ``BEGIN IMMEDIATE``
    and ``COMMIT`` (``ROLLBACK`` on any error, which is raised); called in aiosqlite's thread,
    so a whole write transaction is one hand-off to it."""
    db = conn._conn
    db.execute("BEGIN IMMEDIATE")
    try:
        result = fn(db, *args)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # SQLite rolls back by itself after some errors (SQLITE_FULL)
            db.execute("ROLLBACK")
        raise
    return result


_UNKNOWN = object()  # add_turn: the hot cache does not know the thread's open session


def _add_turn_tx(db, thread_id: int, values: tuple, pmid: str | None, at: str,
                 session: object, fold_after: tuple[int, int, int] | None,
                 writes: TurnWrites = NO_WRITES):
    """The transaction of :meth:`SQLiteStore.add_turn` (in aiosqlite's thread). ``values``:
    the turn's columns after ``thread_id, session_id`` (``user_id`` ... ``tokens``); ``session``:
    the open session's id, None for none, or ``_UNKNOWN``; ``writes`` are stored after the turn
    (not for a duplicate). Returns ``("duplicate", row)`` or
    ``("stored", session_id, opened, turn_id, fold)`` with ``fold`` None or
    ``(seq, turns, tokens)`` of a fold job recorded with the turn."""
    if pmid is not None:
        row = db.execute("SELECT * FROM turns WHERE thread_id = ? AND platform_message_id = ?",
                         (thread_id, pmid)).fetchone()
        if row is not None:
            return "duplicate", row
    if session is _UNKNOWN:
        row = db.execute("SELECT id FROM sessions WHERE thread_id = ? AND closed_at IS NULL",
                         (thread_id,)).fetchone()
        session = row[0] if row is not None else None
    opened = session is None
    if opened:
        session = db.execute(
            "INSERT INTO sessions (thread_id, started_at, last_turn_at) VALUES (?, ?, ?)",
            (thread_id, at, at)).lastrowid
    else:
        db.execute("UPDATE sessions SET last_turn_at = max(last_turn_at, ?) WHERE id = ?",
                   (at, session))
    turn_id = db.execute(
        "INSERT INTO turns (thread_id, session_id, user_id, role, speaker, text, created_at,"
        " platform_message_id, generated_by, memory_off, tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (thread_id, session, *values)).lastrowid
    fold = _request_fold_tx(db, session, fold_after, at) if fold_after is not None else None
    for sql, args in _turn_writes(writes, thread_id, turn_id):
        db.execute(sql, args)
    return "stored", session, opened, turn_id, fold


def _request_fold_tx(db, session_id: int, bounds: tuple[int, int, int], at: str):
    """Record a ``fold`` job for the session when :meth:`SQLiteStore.add_turn`'s bounds say so
    and none is pending (in aiosqlite's thread, inside the caller's transaction). Returns
    ``(seq, turns, tokens)`` of the job recorded, or None."""
    n, tokens = db.execute(
        "SELECT count(*), coalesce(sum(t.tokens), 0) FROM turns t "
        "JOIN sessions s ON s.id = t.session_id WHERE t.session_id = ? "
        "AND t.id > s.folded_through", (session_id,)).fetchone()
    if not (n > bounds[0] or (tokens > bounds[1] and n > bounds[2])):
        return None
    if db.execute("SELECT 1 FROM work WHERE session_id = ? AND kind = 'fold' AND done_at IS NULL",
                  (session_id,)).fetchone() is not None:
        return None
    seq = db.execute("SELECT coalesce(max(seq), 0) + 1 FROM work WHERE session_id = ? "
                     "AND kind = 'fold'", (session_id,)).fetchone()[0]
    db.execute("INSERT INTO work (kind, session_id, seq, created_at) VALUES ('fold', ?, ?, ?)",
               (session_id, seq, at))
    return seq, n, tokens


Statement = tuple[str, Sequence]
"""One SQL statement and its parameters (inside this module only: the ports take data)."""


def _usage_sql(entry: UsageEntry) -> Statement:
    """Add one model call to its user's totals for its day and model; a row's cost is the sum
    over its calls whose price was known (None while there was none)."""
    return (
        "INSERT INTO model_usage (user_id, day, model, calls, input_tokens, output_tokens,"
        " cache_creation_input_tokens, cache_read_input_tokens, cost_usd)"
        " VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?) ON CONFLICT (user_id, day, model) DO UPDATE SET"
        " calls = calls + 1,"
        " input_tokens = input_tokens + excluded.input_tokens,"
        " output_tokens = output_tokens + excluded.output_tokens,"
        " cache_creation_input_tokens = cache_creation_input_tokens"
        " + excluded.cache_creation_input_tokens,"
        " cache_read_input_tokens = cache_read_input_tokens"
        " + excluded.cache_read_input_tokens,"
        " cost_usd = CASE WHEN cost_usd IS NULL THEN excluded.cost_usd"
        " WHEN excluded.cost_usd IS NULL THEN cost_usd"
        " ELSE cost_usd + excluded.cost_usd END",
        (entry.user_id, entry.day, entry.model, entry.input_tokens, entry.output_tokens,
         entry.cache_creation_input_tokens, entry.cache_read_input_tokens, entry.cost_usd),
    )


def _prompt_record_sql(record: PromptRecord) -> Statement:
    """Keep (replace) the ``/why`` record of a user in a thread."""
    return ("INSERT INTO prompt_records (thread_id, user_id, created_at, payload) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (thread_id, user_id) DO UPDATE SET "
            "created_at = excluded.created_at, payload = excluded.payload",
            (record.thread_id, record.user_id, _ts(record.at),
             json.dumps(record.payload, ensure_ascii=False)))


def _handled_sql(update: HandledUpdate) -> Statement:
    """Mark a platform update handled (its payload dropped)."""
    stamp = _ts(update.at or datetime.now(timezone.utc))
    return ("INSERT INTO seen_updates (platform, update_id, seen_at) VALUES (?,?,?) "
            "ON CONFLICT (platform, update_id) DO UPDATE SET payload = NULL",
            (update.platform, update.key, stamp))


def _turn_writes(writes: TurnWrites, thread_id: int, turn_id: int) -> list[Statement]:
    """The statements of a turn's :class:`TurnWrites`, run right after the turn's insert."""
    out: list[Statement] = []
    if writes.handled_update is not None:
        out.append(_handled_sql(writes.handled_update))
    if writes.reply_due:
        out.append(("INSERT OR IGNORE INTO replies_due (turn_id, thread_id) VALUES (?, ?)",
                    (turn_id, thread_id)))
    if writes.usage is not None:
        out.append(_usage_sql(writes.usage))
    if writes.prompt_record is not None:
        out.append(_prompt_record_sql(writes.prompt_record))
    if writes.recalled is not None:
        out.append(("UPDATE turns SET recalled = ? WHERE id = ?",
                    (" ".join(writes.recalled), turn_id)))
    return out


def _execute_all(db, statements: Sequence[Statement]) -> None:
    """Statements in order inside :func:`_in_transaction`."""
    for sql, args in statements:
        db.execute(sql, args)


def _fetch_one(conn: aiosqlite.Connection, sql: str, args: Sequence):
    """Run ``sql`` and return its first row or None; called in aiosqlite's thread."""
    cur = conn._conn.execute(sql, args)
    try:
        return cur.fetchone()
    finally:
        cur.close()


def _ids(value: str) -> tuple[int, ...]:
    return tuple(int(v) for v in json.loads(value))


@dataclass(frozen=True, slots=True)
class _ForgetTargets:
    """Row ids one user's ``forget_all`` deletes (see :meth:`SQLiteStore.forget_all`)."""

    fact_ids: list[int]
    private_threads: list[int]
    group_turns: list[int]
    round_ids: list[int]
    episode_ids: list[int]
    turn_count: int


#: Pages in the WAL that start an automatic checkpoint (SQLite's default is 1,000: 4 MB with
#: 4 KiB pages). With :data:`WAL_SIZE_LIMIT_BYTES` this keeps the WAL file near 256 KiB, so the
#: data folder of a young bot stays within a small multiple of its compacted size
#: (docs/benchmarks.md, "Disk growth").
WAL_CHECKPOINT_PAGES = 64
#: Size the WAL file is cut back to after a checkpoint (``PRAGMA journal_size_limit``).
WAL_SIZE_LIMIT_BYTES = 256 << 10


class SQLiteStore:
    """The SQLite side of memory. Create with :meth:`open`; close with :meth:`close`.

    Raises:
        StoreError: the database cannot be opened or migrated.
    """

    def __init__(self, conn: aiosqlite.Connection, path: str) -> None:
        self._conn = conn
        self._lock = asyncio.Lock()
        self.path = path
        self.hot = HotTurns()  # open sessions and newest turns per thread (memory/stores/hot.py)
        # the ports of ``memory.ports.storage``, all served by this one object
        self.identities = self.conversations = self.deliveries = self.facts = self
        self.episodes = self.work = self.privacy = self.records = self

    @classmethod
    async def open(cls, path: str | Path) -> "SQLiteStore":
        """Open (creating if needed) the database at ``path`` (``":memory:"`` for tests),
        set the pragmas and apply pending migrations."""
        path = str(path)
        conn = None
        try:
            if path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            conn = await aiosqlite.connect(path, isolation_level=None)
            conn.row_factory = aiosqlite.Row
            await conn.execute("PRAGMA journal_mode=WAL")
            await conn.execute("PRAGMA foreign_keys=ON")
            await conn.execute("PRAGMA secure_delete=ON")
            await conn.execute("PRAGMA synchronous=NORMAL")
            await conn.execute("PRAGMA busy_timeout=5000")
            # the WAL file keeps the largest size it ever reached (4 MB at SQLite's default
            # checkpoint of 1,000 pages), twenty times a young bot's database: checkpoint at
            # WAL_CHECKPOINT_PAGES and cut the file back to WAL_SIZE_LIMIT_BYTES after each
            await conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
            await conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT_BYTES}")
            store = cls(conn, path)
            await store._migrate()
        except BaseException as exc:
            # a connection left open keeps aiosqlite's (non-daemon) thread alive, and the
            # process would never exit after reporting the error
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
            if isinstance(exc, sqlite3.Error):
                raise store_error(exc, f"cannot open the database at {path}") from exc
            if isinstance(exc, OSError):
                raise StoreError(f"cannot open the database at {path}: {exc}") from exc
            raise
        return store

    async def close(self) -> None:
        """Checkpoint the WAL and close the connection. A checkpoint that cannot run (a full
        disk, a read-only mount) is logged and skipped: the WAL is folded in at the next open,
        and the connection is closed either way."""
        try:
            await self._conn.execute("PRAGMA optimize")
            await self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            log.warning("sqlite checkpoint at close skipped: %s", exc)
        finally:
            await self._conn.close()

    async def _migrate(self) -> None:
        row = await (await self._conn.execute("PRAGMA user_version")).fetchone()
        version = row[0]
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            await self._conn.executescript(f"BEGIN; {script}; PRAGMA user_version={number}; COMMIT;")
            log.info("sqlite migration %d applied", number)

    @asynccontextmanager
    async def _tx(self, hot: Sequence[int] | None = None) -> AsyncIterator[aiosqlite.Connection]:
        """A write transaction. ``hot`` says what it may change of the hot cache's data
        (``memory/stores/hot.py``): None (the default) = any turn or session, so the whole
        cache is dropped; session ids = only those sessions' turns and rows; ``()`` = no turn
        and no session."""
        async with self._lock:
            self.hot.begin_write(hot)
            failed = True
            try:
                await self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                    await self._conn.execute("COMMIT")
                except BaseException:
                    if self._conn.in_transaction:  # not after SQLite rolled back by itself
                        await self._conn.execute("ROLLBACK")
                    raise
                failed = False
            except sqlite3.Error as exc:
                raise store_error(exc, "a database write failed") from exc
            finally:
                self.hot.end_write(hot, failed=failed)

    @asynccontextmanager
    async def _write(self, hot: Sequence[int] | None = None
                     ) -> AsyncIterator[Callable[..., Awaitable]]:
        """A write transaction run as one function in aiosqlite's thread: yields ``run``;
        ``await run(fn, *args)`` executes ``fn(db, *args)`` (``db``: the ``sqlite3.Connection``)
        between ``BEGIN IMMEDIATE`` and ``COMMIT`` and returns its result. ``hot`` as in
        :meth:`_tx`; the caller updates the hot cache inside the block.

        Why: :meth:`_tx` holds the write lock across one hand-off per statement, each waiting
        for an event-loop wake-up; with 50 conversations at once the lock was held ~90% of the
        time and replies queued 100-250 ms on it per write (docs/benchmarks.md, third pass).
        Here the lock is held for one hand-off. Uses aiosqlite's ``Connection._execute``
        (0.20-0.22; pinned in pyproject.toml).

        Raises:
            StoreError: the transaction failed and was rolled back (its ``reason`` says why).
        """
        async with self._lock:
            self.hot.begin_write(hot)
            failed = True
            try:
                yield self._run_in_transaction
                failed = False
            except sqlite3.Error as exc:
                raise store_error(exc, "a database write failed") from exc
            finally:
                self.hot.end_write(hot, failed=failed)

    async def _run_in_transaction(self, fn: Callable, *args):
        return await self._conn._execute(_in_transaction, self._conn, fn, args)

    async def _one(self, sql: str, args: Sequence = ()) -> aiosqlite.Row | None:
        # one round trip to aiosqlite's thread (execute, fetch and close there) instead of
        # three (execute, fetchone, close): each costs a queue hand-off and an event-loop
        # wake-up, about a third of a turn's SQLite CPU (docs/benchmarks.md, second pass)
        run = getattr(self._conn, "_execute", None)
        if run is None:  # an aiosqlite without the private helper: the public, slower path
            async with self._conn.execute(sql, args) as cur:
                return await cur.fetchone()
        return await run(_fetch_one, self._conn, sql, args)

    async def _all(self, sql: str, args: Sequence = ()) -> list[aiosqlite.Row]:
        return list(await self._conn.execute_fetchall(sql, args))  # one round trip

    # ----------------------------------------------------------------- identities

    async def user_for_account(
        self, platform: str, platform_user_id: str, display_name: str, now: datetime
    ) -> UserRow:
        """Return the user behind a platform account, creating both on first sight."""
        user = await self.find_user(platform, platform_user_id)
        if user is not None:
            return user
        async with self._tx() as tx:
            user = await self.find_user(platform, platform_user_id)  # created meanwhile?
            if user is not None:
                return user
            cur = await tx.execute(
                "INSERT INTO users (display_name, created_at) VALUES (?, ?)",
                (display_name, _ts(now)),
            )
            await tx.execute(
                "INSERT INTO accounts (platform, platform_user_id, user_id) VALUES (?, ?, ?)",
                (platform, platform_user_id, cur.lastrowid),
            )
        log.info("user created id=%s platform=%s", cur.lastrowid, platform)
        return await self.get_user(cur.lastrowid)

    async def find_user(self, platform: str, platform_user_id: str) -> UserRow | None:
        """Return the user behind a platform account, or None."""
        row = await self._one(
            "SELECT u.* FROM accounts a JOIN users u ON u.id = a.user_id "
            "WHERE a.platform = ? AND a.platform_user_id = ?",
            (platform, platform_user_id),
        )
        return self._user(row) if row else None

    async def get_user(self, user_id: int) -> UserRow | None:
        """Return a user by id, or None."""
        row = await self._one("SELECT * FROM users WHERE id = ?", (user_id,))
        return self._user(row) if row else None

    @staticmethod
    def _user(row: aiosqlite.Row) -> UserRow:
        return UserRow(
            id=row["id"],
            display_name=row["display_name"],
            memory_enabled=bool(row["memory_enabled"]),
            timezone=row["timezone"],
            language=row["language"],
        )

    async def set_memory_enabled(self, user_id: int, enabled: bool) -> None:
        """Persist a user's ``/memory_on`` / ``/memory_off`` choice."""
        async with self._tx() as tx:
            await tx.execute(
                "UPDATE users SET memory_enabled = ? WHERE id = ?", (int(enabled), user_id)
            )

    async def set_timezone(self, user_id: int, tz: str | None) -> None:
        """Persist a user's IANA time zone (``/timezone``); None returns to the default."""
        async with self._tx() as tx:
            await tx.execute("UPDATE users SET timezone = ? WHERE id = ?", (tz, user_id))

    async def set_language(self, user_id: int, language: str | None) -> None:
        """Persist the language a user chose for replies (``/language``: ``"en"``, ``"zh"``);
        None returns to choosing by each message."""
        async with self._tx() as tx:
            await tx.execute("UPDATE users SET language = ? WHERE id = ?", (language, user_id))

    async def thread_for_key(
        self, key: ThreadKey, chat_kind: ChatKind, title: str | None, now: datetime
    ) -> ThreadRow:
        """Return the thread for ``key``, creating it on first sight."""
        topic = key.thread_id or ""
        row = await self._one(
            "SELECT * FROM threads WHERE platform = ? AND chat_id = ? AND topic_id = ?",
            (key.platform, key.chat_id, topic),
        )
        if row is None:
            async with self._tx() as tx:
                await tx.execute(
                    "INSERT OR IGNORE INTO threads (platform, chat_id, topic_id, chat_kind, title, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (key.platform, key.chat_id, topic, chat_kind.value, title, _ts(now)),
                )
            row = await self._one(
                "SELECT * FROM threads WHERE platform = ? AND chat_id = ? AND topic_id = ?",
                (key.platform, key.chat_id, topic),
            )
        return self._thread(row)

    async def get_thread(self, thread_id: int) -> ThreadRow | None:
        """Return a thread by id, or None."""
        row = await self._one("SELECT * FROM threads WHERE id = ?", (thread_id,))
        return self._thread(row) if row else None

    @staticmethod
    def _thread(row: aiosqlite.Row) -> ThreadRow:
        key = ThreadKey(row["platform"], row["chat_id"], row["topic_id"] or None)
        return ThreadRow(row["id"], key, ChatKind(row["chat_kind"]), row["title"])

    # ----------------------------------------------------------------- sessions, turns

    async def open_session(self, thread_id: int) -> SessionRow | None:
        """Return the thread's open session, or None (from the hot cache when it holds it)."""
        known, session = self.hot.session(thread_id)
        if known:
            return session
        generation = self.hot.generation
        row = await self._one(
            "SELECT * FROM sessions WHERE thread_id = ? AND closed_at IS NULL", (thread_id,)
        )
        session = self._session(row) if row else None
        self.hot.put_session(thread_id, session, generation)
        return session

    async def get_session(self, session_id: int) -> SessionRow | None:
        """Return a session by id, or None."""
        row = await self._one("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return self._session(row) if row else None

    @staticmethod
    def _session(row: aiosqlite.Row) -> SessionRow:
        return SessionRow(
            id=row["id"],
            thread_id=row["thread_id"],
            started_at=_dt(row["started_at"]),
            last_turn_at=_dt(row["last_turn_at"]),
            closed_at=_dt(row["closed_at"]),
            folded_through=row["folded_through"],
        )

    async def add_turn(
        self,
        *,
        thread_id: int,
        role: Role,
        text: str,
        at: datetime,
        user_id: int | None = None,
        speaker: str | None = None,
        platform_message_id: str | None = None,
        generated_by: str | None = None,
        memory_off: bool = False,
        tokens: int = 0,
        fold_after: tuple[int, int, int] | None = None,
        writes: TurnWrites = NO_WRITES,
    ) -> tuple[Turn, bool]:
        """Store a turn in the thread's open session, opening a session if none is open.

        ``writes`` (:class:`TurnWrites`: the delivery's handled mark, a reply due, the reply's
        usage and ``/why`` record, its recalled keys) are stored in the same transaction after
        the turn, so a reply is stored in one write instead of three; none of them changes a
        turn's fields or a session (the hot cache keeps its entry). They are not stored for a
        redelivered turn.

        With ``fold_after = (turns, tokens, min_turns)``, a ``fold`` job is recorded in the same
        transaction when no fold is pending and the session's unfolded turns number more than
        ``turns`` (``SUMMARY_TRIGGER_MESSAGES``), or hold more than ``tokens``
        (``MAX_WORKING_TOKENS``) while numbering more than ``min_turns`` (so that a fold, which
        keeps the last 10 turns, has something to fold).

        Returns:
            ``(turn, created)``; ``created`` is False when a turn with the same platform message
            id already exists in the thread (a redelivery), which is returned instead.
        """
        stamp = _ts(at)
        async with self._write(hot=()) as run:  # the hot cache's entry is updated below
            known, open_ = self.hot.session(thread_id)  # exact: no other write is running
            session = (open_.id if open_ is not None else None) if known else _UNKNOWN
            result = await run(_add_turn_tx, thread_id, (
                user_id, role.value, speaker, text, stamp, platform_message_id, generated_by,
                int(memory_off), tokens), platform_message_id, stamp, session, fold_after,
                writes)
            if result[0] == "duplicate":
                return self._turn(result[1]), False
            _, session_id, opened, turn_id, fold = result
            if opened:
                log.info("session opened id=%s thread=%s", session_id, thread_id)
            if fold is not None:
                log.info("fold requested session=%s seq=%s turns=%s tokens=%s", session_id,
                         *fold)
            self.hot.turn_added(thread_id, Turn(  # as session_turns would read it back
                id=turn_id, thread_id=thread_id, session_id=session_id, role=role, text=text,
                created_at=_dt(stamp), user_id=user_id, speaker=speaker,
                platform_message_id=platform_message_id, generated_by=generated_by,
                memory_off=memory_off), opened=(SessionRow(
                    id=session_id, thread_id=thread_id, started_at=_dt(stamp),
                    last_turn_at=_dt(stamp), closed_at=None, folded_through=0)
                    if opened else None), at=_dt(stamp))
        log.debug("turn stored id=%s thread=%s role=%s", turn_id, thread_id, role.value)
        return Turn(
            id=turn_id, thread_id=thread_id, session_id=session_id, role=role, text=text,
            created_at=at, user_id=user_id, speaker=speaker,
            platform_message_id=platform_message_id, generated_by=generated_by,
            memory_off=memory_off,
        ), True

    @staticmethod
    def _turn(row: aiosqlite.Row) -> Turn:
        return Turn(
            id=row["id"], thread_id=row["thread_id"], session_id=row["session_id"],
            role=Role(row["role"]), text=row["text"], created_at=_dt(row["created_at"]),
            user_id=row["user_id"], speaker=row["speaker"],
            platform_message_id=row["platform_message_id"], generated_by=row["generated_by"],
            memory_off=bool(row["memory_off"]),
        )

    async def session_turns(self, session_id: int, *, limit: int | None = None) -> list[Turn]:
        """Return a session's turns, oldest first; with ``limit``, only the newest ``limit``."""
        if limit is None:
            rows = await self._all(
                "SELECT * FROM turns WHERE session_id = ? ORDER BY id", (session_id,)
            )
        else:
            rows = await self._all(
                "SELECT * FROM (SELECT * FROM turns WHERE session_id = ? ORDER BY id DESC LIMIT ?)"
                " ORDER BY id",
                (session_id, limit),
            )
        return [self._turn(r) for r in rows]

    async def get_turns(self, turn_ids: Iterable[int]) -> list[Turn]:
        """Return the turns with these ids (any number; missing ids are skipped), oldest
        first."""
        turns = await self._by_ids("turns", sorted(set(turn_ids)), self._turn)
        return sorted(turns, key=lambda t: t.id)

    async def close_session(self, session_id: int, at: datetime, reason: str) -> bool:
        """Mark a session closed and record its consolidation job, in one transaction.

        Returns:
            True when this call closed it; False when it was already closed (idempotent).
        """
        async with self._tx(hot=(session_id,)) as tx:
            cur = await tx.execute(
                "UPDATE sessions SET closed_at = ?, close_reason = ? "
                "WHERE id = ? AND closed_at IS NULL",
                (_ts(at), reason, session_id),
            )
            if cur.rowcount == 0:
                return False
            await tx.execute(
                "INSERT OR IGNORE INTO work (kind, session_id, created_at) VALUES ('close', ?, ?)",
                (session_id, _ts(at)),
            )
        log.info("session closed id=%s reason=%s", session_id, reason)
        return True

    async def pending_work(self, *, thread_id: int | None = None,
                           due_at: datetime | None = None) -> list[WorkRow]:
        """Return consolidation jobs not yet done, oldest first (optionally of one thread).

        With ``due_at``, only jobs that may run then: never failed, or failed with a
        ``retry_after`` at or before ``due_at``.
        """
        sql = ("SELECT w.* FROM work w JOIN sessions s ON s.id = w.session_id "
               "WHERE w.done_at IS NULL")
        args: tuple = ()
        if thread_id is not None:
            sql += " AND s.thread_id = ?"
            args = (thread_id,)
        if due_at is not None:
            sql += " AND (w.retry_after IS NULL OR w.retry_after <= ?)"
            args += (_ts(due_at),)
        rows = await self._all(sql + " ORDER BY w.id", args)
        return [WorkRow(r["id"], r["kind"], r["session_id"], r["attempts"], r["seq"],
                        _dt(r["retry_after"]) if r["retry_after"] else None) for r in rows]

    async def work_done(self, work_id: int) -> bool:
        """True when a job is done (or gone with its session)."""
        row = await self._one("SELECT done_at FROM work WHERE id = ?", (work_id,))
        return row is None or row["done_at"] is not None

    async def fail_work(self, work_id: int, error: str, *,
                        retry_after: datetime | None = None) -> None:
        """Count a failed attempt of a job (it stays pending), not to be tried again before
        ``retry_after`` (aware; None: at the next run)."""
        async with self._tx(hot=()) as tx:
            await tx.execute(
                "UPDATE work SET attempts = attempts + 1, last_error = ?, retry_after = ? "
                "WHERE id = ?",
                (error[:500], _ts(retry_after) if retry_after else None, work_id),
            )

    async def complete_work(self, work_id: int, outcome: WorkOutcome) -> WorkResult:
        """Write a job's outcome and mark the job done, in one transaction.

        The session's episode is inserted or updated in place (one episode per session: a fold
        updates the running episode, the close finishes it); ``folded_through`` (folds only)
        moves the session's fold mark; ``drop_turn_ids`` are deleted (turns said with memory
        off); the language model's fact decisions (``fact_ops``, :meth:`_apply_fact_ops`) and
        the episode's source are written after the episode. Exactly once: a job already done
        writes nothing and returns ``done`` False.
        """
        session_id, scope, episode = outcome.session_id, outcome.scope, outcome.episode
        rounds, folded_through, now = outcome.rounds, outcome.folded_through, outcome.now
        started_at, ended_at, drop_turn_ids = (outcome.started_at, outcome.ended_at,
                                               outcome.drop_turn_ids)
        status = "running" if folded_through is not None else "closed"
        changed: list[int] = []
        # the session's own turns and row change (fold mark, dropped memory-off turns); the
        # language model's fact decisions touch facts and episodes only
        async with self._tx(hot=(session_id,)) as tx:
            row = await self._one("SELECT done_at FROM work WHERE id = ?", (work_id,))
            if row is None or row["done_at"] is not None:
                return WorkResult(done=False)
            sess = await self._one("SELECT thread_id FROM sessions WHERE id = ?", (session_id,))
            thread_id = sess["thread_id"]
            stored_episode = None
            if episode is not None:
                await tx.execute(
                    "INSERT INTO episodes (thread_id, session_id, scope, summary, key_data, turn_ids,"
                    " started_at, ended_at, created_at, goal, decisions, open_tasks, state,"
                    " participants, status, folds) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                    "ON CONFLICT (session_id) DO UPDATE SET summary = excluded.summary, "
                    "key_data = excluded.key_data, turn_ids = excluded.turn_ids, "
                    "ended_at = excluded.ended_at, goal = excluded.goal, "
                    "decisions = excluded.decisions, open_tasks = excluded.open_tasks, "
                    "state = excluded.state, participants = excluded.participants, "
                    "status = excluded.status, folds = episodes.folds + excluded.folds",
                    (thread_id, session_id, str(scope), episode.summary,
                     json.dumps([[k.text, k.turn_id] for k in episode.key_data], ensure_ascii=False),
                     json.dumps(list(episode.turn_ids)), _ts(started_at), _ts(ended_at), _ts(now),
                     episode.goal, json.dumps(list(episode.decisions), ensure_ascii=False),
                     json.dumps(list(episode.open_tasks), ensure_ascii=False), episode.state,
                     json.dumps(list(episode.participants), ensure_ascii=False), status,
                     1 if folded_through is not None else 0),
                )
                stored_episode = self._episode(await self._one(
                    "SELECT * FROM episodes WHERE session_id = ?", (session_id,)))
            elif folded_through is None:
                await tx.execute("UPDATE episodes SET status = 'closed' WHERE session_id = ?",
                                 (session_id,))
            stored_rounds = []
            for draft in rounds:
                cur = await tx.execute(
                    "INSERT INTO rounds (thread_id, session_id, scope, turn_ids, text, created_at)"
                    " VALUES (?,?,?,?,?,?)",
                    (thread_id, session_id, str(scope), json.dumps(list(draft.turn_ids)), draft.text,
                     _ts(draft.created_at)),
                )
                stored_rounds.append(Round(
                    id=cur.lastrowid, thread_id=thread_id, session_id=session_id,
                    turn_ids=draft.turn_ids, text=draft.text, created_at=draft.created_at,
                    scope=scope,
                ))
            if drop_turn_ids:
                marks = ",".join("?" * len(drop_turn_ids))
                await tx.execute(f"DELETE FROM turns WHERE id IN ({marks})", list(drop_turn_ids))
            if folded_through is not None:
                await tx.execute(
                    "UPDATE sessions SET folded_through = max(folded_through, ?) WHERE id = ?",
                    (folded_through, session_id))
            if outcome.episode_source is not None:  # a consolidation model was asked
                changed = await self._apply_fact_ops(tx, outcome.fact_ops, now)
                await tx.execute("UPDATE episodes SET source = ? WHERE session_id = ?",
                                 (outcome.episode_source, session_id))
                if stored_episode is not None:  # its source changed
                    stored_episode = self._episode(await self._one(
                        "SELECT * FROM episodes WHERE session_id = ?", (session_id,)))
            await tx.execute("UPDATE work SET done_at = ? WHERE id = ?", (_ts(now), work_id))
        return WorkResult(True, stored_episode, tuple(stored_rounds), tuple(changed))

    async def session_episode(self, session_id: int) -> Episode | None:
        """The episode of a session (running or closed), or None."""
        row = await self._one("SELECT * FROM episodes WHERE session_id = ?", (session_id,))
        return self._episode(row) if row else None

    # ----------------------------------------------------------------- episodes, rounds

    @staticmethod
    def _episode(row: aiosqlite.Row) -> Episode:
        return Episode(
            id=row["id"], thread_id=row["thread_id"], session_id=row["session_id"],
            summary=row["summary"],
            key_data=tuple(KeyDatum(t, i) for t, i in json.loads(row["key_data"])),
            turn_ids=_ids(row["turn_ids"]), started_at=_dt(row["started_at"]),
            ended_at=_dt(row["ended_at"]), created_at=_dt(row["created_at"]),
            scope=Scope.parse(row["scope"]),
            goal=row["goal"], decisions=tuple(json.loads(row["decisions"])),
            open_tasks=tuple(json.loads(row["open_tasks"])), state=row["state"],
            participants=tuple(json.loads(row["participants"])), status=row["status"],
            folds=row["folds"], source=row["source"] if "source" in row.keys() else "rules",
        )

    @staticmethod
    def _round(row: aiosqlite.Row) -> Round:
        return Round(
            id=row["id"], thread_id=row["thread_id"], session_id=row["session_id"],
            turn_ids=_ids(row["turn_ids"]), text=row["text"], created_at=_dt(row["created_at"]),
            scope=Scope.parse(row["scope"]),
        )

    async def last_episode(self, thread_id: int) -> Episode | None:
        """Return the newest closed episode of a thread, or None."""
        row = await self._one(
            "SELECT * FROM episodes WHERE thread_id = ? AND status = 'closed' "
            "ORDER BY ended_at DESC, id DESC LIMIT 1",
            (thread_id,),
        )
        return self._episode(row) if row else None

    async def get_episodes(self, ids: Iterable[int]) -> dict[int, Episode]:
        """Return episodes by id (missing ids are absent from the result)."""
        return {e.id: e for e in await self._by_ids("episodes", ids, self._episode)}

    async def get_rounds(self, ids: Iterable[int]) -> dict[int, Round]:
        """Return rounds by id (missing ids are absent from the result)."""
        return {r.id: r for r in await self._by_ids("rounds", ids, self._round)}

    async def get_facts(self, ids: Iterable[int]) -> dict[int, Fact]:
        """Return facts by id (missing ids are absent from the result)."""
        return {f.id: f for f in await self._by_ids("facts", ids, self._fact)}

    async def _by_ids(self, table: str, ids: Iterable[int], build) -> list:
        ids = list(ids)
        out = []
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            rows = await self._all(f"SELECT * FROM {table} WHERE id IN ({marks})", chunk)
            out.extend(build(r) for r in rows)
        return out

    async def episodes_in_scope(self, scope: Scope) -> list[Episode]:
        """Return the episodes of a scope, newest first."""
        rows = await self._all(
            "SELECT * FROM episodes WHERE scope = ? ORDER BY ended_at DESC, id DESC", (str(scope),)
        )
        return [self._episode(r) for r in rows]

    # ----------------------------------------------------------------- facts

    @staticmethod
    def _fact(row: aiosqlite.Row) -> Fact:
        return Fact(
            id=row["id"], user_id=row["user_id"], kind=row["kind"], text=row["text"],
            topic=row["topic"], status=FactStatus(row["status"]),
            created_at=_dt(row["created_at"]), valid_from=_dt(row["valid_from"]),
            valid_to=_dt(row["valid_to"]), last_confirmed_at=_dt(row["last_confirmed_at"]),
            last_recalled_at=_dt(row["last_recalled_at"]), confirmations=row["confirmations"],
            origin_thread_id=row["origin_thread_id"], origin_kind=ChatKind(row["origin_kind"]),
            origin_title=row["origin_title"], source_turn_ids=_ids(row["source_turn_ids"]),
            lang=row["lang"], value=row["value"], mode=row["mode"],
        )

    async def add_fact(
        self,
        *,
        user_id: int,
        kind: str,
        text: str,
        topic: str | None,
        origin: ThreadRow,
        source_turn_ids: Sequence[int],
        lang: str,
        scope: Scope,
        now: datetime,
        valid_from: datetime | None = None,
        value: str | None = None,
        mode: str = "explicit",
        supersedes: Sequence[int] = (),
    ) -> Fact:
        """Store a new active fact and return it; the facts in ``supersedes`` get
        ``valid_to = valid_from`` and status ``superseded`` in the same transaction.

        Raises:
            StoreError: the text is empty or longer than ``memory.facts.MAX_FACT_CHARS`` (the
                one length check every write path goes through).
        """
        async with self._tx() as tx:
            fact_id = await self._insert_fact(
                tx, user_id=user_id, kind=kind, text=text, topic=topic, origin=origin,
                source_turn_ids=source_turn_ids, lang=lang, scope=scope, now=now,
                valid_from=valid_from, value=value, mode=mode, supersedes=supersedes)
        facts = await self.get_facts([fact_id])
        log.info("fact written id=%s user=%s kind=%s", fact_id, user_id, kind)
        return facts[fact_id]

    async def end_fact(self, fact_id: int, user_id: int, at: datetime) -> bool:
        """Mark an active fact as no longer true ("I quit green tea"): status ``superseded``
        with ``valid_to = at``, kept as history. Returns False when nothing changed."""
        async with self._tx() as tx:
            cur = await tx.execute(
                "UPDATE facts SET status = 'superseded', valid_to = ? WHERE id = ? AND user_id = ?"
                " AND status = 'active'", (_ts(at), fact_id, user_id))
        return cur.rowcount > 0

    async def active_facts(self, user_id: int, scope: Scope, *, topic: str | None = None
                           ) -> list[Fact]:
        """A user's active facts in one scope (optionally of one topic key), oldest first."""
        sql = "SELECT * FROM facts WHERE user_id = ? AND scope = ? AND status = 'active'"
        args: list = [user_id, str(scope)]
        if topic is not None:
            sql += " AND topic = ?"
            args.append(topic)
        return [self._fact(r) for r in await self._all(sql + " ORDER BY id", args)]

    async def facts_in_scope(self, user_id: int, scope: Scope) -> list[Fact]:
        """A user's facts in one scope, every status, oldest first."""
        return [self._fact(r) for r in await self._all(
            "SELECT * FROM facts WHERE user_id = ? AND scope = ? ORDER BY id", (user_id, str(scope)))]

    async def add_candidate(
        self, *, user_id: int, scope: Scope, topic: str | None, value: str | None, text: str,
        norm: str, lang: str, vector: bytes | None, session_id: int, turn_id: int, now: datetime,
    ) -> int:
        """Record a statement that becomes a fact if it is repeated in another session."""
        async with self._tx() as tx:
            cur = await tx.execute(
                "INSERT INTO fact_candidates (user_id, scope, topic, value, text, norm, lang, vector,"
                " session_id, turn_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (user_id, str(scope), topic, value, text, norm, lang, vector, session_id, turn_id,
                 _ts(now)))
        return cur.lastrowid

    async def open_candidates(self, user_id: int, scope: Scope, *, limit: int = 500) -> list[dict]:
        """The user's unconsumed candidates in a scope, newest first (at most ``limit``)."""
        rows = await self._all(
            "SELECT * FROM fact_candidates WHERE user_id = ? AND scope = ? AND consumed_at IS NULL"
            " ORDER BY id DESC LIMIT ?", (user_id, str(scope), limit))
        return [dict(r) for r in rows]

    async def consume_candidates(self, ids: Sequence[int], now: datetime) -> None:
        """Mark candidates as used by a fact."""
        if not ids:
            return
        marks = ",".join("?" * len(ids))
        async with self._tx() as tx:
            await tx.execute(f"UPDATE fact_candidates SET consumed_at = ? WHERE id IN ({marks})",
                             (_ts(now), *ids))

    async def confirm_fact(self, fact_id: int, turn_id: int, now: datetime) -> None:
        """Record a restatement: bump ``last_confirmed_at`` and ``confirmations``; add the
        source turn."""
        async with self._tx() as tx:
            await self._confirm_in(tx, fact_id, turn_id, now)
        log.info("fact confirmed id=%s", fact_id)

    async def facts_of_thread(self, thread_id: int) -> list[Fact]:
        """Every fact learned in a thread (any owner, any status), oldest first."""
        rows = await self._all("SELECT * FROM facts WHERE origin_thread_id = ? ORDER BY id",
                               (thread_id,))
        return [self._fact(r) for r in rows]

    async def list_facts(self, user_id: int, statuses: Sequence[FactStatus]) -> list[Fact]:
        """Return a user's facts with the given statuses, oldest first."""
        marks = ",".join("?" * len(statuses))
        rows = await self._all(
            f"SELECT * FROM facts WHERE user_id = ? AND status IN ({marks}) ORDER BY id",
            (user_id, *[s.value for s in statuses]),
        )
        return [self._fact(r) for r in rows]

    async def touch_facts(self, fact_ids: Sequence[int], now: datetime) -> None:
        """Set ``last_recalled_at`` of recalled facts."""
        if not fact_ids:
            return
        marks = ",".join("?" * len(fact_ids))
        await self._run_statements(
            [(f"UPDATE facts SET last_recalled_at = ? WHERE id IN ({marks})", (_ts(now), *fact_ids))])

    # ----------------------------------------------------------------- deletion

    async def fact_with_history(self, user_id: int, fact_id: int) -> list[Fact]:
        """The facts :meth:`delete_fact` deletes for ``fact_id``: the fact first, then the
        earlier values it replaced (superseded facts of its topic valid from no later than
        it, oldest first); a later or current value of the topic is never among them. Empty
        when the fact is not the user's."""
        row = await self._one("SELECT * FROM facts WHERE id = ? AND user_id = ?",
                              (fact_id, user_id))
        if row is None:
            return []
        fact = self._fact(row)
        if not row["topic"]:
            return [fact]
        rows = await self._all(
            "SELECT * FROM facts WHERE user_id = ? AND topic = ? AND status = 'superseded' "
            "AND id != ? AND valid_from <= ? ORDER BY valid_from, id",
            (user_id, row["topic"], fact_id, row["valid_from"]))
        return [fact] + [self._fact(r) for r in rows]

    async def delete_fact(self, user_id: int, fact_id: int, now: datetime) -> ForgetResult:
        """Delete one of a user's facts, its history (the earlier values it replaced:
        :meth:`fact_with_history`) and the source turns they came from; rounds holding those
        turns go too.

        Returns:
            What was removed, with the deleted facts' texts (zero counts when the fact is not
            the user's).
        """
        async with self._tx() as tx:
            doomed = await self._fact_deletion(user_id, fact_id)
            if doomed is None:
                return ForgetResult(0, 0, 0, 0, ())
            facts, turn_ids, round_keys, reply_ids, citing, doomed_keys = doomed
            ids = [f.id for f in facts]
            episode_ids = [e.id for e in citing]
            marks = ",".join("?" * len(ids))
            await tx.execute(f"DELETE FROM facts WHERE id IN ({marks})", ids)
            if round_keys:
                rmarks = ",".join("?" * len(round_keys))
                await tx.execute(f"DELETE FROM rounds WHERE id IN ({rmarks})", round_keys)
            if turn_ids:
                tmarks = ",".join("?" * len(turn_ids))
                await tx.execute(
                    f"DELETE FROM turns WHERE id IN ({tmarks}) AND role = 'user'", turn_ids
                )
            if reply_ids:
                await self._delete_ids(tx, "turns", reply_ids)
            await self._delete_ids(tx, "episodes", episode_ids)
            await tx.execute("DELETE FROM prompt_records WHERE user_id = ?", (user_id,))
            await self._drop_prompt_records_showing(tx, doomed_keys)
            await tx.execute(
                "INSERT INTO audit_log (at, user_id, action, count) VALUES (?, ?, 'forget_fact', ?)",
                (_ts(now), user_id, len(ids)),
            )
            keys = (tuple(f"fact:{i}" for i in ids) + tuple(f"round:{i}" for i in round_keys)
                    + tuple(f"episode:{i}" for i in episode_ids))
            resummarise = tuple(e.session_id for e in citing if e.status == "closed")
            purge_id = await self._record_purge(tx, user_id, keys, resummarise, now)
        return ForgetResult(len(ids), len(episode_ids), len(round_keys), len(turn_ids), keys,
                            resummarise, purge_id, tuple(f.text for f in facts))

    async def fact_deletion_messages(self, user_id: int, fact_id: int) -> list[str]:
        """The texts of the user's own messages :meth:`delete_fact` would delete now (the
        facts' source messages and the user's messages in the rounds of replies derived from
        them), oldest first; deletes nothing. Empty when the fact is not the user's."""
        doomed = await self._fact_deletion(user_id, fact_id)
        if doomed is None:
            return []
        _, turn_ids, _, reply_ids, _, _ = doomed
        turns = await self.get_turns(sorted(set(turn_ids) | set(reply_ids)))
        return [t.text for t in sorted(turns, key=lambda t: t.id)
                if t.role is Role.USER and t.user_id == user_id]

    async def _fact_deletion(self, user_id: int, fact_id: int):
        """What :meth:`delete_fact` deletes for ``fact_id`` (read in the caller's transaction
        when there is one): ``(facts, source turn ids, round ids, other turn ids, citing
        episodes, index keys)``, or None when the fact is not the user's.

        What was derived from the facts goes too: the replies in the rounds holding their
        source turns, replies that quoted a fact or whose prompt recalled a doomed item, the
        rounds holding such replies, the episodes citing any doomed turn; repeated until
        nothing new is derived (a reply that recalled a deleted episode, ...)."""
        facts = await self.fact_with_history(user_id, fact_id)
        if not facts:
            return None
        ids = [f.id for f in facts]
        turn_ids = sorted({t for f in facts for t in f.source_turn_ids})
        echo_ids = set(await self._replies_quoting(user_id, [f.text for f in facts]))
        known: set[str] = set()
        while True:
            round_keys = sorted(set(await self._rounds_with_turns(turn_ids))
                                | set(await self._rounds_with_turns(sorted(echo_ids))))
            reply_ids = sorted(({t for r in await self._by_ids("rounds", round_keys,
                                                               self._round)
                                 for t in r.turn_ids} | echo_ids) - set(turn_ids))
            citing = await self._episodes_citing(set(turn_ids) | set(reply_ids))
            doomed_keys = ({f"fact:{i}" for i in ids} | {f"round:{i}" for i in round_keys}
                           | {f"episode:{e.id}" for e in citing})
            if doomed_keys == known:
                return facts, turn_ids, round_keys, reply_ids, citing, doomed_keys
            known = doomed_keys
            echo_ids |= set(await self._replies_recalling(user_id, doomed_keys))

    async def _rounds_with_turns(self, turn_ids: Sequence[int]) -> list[int]:
        if not turn_ids:
            return []
        wanted = set(turn_ids)
        out = []
        marks = ",".join("?" * len(turn_ids))
        rows = await self._all(
            f"SELECT DISTINCT r.id, r.turn_ids FROM rounds r JOIN turns t ON t.session_id = "
            f"r.session_id WHERE t.id IN ({marks})",
            list(turn_ids),
        )
        for r in rows:
            if wanted & set(_ids(r["turn_ids"])):
                out.append(r["id"])
        return out

    async def _forget_targets(self, user_id: int) -> _ForgetTargets:
        """What :meth:`forget_all` deletes for ``user_id`` (ids only; read in the caller's
        transaction when there is one)."""
        scope = str(Scope.private(user_id))
        fact_ids = [r["id"] for r in await self._all(
            "SELECT id FROM facts WHERE user_id = ?", (user_id,))]
        private_threads = [r["id"] for r in await self._all(
            "SELECT DISTINCT t.id FROM threads t JOIN turns u ON u.thread_id = t.id "
            "WHERE t.chat_kind = 'private' AND u.user_id = ?", (user_id,))]
        episode_ids = [r["id"] for r in await self._all(
            "SELECT id FROM episodes WHERE scope = ?", (scope,))]
        round_ids = [r["id"] for r in await self._all(
            "SELECT id FROM rounds WHERE scope = ?", (scope,))]
        group_turns = [r["id"] for r in await self._all(
            "SELECT u.id FROM turns u JOIN threads t ON t.id = u.thread_id "
            "WHERE t.chat_kind = 'group' AND u.user_id = ?", (user_id,))]
        # group replies that quoted one of the user's facts go too
        echoes = await self._replies_quoting(user_id, [r["text"] for r in await self._all(
            "SELECT text FROM facts WHERE user_id = ?", (user_id,))])
        if echoes:
            marks = ",".join("?" * len(echoes))
            group_turns += [r["id"] for r in await self._all(
                f"SELECT u.id FROM turns u JOIN threads t ON t.id = u.thread_id WHERE "
                f"t.chat_kind = 'group' AND u.id IN ({marks})", echoes)]
        # and group replies whose prompt recalled one of the user's items (their facts, their
        # private conversations: a group never recalls those, but the check is by key)
        own_keys = ({f"fact:{i}" for i in fact_ids} | {f"episode:{i}" for i in episode_ids}
                    | {f"round:{i}" for i in round_ids})
        derived = await self._replies_recalling(user_id, own_keys)
        if derived:
            marks = ",".join("?" * len(derived))
            group_turns += [r["id"] for r in await self._all(
                f"SELECT u.id FROM turns u JOIN threads t ON t.id = u.thread_id WHERE "
                f"t.chat_kind = 'group' AND u.id IN ({marks})", derived)]
        group_turns = sorted(set(group_turns))
        group_rounds = await self._rounds_with_turns(group_turns)
        gset = set(group_turns)
        group_episodes = [r["id"] for r in await self._all(
            "SELECT e.id, e.turn_ids FROM episodes e JOIN threads t ON t.id = e.thread_id "
            "WHERE t.chat_kind = 'group'") if gset & set(_ids(r["turn_ids"]))]
        turn_count = len(group_turns)
        for thread_id in private_threads:
            row = await self._one("SELECT count(*) AS n FROM turns WHERE thread_id = ?",
                                  (thread_id,))
            turn_count += row["n"]
        return _ForgetTargets(fact_ids, private_threads, group_turns,
                              sorted(set(round_ids) | set(group_rounds)),
                              sorted(set(episode_ids) | set(group_episodes)), turn_count)

    async def forget_all_preview(self, user_id: int) -> ForgetResult:
        """The counts :meth:`forget_all` would delete now (facts of every status, episodes and
        rounds of private and group chats, messages), deleting nothing; ``index_keys`` empty.
        The ``/forget all`` confirmation names these numbers."""
        t = await self._forget_targets(user_id)
        return ForgetResult(len(t.fact_ids), len(t.episode_ids), len(t.round_ids), t.turn_count, ())

    async def forget_all(self, user_id: int, now: datetime) -> ForgetResult:
        """Delete everything of one user: facts; in their private threads every turn, episode,
        round and prompt record (both sides); in group threads their own turns and the rounds
        and episodes that cite them. Other users' data is untouched (predicate-scoped deletes,
        never a table reset).
        """
        async with self._tx() as tx:
            t = await self._forget_targets(user_id)
            await self._delete_ids(tx, "facts", t.fact_ids)
            await self._delete_ids(tx, "rounds", t.round_ids)
            await self._delete_ids(tx, "episodes", t.episode_ids)
            await self._delete_ids(tx, "turns", t.group_turns)
            for thread_id in t.private_threads:
                await tx.execute("DELETE FROM turns WHERE thread_id = ?", (thread_id,))
                await tx.execute("DELETE FROM episodes WHERE thread_id = ?", (thread_id,))
                await tx.execute("DELETE FROM rounds WHERE thread_id = ?", (thread_id,))
            await tx.execute("DELETE FROM prompt_records WHERE user_id = ?", (user_id,))
            await self._drop_prompt_records_showing(
                tx, {f"fact:{i}" for i in t.fact_ids} | {f"episode:{i}" for i in t.episode_ids}
                | {f"round:{i}" for i in t.round_ids})
            await tx.execute("DELETE FROM fact_candidates WHERE user_id = ?", (user_id,))
            await tx.execute(
                "INSERT INTO audit_log (at, user_id, action, count) VALUES (?, ?, 'forget_all', ?)",
                (_ts(now), user_id, len(t.fact_ids) + len(t.episode_ids) + len(t.round_ids)),
            )
            keys = (tuple(f"fact:{i}" for i in t.fact_ids)
                    + tuple(f"episode:{i}" for i in t.episode_ids)
                    + tuple(f"round:{i}" for i in t.round_ids))
            purge_id = await self._record_purge(tx, user_id, keys, (), now)
        return ForgetResult(len(t.fact_ids), len(t.episode_ids), len(t.round_ids), t.turn_count,
                            keys, purge_id=purge_id)

    @staticmethod
    async def _delete_ids(tx: aiosqlite.Connection, table: str, ids: Sequence[int]) -> None:
        for start in range(0, len(ids), 500):
            chunk = list(ids[start:start + 500])
            marks = ",".join("?" * len(chunk))
            await tx.execute(f"DELETE FROM {table} WHERE id IN ({marks})", chunk)

    @staticmethod
    async def _record_purge(tx: aiosqlite.Connection, user_id: int, keys: Sequence[str],
                            resummarise: Sequence[int], now: datetime) -> int:
        """Record, in the deletion's transaction, what its purge must still do (ids only)."""
        cur = await tx.execute(
            "INSERT INTO purges (user_id, index_keys, resummarise, created_at) VALUES (?,?,?,?)",
            (user_id, json.dumps(list(keys)), json.dumps(list(resummarise)), _ts(now)))
        return cur.lastrowid

    async def pending_purges(self) -> list[PurgeRow]:
        """Deletions whose purge from disk did not finish (the process stopped in between),
        oldest first; start-up finishes them before taking input."""
        rows = await self._all("SELECT * FROM purges ORDER BY id")
        return [PurgeRow(r["id"], r["user_id"], tuple(json.loads(r["index_keys"])),
                         tuple(json.loads(r["resummarise"]))) for r in rows]

    async def purge_done(self, purge_id: int) -> None:
        """Remove a purge record once every step of its purge is done."""
        await self._run_statements([("DELETE FROM purges WHERE id = ?", (purge_id,))])

    async def purge_free_space(self) -> None:
        """Make deletions physical: checkpoint and truncate the WAL (pages are already zeroed
        by ``secure_delete``)."""
        await self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # ----------------------------------------------------------------- prompt records, index rows

    async def save_prompt_record(self, record: PromptRecord) -> None:
        """Keep what the model saw for the user's last reply in this thread (for ``/why``)."""
        await self._run_statements([_prompt_record_sql(record)])

    async def record_reply(self, *, usage: UsageEntry | None,
                           prompt_record: PromptRecord | None) -> None:
        """The usage and ``/why`` record of a reply that stored no turn, in one transaction."""
        await self._run_statements(
            ([_usage_sql(usage)] if usage is not None else [])
            + ([_prompt_record_sql(prompt_record)] if prompt_record is not None else []))

    async def _replies_recalling(self, user_id: int, keys: Iterable[str]) -> list[int]:
        """Assistant turns, in threads where the user spoke, whose prompt recalled one of
        ``keys`` (replies derived from those items)."""
        wanted = set(keys)
        if not wanted:
            return []
        rows = await self._all(
            "SELECT id, recalled FROM turns WHERE role = 'assistant' AND recalled IS NOT NULL "
            "AND recalled != '' AND thread_id IN (SELECT DISTINCT thread_id FROM turns WHERE "
            "user_id = ?)", (user_id,))
        return sorted(r["id"] for r in rows if wanted & set(r["recalled"].split()))

    async def _drop_prompt_records_showing(self, tx, keys: Iterable[str]) -> None:
        """Delete every ``/why`` record (of any user) that shows one of ``keys``: it holds the
        item's text."""
        wanted = set(keys)
        if not wanted:
            return
        for r in await self._all("SELECT thread_id, user_id, payload FROM prompt_records"):
            if wanted & {i.get("key") for i in json.loads(r["payload"]).get("items", [])}:
                await tx.execute("DELETE FROM prompt_records WHERE thread_id = ? AND "
                                 "user_id = ?", (r["thread_id"], r["user_id"]))

    async def _run_statements(self, statements: Sequence[Statement]) -> None:
        """Run statements that touch no turn and no session in one write transaction."""
        if statements:
            async with self._write(hot=()) as run:
                await run(_execute_all, tuple(statements))

    async def load_prompt_record(self, thread_id: int, user_id: int) -> dict | None:
        """Return the last prompt record of a user in a thread, or None."""
        row = await self._one(
            "SELECT payload FROM prompt_records WHERE thread_id = ? AND user_id = ?",
            (thread_id, user_id),
        )
        return json.loads(row["payload"]) if row else None

    async def all_facts(self) -> list[tuple[Fact, Scope]]:
        """Every fact with its scope (for reindexing)."""
        rows = await self._all("SELECT * FROM facts ORDER BY id")
        return [(self._fact(r), Scope.parse(r["scope"])) for r in rows]

    async def all_episodes(self) -> list[Episode]:
        """Every episode (for reindexing)."""
        return [self._episode(r) for r in await self._all("SELECT * FROM episodes ORDER BY id")]

    async def all_rounds(self) -> list[Round]:
        """Every round (for reindexing)."""
        return [self._round(r) for r in await self._all("SELECT * FROM rounds ORDER BY id")]

    async def count_rows(self, table: str) -> int:
        """Number of rows in one of the store's tables (for checks and reports)."""
        if table not in {"users", "threads", "sessions", "turns", "episodes", "rounds", "facts",
                         "work", "audit_log"}:
            raise StoreError(f"unknown table {table}")
        row = await self._one(f"SELECT count(*) AS n FROM {table}")
        return row["n"]

    # ----------------------------------------------------------------- life cycle

    async def open_sessions(self) -> list[SessionRow]:
        """Every open session, oldest last turn first (start-up rebuild of the idle jobs)."""
        rows = await self._all(
            "SELECT * FROM sessions WHERE closed_at IS NULL ORDER BY last_turn_at, id")
        return [self._session(r) for r in rows]

    async def close_session_if_idle(self, session_id: int, *, last_turn_before: datetime,
                                    at: datetime, reason: str = "idle") -> bool:
        """Close a session only if it is still open and its last turn is at or before
        ``last_turn_before`` (``now - IDLE_TIMEOUT_SECONDS``, see ``memory.lifecycle``), and
        record its consolidation job, in one transaction: a turn stored meanwhile keeps it open.

        Returns:
            True when this call closed it.
        """
        async with self._tx(hot=(session_id,)) as tx:
            cur = await tx.execute(
                "UPDATE sessions SET closed_at = ?, close_reason = ? "
                "WHERE id = ? AND closed_at IS NULL AND last_turn_at <= ?",
                (_ts(at), reason, session_id, _ts(last_turn_before)),
            )
            if cur.rowcount == 0:
                return False
            await tx.execute(
                "INSERT OR IGNORE INTO work (kind, session_id, created_at) VALUES ('close', ?, ?)",
                (session_id, _ts(at)),
            )
        log.info("session closed id=%s reason=%s", session_id, reason)
        return True

    async def stale_facts(self, cutoff: datetime) -> list[Fact]:
        """Active facts neither confirmed nor recalled after ``cutoff`` (expiry candidates;
        the policy is ``memory.lifecycle.facts_to_archive``), oldest first."""
        rows = await self._all(
            "SELECT * FROM facts WHERE status = 'active' AND last_confirmed_at <= ? "
            "AND (last_recalled_at IS NULL OR last_recalled_at <= ?) ORDER BY id",
            (_ts(cutoff), _ts(cutoff)),
        )
        return [self._fact(r) for r in rows]

    async def archive_facts(self, fact_ids: Sequence[int], *, cutoff: datetime,
                            now: datetime) -> list[tuple[Fact, Scope]]:
        """Set status ``archived`` on these facts if they are still active and still unused
        since ``cutoff`` (a recall meanwhile keeps a fact active); ``valid_to`` stays unset
        (an unused fact is not untrue). One audit row per user.

        Returns:
            The archived facts with their scopes (for their index rows).
        """
        if not fact_ids:
            return []
        archived: list[tuple[Fact, Scope]] = []
        async with self._tx() as tx:
            for start in range(0, len(fact_ids), 500):
                chunk = list(fact_ids[start:start + 500])
                marks = ",".join("?" * len(chunk))
                where = (f"id IN ({marks}) AND status = 'active' AND last_confirmed_at <= ? "
                         "AND (last_recalled_at IS NULL OR last_recalled_at <= ?)")
                args = (*chunk, _ts(cutoff), _ts(cutoff))
                ids = [r["id"] for r in await self._all(f"SELECT id FROM facts WHERE {where}",
                                                         args)]
                if not ids:
                    continue
                idmarks = ",".join("?" * len(ids))
                await tx.execute(f"UPDATE facts SET status = 'archived' WHERE id IN ({idmarks})",
                                 ids)
                rows = await self._all(f"SELECT * FROM facts WHERE id IN ({idmarks})", ids)
                archived += [(self._fact(r), Scope.parse(r["scope"])) for r in rows]
            per_user: dict[int, int] = {}
            for fact, _ in archived:
                per_user[fact.user_id] = per_user.get(fact.user_id, 0) + 1
            for user_id, count in sorted(per_user.items()):
                await tx.execute(
                    "INSERT INTO audit_log (at, user_id, action, count) "
                    "VALUES (?, ?, 'archive_facts', ?)", (_ts(now), user_id, count))
        return archived

    async def delete_consolidated_turns(self, cutoff: datetime, now: datetime) -> ForgetResult:
        """Retention: delete turns created before ``cutoff`` in closed sessions whose
        consolidation is done, with every round holding one of them, in one transaction.
        Episodes stay (their summaries remain recallable; the deleted rounds do not).

        Returns:
            Counts of rounds and turns removed and the rounds' index keys.
        """
        async with self._tx() as tx:
            rows = await self._all(
                "SELECT t.id, t.session_id FROM turns t JOIN sessions s ON s.id = t.session_id "
                "JOIN work w ON w.session_id = s.id AND w.kind = 'close' "
                "WHERE s.closed_at IS NOT NULL AND w.done_at IS NOT NULL AND t.created_at < ?",
                (_ts(cutoff),),
            )
            if not rows:
                return ForgetResult(0, 0, 0, 0, ())
            turn_ids = {r["id"] for r in rows}
            sessions = sorted({r["session_id"] for r in rows})
            round_ids: list[int] = []
            for start in range(0, len(sessions), 500):
                chunk = sessions[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for r in await self._all(
                        f"SELECT id, turn_ids FROM rounds WHERE session_id IN ({marks})", chunk):
                    if turn_ids & set(_ids(r["turn_ids"])):
                        round_ids.append(r["id"])
            await self._delete_ids(tx, "rounds", sorted(round_ids))
            await self._delete_ids(tx, "turns", sorted(turn_ids))
            await tx.execute(
                "INSERT INTO audit_log (at, user_id, action, count) "
                "VALUES (?, NULL, 'retention', ?)", (_ts(now), len(turn_ids)))
        keys = tuple(f"round:{i}" for i in sorted(round_ids))
        return ForgetResult(0, 0, len(round_ids), len(turn_ids), keys)

    async def optimize(self) -> None:
        """Let SQLite refresh its query-planner statistics (``PRAGMA optimize``), outside any
        other write transaction of this connection."""
        async with self._lock:
            await self._conn.execute("PRAGMA optimize")

    # ----------------------------------------------------------------- model usage

    async def add_model_usage(self, entry: UsageEntry) -> None:
        """Add one model call to a user's totals for its day (``YYYY-MM-DD``, UTC) and model.

        ``cost_usd`` is None when the model has no known price; a row's cost is the sum over its
        calls whose price was known (None while there was none).
        """
        await self._run_statements([_usage_sql(entry)])

    async def model_usage(self, user_id: int, *, since_day: str | None = None) -> list[UsageRow]:
        """A user's model usage per day and model, newest day first (from ``since_day``,
        inclusive, when given)."""
        sql = "SELECT * FROM model_usage WHERE user_id = ?"
        args: list = [user_id]
        if since_day is not None:
            sql += " AND day >= ?"
            args.append(since_day)
        rows = await self._all(sql + " ORDER BY day DESC, model", args)
        return [UsageRow(day=r["day"], model=r["model"], calls=r["calls"],
                         input_tokens=r["input_tokens"], output_tokens=r["output_tokens"],
                         cache_creation_input_tokens=r["cache_creation_input_tokens"],
                         cache_read_input_tokens=r["cache_read_input_tokens"],
                         cost_usd=r["cost_usd"]) for r in rows]

    # ----------------------------------------------------------------- chat platforms

    async def receive_updates(self, platform: str, updates: Sequence[tuple[str, str]],
                              now: datetime) -> None:
        """Keep received platform updates, ``(update key, payload JSON)``, until they are
        handled (:meth:`mark_update_handled`, or in the transaction of the turn one carried),
        in one transaction: written before the platform is told they arrived, so an update
        received but not yet handled when the process stops is handled at the next start
        (:meth:`received_updates`). Updates already known (received or handled) are left as
        they are."""
        if not updates:
            return
        async with self._tx(hot=()) as tx:
            await tx.executemany(
                "INSERT OR IGNORE INTO seen_updates (platform, update_id, seen_at, payload) "
                "VALUES (?,?,?,?)", [(platform, key, _ts(now), payload)
                                     for key, payload in updates])

    async def update_state(self, platform: str, update_key: str) -> str | None:
        """``handled``, ``received`` (kept, not yet handled) or None (never seen)."""
        row = await self._one("SELECT payload IS NULL AS done FROM seen_updates "
                              "WHERE platform = ? AND update_id = ?", (platform, update_key))
        if row is None:
            return None
        return "handled" if row["done"] else "received"

    async def received_updates(self, platform: str, prefix: str = "") -> list[tuple[str, str]]:
        """Updates received but never handled, ``(update key, payload JSON)``, in the order
        they were received; ``prefix`` narrows the keys (one bot's updates)."""
        rows = await self._all(
            "SELECT update_id, payload FROM seen_updates WHERE platform = ? AND payload IS NOT "
            "NULL AND substr(update_id, 1, ?) = ? ORDER BY rowid", (platform, len(prefix), prefix))
        return [(r["update_id"], r["payload"]) for r in rows]

    async def mark_update_handled(self, platform: str, update_key: str, now: datetime) -> None:
        """Mark an update handled (its payload dropped)."""
        await self._run_statements([_handled_sql(HandledUpdate(platform, update_key, now))])

    async def mark_update_seen(self, platform: str, update_id: str, now: datetime) -> bool:
        """Record a platform update as handled. Returns False when it was seen before (a
        redelivery, also across a restart), True the first time."""
        async with self._tx() as tx:
            cur = await tx.execute(
                "INSERT OR IGNORE INTO seen_updates (platform, update_id, seen_at) VALUES (?,?,?)",
                (platform, update_id, _ts(now)))
        return cur.rowcount == 1

    # replies due: a user turn stays due from its own transaction until its answer is delivered

    async def reply_delivered(self, key: ThreadKey, platform_message_id: str) -> None:
        """The answer to the user turn with this platform message id was delivered."""
        await self._run_statements([(
            "DELETE FROM replies_due WHERE turn_id IN (SELECT t.id FROM turns t JOIN threads th "
            "ON th.id = t.thread_id WHERE th.platform = ? AND th.chat_id = ? AND th.topic_id = ?"
            " AND t.platform_message_id = ? AND t.role = 'user')",
            (key.platform, key.chat_id, key.thread_id or "", platform_message_id))])

    async def due_messages(self, platform: str) -> list[IncomingMessage]:
        """The user turns of ``platform`` whose answer is still due, oldest first, as the
        messages that carried them."""
        rows = await self._all(
            "SELECT t.text, t.created_at, t.platform_message_id, t.speaker, th.platform, "
            "th.chat_id, th.topic_id, th.chat_kind, th.title, a.platform_user_id "
            "FROM replies_due d JOIN turns t ON t.id = d.turn_id "
            "JOIN threads th ON th.id = t.thread_id "
            "JOIN accounts a ON a.user_id = t.user_id AND a.platform = th.platform "
            "WHERE th.platform = ? ORDER BY t.id", (platform,))
        return [IncomingMessage(
            thread=ThreadKey(r["platform"], r["chat_id"], r["topic_id"] or None),
            chat_kind=ChatKind(r["chat_kind"]), platform_user_id=r["platform_user_id"],
            display_name=r["speaker"] or r["platform_user_id"], text=r["text"],
            sent_at=_dt(r["created_at"]), platform_message_id=r["platform_message_id"],
            chat_title=r["title"]) for r in rows]

    async def due_turn(self, thread_id: int, platform_message_id: str | None
                       ) -> tuple[Turn | None, str | None]:
        """The due user turn with this platform message id in the thread, and the text of
        the answer stored after it in its session (None when none was stored); ``(None,
        None)`` when no such turn is due."""
        row = await self._one(
            "SELECT t.* FROM replies_due d JOIN turns t ON t.id = d.turn_id "
            "WHERE d.thread_id = ? AND t.platform_message_id = ?", (thread_id, platform_message_id))
        if row is None:
            return None, None
        turn = self._turn(row)
        after = await self._one(
            "SELECT role, text FROM turns WHERE session_id = ? AND id > ? ORDER BY id LIMIT 1",
            (turn.session_id, turn.id))
        answered = after is not None and after["role"] == Role.ASSISTANT.value
        return turn, after["text"] if answered else None

    async def turn_has_memory(self, turn_id: int) -> bool:
        """Whether a fact or a fact candidate was drawn from this turn (semantic memory saw
        it)."""
        row = await self._one(
            "SELECT EXISTS (SELECT 1 FROM fact_candidates WHERE turn_id = ?) OR EXISTS ("
            "SELECT 1 FROM facts, json_each(facts.source_turn_ids) j WHERE j.value = ?) AS seen",
            (turn_id, turn_id))
        return bool(row["seen"])

    async def prune_seen_updates(self, before: datetime) -> int:
        """Forget handled-update records older than ``before``. Returns the rows removed."""
        async with self._tx() as tx:
            cur = await tx.execute("DELETE FROM seen_updates WHERE seen_at < ?", (_ts(before),))
        return cur.rowcount

    async def set_account_blocked(self, platform: str, platform_user_id: str,
                                  at: datetime | None) -> None:
        """Mark a platform account as having blocked the bot (``at``), or clear the mark
        (None). Unknown accounts are ignored."""
        async with self._tx() as tx:
            await tx.execute(
                "UPDATE accounts SET blocked_at = ? WHERE platform = ? AND platform_user_id = ?",
                (_ts(at) if at is not None else None, platform, platform_user_id))

    async def blocked_accounts(self, platform: str) -> set[str]:
        """Platform user ids of the accounts currently marked as having blocked the bot."""
        rows = await self._all(
            "SELECT platform_user_id FROM accounts WHERE platform = ? AND blocked_at IS NOT NULL",
            (platform,))
        return {r["platform_user_id"] for r in rows}

    async def edit_user_turn(self, thread_id: int, platform_message_id: str, text: str,
                             now: datetime) -> tuple[Turn, Turn] | None:
        """Replace the text of the user turn with this platform message id in the thread (an
        edited message); open fact candidates drawn from it are consumed, in the same
        transaction.

        Returns:
            ``(before, after)``, or None when no such user turn is stored.
        """
        async with self._tx() as tx:
            row = await self._one(
                "SELECT * FROM turns WHERE thread_id = ? AND platform_message_id = ? "
                "AND role = 'user'", (thread_id, platform_message_id))
            if row is None:
                return None
            await tx.execute("UPDATE turns SET text = ? WHERE id = ?", (text, row["id"]))
            await tx.execute(
                "UPDATE fact_candidates SET consumed_at = ? WHERE turn_id = ? "
                "AND consumed_at IS NULL", (_ts(now), row["id"]))
        before = self._turn(row)
        after = await self.get_turns([row["id"]])
        return before, after[0]

    async def drop_derived_from_edit(self, user_id: int, turn_id: int, old_terms: set[str],
                                     now: datetime, *, fact_ids: Sequence[int] = (),
                                     round_text: Callable[[list[Turn]], str]) -> EditCascade:
        """After an edit of turn ``turn_id``: delete what was derived from its old text and
        say what to rebuild, in one transaction with a purge record (:meth:`pending_purges`).

        Deleted: the replies to the turn and in the rounds holding it, and the replies whose prompt
        recalled those rounds or the episodes citing the turn, when they contain one of
        ``old_terms`` (words of the old text the new one lacks: they quoted it); the episodes
        citing the turn or such a reply (a running episode's session is set to be folded again
        from its first turn); the facts ``fact_ids`` (stated only by the old text); ``/why``
        records showing any of these items. The rounds holding the turn are rewritten from
        the turns they still hold (``round_text`` renders them).

        Returns:
            The rewritten rounds, the index keys to delete (deleted items, and the rewritten
            rounds: their rows hold the old text until written again), the closed sessions to
            summarise again, and the purge record's id.
        """
        async with self._tx() as tx:
            round_ids = await self._rounds_with_turns([turn_id])
            citing = await self._episodes_citing([turn_id])
            keys = {f"round:{i}" for i in round_ids} | {f"episode:{e.id}" for e in citing}
            rounds = await self._by_ids("rounds", round_ids, self._round)
            answers = []  # the replies to the turn, also before a round holds them
            for r in await self._all(
                    "SELECT id, role FROM turns WHERE session_id = (SELECT session_id FROM "
                    "turns WHERE id = ?) AND id > ? ORDER BY id", (turn_id, turn_id)):
                if r["role"] != "assistant":
                    break
                answers.append(r["id"])
            candidates = ({t for r in rounds for t in r.turn_ids} - {turn_id}) | set(
                answers) | set(await self._replies_recalling(user_id, keys))
            quoting = [t.id for t in await self.get_turns(sorted(candidates))
                       if t.role is Role.ASSISTANT
                       and any(term in t.text.lower() for term in old_terms)]
            if quoting:
                round_ids = sorted(set(round_ids) | set(await self._rounds_with_turns(quoting)))
                rounds = await self._by_ids("rounds", round_ids, self._round)
                citing = await self._episodes_citing([turn_id, *quoting])
            await self._delete_ids(tx, "turns", quoting)
            rebuild = {r.id: tuple(t for t in r.turn_ids if t not in quoting) for r in rounds}
            emptied = [i for i, turns in rebuild.items() if not turns]
            await self._delete_ids(tx, "rounds", emptied)
            await self._delete_ids(tx, "facts", list(fact_ids))
            for round_id, kept in rebuild.items():
                if kept:
                    await tx.execute("UPDATE rounds SET turn_ids = ?, text = ? WHERE id = ?",
                                     (json.dumps(list(kept)),
                                      round_text(await self.get_turns(kept)), round_id))
            await self._delete_ids(tx, "episodes", [e.id for e in citing])
            for e in citing:
                if e.status != "closed":  # the running episode is folded again from scratch
                    await tx.execute("UPDATE sessions SET folded_through = 0 WHERE id = ?",
                                     (e.session_id,))
            await self._drop_prompt_records_showing(
                tx, {f"round:{i}" for i in round_ids} | {f"episode:{e.id}" for e in citing})
            gone = (tuple(f"round:{i}" for i in round_ids)
                    + tuple(f"episode:{e.id}" for e in citing)
                    + tuple(f"fact:{i}" for i in fact_ids))
            resummarise = tuple(e.session_id for e in citing if e.status == "closed")
            purge_id = await self._record_purge(tx, user_id, gone, resummarise, now)
        kept = [i for i, turns in rebuild.items() if turns]
        return EditCascade(tuple(kept), gone, resummarise, purge_id, len(quoting))

    # ----------------------------------------------------------------- bulk load

    BULK_TABLES = ("users", "accounts", "threads", "sessions", "turns", "episodes", "rounds",
                   "facts", "work")

    async def insert_many(self, table: str, columns: Sequence[str],
                          rows: Iterable[Sequence]) -> int:
        """Insert many rows into one table in one transaction (``executemany``): seeding
        benchmark stores. Values are stored as given (timestamps as ``_ts`` text, id lists as
        JSON); no policy runs.

        Returns:
            The number of rows inserted.

        Raises:
            StoreError: ``table`` or a column name is not allowed.
        """
        if table not in self.BULK_TABLES or not all(c.isidentifier() for c in columns):
            raise StoreError(f"bulk insert into {table}({', '.join(columns)}) is not allowed")
        rows = list(rows)
        sql = (f"INSERT INTO {table} ({', '.join(columns)}) "
               f"VALUES ({', '.join('?' * len(columns))})")
        async with self._tx() as tx:
            await tx.executemany(sql, rows)
        return len(rows)

    # ----------------------------------------------------------------- export / import

    async def user_rows(self, user_id: int) -> dict[str, list[dict]]:
        """Every stored row about one user, as plain dicts of column values (export).

        Returns ``users`` and ``accounts`` (the user's), ``facts`` (every status),
        ``threads`` (the user's private threads, the groups they spoke in, facts' origins),
        ``turns`` (both sides of their private threads, their own turns in groups),
        ``sessions`` (those the turns and episodes belong to), ``episodes`` and ``rounds`` of
        their private scope. Group episodes and rounds belong to the group and are not included.
        """
        scope = str(Scope.private(user_id))
        out: dict[str, list[dict]] = {}

        async def rows(sql: str, args: Sequence = ()) -> list[dict]:
            return [dict(r) for r in await self._all(sql, args)]

        out["users"] = await rows("SELECT * FROM users WHERE id = ?", (user_id,))
        out["accounts"] = await rows("SELECT platform, platform_user_id FROM accounts "
                                     "WHERE user_id = ? ORDER BY platform", (user_id,))
        out["facts"] = await rows("SELECT * FROM facts WHERE user_id = ? ORDER BY id", (user_id,))
        private = [r["id"] for r in await self._all(
            "SELECT DISTINCT t.id FROM threads t JOIN turns u ON u.thread_id = t.id "
            "WHERE t.chat_kind = 'private' AND u.user_id = ? UNION SELECT thread_id FROM "
            "episodes WHERE scope = ?", (user_id, scope))]
        marks = ",".join("?" * len(private)) or "NULL"
        out["turns"] = await rows(
            f"SELECT * FROM turns WHERE thread_id IN ({marks}) OR user_id = ? ORDER BY id",
            (*private, user_id))
        out["episodes"] = await rows("SELECT * FROM episodes WHERE scope = ? ORDER BY id",
                                     (scope,))
        out["rounds"] = await rows("SELECT * FROM rounds WHERE scope = ? ORDER BY id", (scope,))
        session_ids = sorted({r["session_id"] for k in ("turns", "episodes", "rounds")
                              for r in out[k]})
        out["sessions"] = [dict(r) for r in await self._by_ids("sessions", session_ids,
                                                               lambda r: r)]
        thread_ids = sorted(set(private) | {r["thread_id"] for r in out["turns"]}
                            | {r["origin_thread_id"] for r in out["facts"]})
        out["threads"] = [dict(r) for r in await self._by_ids("threads", thread_ids, lambda r: r)]
        return out

    async def _columns(self, table: str) -> list[str]:
        return [r["name"] for r in await self._all(f"PRAGMA table_info({table})")]

    async def load_user_rows(self, rows: dict[str, list[dict]], now: datetime) -> int:
        """Insert the rows of :meth:`user_rows` (from another database) as a new user, in one
        transaction, with fresh ids; references (thread, session, turn ids, scopes) are mapped.
        Threads are matched by key; open sessions are stored closed (reason ``import``).

        Returns:
            The new user's id.

        Raises:
            StoreError: one of the accounts already belongs to a user here, or one of the
                document's private chats is another user's chat here (nothing is written).
        """
        for acc in rows["accounts"]:
            if await self.find_user(acc["platform"], acc["platform_user_id"]) is not None:
                raise StoreError(f"account {acc['platform']}:{acc['platform_user_id']} exists")
        cols = {t: set(await self._columns(t)) for t in
                ("users", "threads", "sessions", "turns", "episodes", "rounds", "facts")}
        (old_user,) = rows["users"]

        async def insert(tx, table: str, row: dict) -> int:
            keep = {k: v for k, v in row.items() if k in cols[table] and k != "id"}
            cur = await tx.execute(
                f"INSERT INTO {table} ({', '.join(keep)}) VALUES ({', '.join('?' * len(keep))})",
                list(keep.values()))
            return cur.lastrowid

        def remap_ids(value: str, mapping: dict[int, int]) -> str:
            return json.dumps([mapping[i] for i in json.loads(value) if i in mapping])

        async with self._tx() as tx:
            uid = await insert(tx, "users", old_user)
            for acc in rows["accounts"]:
                await tx.execute("INSERT INTO accounts (platform, platform_user_id, user_id) "
                                 "VALUES (?, ?, ?)", (acc["platform"], acc["platform_user_id"], uid))
            threads: dict[int, int] = {}
            for t in rows["threads"]:
                await tx.execute(
                    "INSERT OR IGNORE INTO threads (platform, chat_id, topic_id, chat_kind, title, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (t["platform"], t["chat_id"], t["topic_id"], t["chat_kind"], t["title"],
                     t["created_at"]))
                cur = await tx.execute(
                    "SELECT id FROM threads WHERE platform = ? AND chat_id = ? AND topic_id = ?",
                    (t["platform"], t["chat_id"], t["topic_id"]))
                threads[t["id"]] = (await cur.fetchone())["id"]
                if t["chat_kind"] == "private":  # a private chat here is someone else's
                    cur = await tx.execute(
                        "SELECT 1 FROM turns WHERE thread_id = ? AND user_id IS NOT NULL LIMIT 1",
                        (threads[t["id"]],))
                    if await cur.fetchone() is not None:
                        raise StoreError(f"the private chat {t['platform']}:{t['chat_id']} belongs "
                                         "to another user here")

            def scope(value: str) -> str:
                try:
                    old = Scope.parse(value)
                except ValueError:
                    return value
                if old.is_private and old.id == old_user["id"]:
                    return str(Scope.private(uid))
                if not old.is_private and old.id in threads:
                    return str(Scope.group(threads[old.id]))
                return value

            sessions: dict[int, int] = {}
            for s in rows["sessions"]:
                s = {**s, "thread_id": threads[s["thread_id"]]}
                if s.get("closed_at") is None:
                    s.update(closed_at=_ts(now), close_reason="import")
                sessions[s.pop("id")] = await insert(tx, "sessions", s)
            turns: dict[int, int] = {}
            for t in rows["turns"]:
                user = uid if t.get("user_id") == old_user["id"] else None
                turns[t["id"]] = await insert(tx, "turns", {
                    **t, "thread_id": threads[t["thread_id"]],
                    "session_id": sessions[t["session_id"]], "user_id": user})
            for table in ("episodes", "rounds"):
                for r in rows[table]:
                    await insert(tx, table, {
                        **r, "thread_id": threads[r["thread_id"]],
                        "session_id": sessions[r["session_id"]], "scope": scope(r["scope"]),
                        "turn_ids": remap_ids(r["turn_ids"], turns)})
            for f in rows["facts"]:
                await insert(tx, "facts", {
                    **f, "user_id": uid, "origin_thread_id": threads[f["origin_thread_id"]],
                    "scope": scope(f["scope"]),
                    "source_turn_ids": remap_ids(f["source_turn_ids"], turns)})
            await tx.execute(
                "INSERT INTO audit_log (at, user_id, action, count) VALUES (?, ?, 'import', ?)",
                (_ts(now), uid, len(rows["facts"]) + len(rows["episodes"])))
        log.info("user imported id=%s facts=%d episodes=%d turns=%d", uid, len(rows["facts"]),
                 len(rows["episodes"]), len(rows["turns"]))
        return uid

    async def delete_user(self, user_id: int, now: datetime) -> None:
        """Remove a user row and its accounts (after :meth:`forget_all`; ``import --replace``).
        The audit log keeps that it happened, not what."""
        async with self._tx() as tx:
            await tx.execute("DELETE FROM accounts WHERE user_id = ?", (user_id,))
            await tx.execute("UPDATE turns SET user_id = NULL WHERE user_id = ?", (user_id,))
            await tx.execute("DELETE FROM users WHERE id = ?", (user_id,))
            await tx.execute(
                "INSERT INTO audit_log (at, user_id, action, count) VALUES (?, ?, 'delete_user', 1)",
                (_ts(now), user_id))

    async def mark_consent_noted(self, user_id: int, now: datetime) -> bool:
        """Record that the user was told facts are kept; True only the first time."""
        async with self._tx(hot=()) as tx:
            cur = await tx.execute(
                "UPDATE users SET consent_noted_at = ? WHERE id = ? AND consent_noted_at IS NULL",
                (_ts(now), user_id))
        return cur.rowcount == 1

    async def set_chat_memory(self, platform: str, chat_id: str, enabled: bool,
                              now: datetime) -> None:
        """Persist ``/memory_off chat`` / ``/memory_on chat`` for a whole group chat."""
        async with self._tx() as tx:
            await tx.execute(
                "INSERT INTO chat_settings (platform, chat_id, memory_enabled, changed_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (platform, chat_id) DO UPDATE SET "
                "memory_enabled = excluded.memory_enabled, changed_at = excluded.changed_at",
                (platform, chat_id, int(enabled), _ts(now)))

    async def chat_memory_enabled(self, platform: str, chat_id: str) -> bool:
        """False when a group chat's admins switched memory off for the whole chat."""
        row = await self._one("SELECT memory_enabled FROM chat_settings WHERE platform = ? AND "
                              "chat_id = ?", (platform, chat_id))
        return row is None or bool(row["memory_enabled"])

    async def _replies_quoting(self, user_id: int, texts: Sequence[str]) -> list[int]:
        """Assistant turns, in threads where the user spoke, that quote one of ``texts``
        (a reply that showed a recalled fact)."""
        out: set[int] = set()
        for text in texts:
            rows = await self._all(
                "SELECT id FROM turns WHERE role = 'assistant' AND instr(text, ?) > 0 AND "
                "thread_id IN (SELECT DISTINCT thread_id FROM turns WHERE user_id = ?)",
                (text, user_id))
            out |= {r["id"] for r in rows}
        return sorted(out)

    async def write_episode(self, session_id: int, scope: Scope, draft: EpisodeDraft, *,
                            started_at: datetime, ended_at: datetime, now: datetime) -> Episode:
        """Store a closed session's episode again (re-summarised after ``/forget N`` deleted
        turns it cited); the session must have none."""
        async with self._tx() as tx:
            sess = await self._one("SELECT thread_id FROM sessions WHERE id = ?", (session_id,))
            await tx.execute(
                "INSERT INTO episodes (thread_id, session_id, scope, summary, key_data, turn_ids,"
                " started_at, ended_at, created_at, goal, decisions, open_tasks, state,"
                " participants, status, folds) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,'closed',0)",
                (sess["thread_id"], session_id, str(scope), draft.summary,
                 json.dumps([[k.text, k.turn_id] for k in draft.key_data], ensure_ascii=False),
                 json.dumps(list(draft.turn_ids)), _ts(started_at), _ts(ended_at), _ts(now),
                 draft.goal, json.dumps(list(draft.decisions), ensure_ascii=False),
                 json.dumps(list(draft.open_tasks), ensure_ascii=False), draft.state,
                 json.dumps(list(draft.participants), ensure_ascii=False)))
        return self._episode(await self._one("SELECT * FROM episodes WHERE session_id = ?",
                                             (session_id,)))

    async def _episodes_citing(self, turn_ids: Iterable[int]) -> list[Episode]:
        """Episodes (running or closed) whose ``turn_ids`` include any of ``turn_ids``."""
        wanted = set(turn_ids)
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        rows = await self._all(
            f"SELECT DISTINCT e.* FROM episodes e JOIN turns t ON t.session_id = e.session_id "
            f"WHERE t.id IN ({marks})", list(wanted))
        return [e for e in (self._episode(r) for r in rows) if wanted & set(e.turn_ids)]

    # ----------------------------------------------------------------- reconcile by id

    async def indexed_ids(self) -> dict[str, list[int]]:
        """The ids of every fact, episode and round, ascending, keyed ``fact`` / ``episode`` /
        ``round`` (the index key prefixes). Start-up reconcile compares them with the index
        keys without building a row object (at 100,000 facts building them all took ~4 s and
        ~130 MB: docs/benchmarks.md)."""
        out: dict[str, list[int]] = {}
        for kind, table in (("fact", "facts"), ("episode", "episodes"), ("round", "rounds")):
            async with self._conn.execute(f"SELECT id FROM {table} ORDER BY id") as cur:
                out[kind] = [row[0] for row in await cur.fetchall()]
        return out

    async def facts_with_scope(self, ids: Iterable[int]) -> list[tuple[Fact, Scope]]:
        """Facts by id with their ``scope`` column, in id order (missing ids are left out):
        the rows ``all_facts`` would give for these ids."""
        ids = list(ids)
        out: list[tuple[Fact, Scope]] = []
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            rows = await self._all(f"SELECT * FROM facts WHERE id IN ({marks}) ORDER BY id",
                                   chunk)
            out.extend((self._fact(r), Scope.parse(r["scope"])) for r in rows)
        return out

    # ----------------------------------------------------------------- LLM consolidation

    async def _insert_fact(
        self, tx: aiosqlite.Connection, *, user_id: int, kind: str, text: str,
        topic: str | None, origin: ThreadRow, source_turn_ids: Sequence[int], lang: str,
        scope: Scope, now: datetime, valid_from: datetime | None = None, value: str | None = None,
        mode: str = "explicit", supersedes: Sequence[int] = (),
    ) -> int:
        """The one fact insert of every write path (``add_fact``, ``apply_fact_ops``) inside
        an open transaction; returns the new id. Superseded facts get ``valid_to = valid_from``.

        Raises:
            StoreError: the text is empty or longer than ``memory.facts.MAX_FACT_CHARS``.
        """
        from memory.facts import MAX_FACT_CHARS

        if not text.strip() or len(text) > MAX_FACT_CHARS:
            raise StoreError(f"fact text must be 1-{MAX_FACT_CHARS} characters, got {len(text)}")
        since = valid_from or now
        cur = await tx.execute(
            "INSERT INTO facts (user_id, kind, text, topic, status, created_at, valid_from,"
            " last_confirmed_at, origin_thread_id, origin_kind, origin_title, source_turn_ids,"
            " lang, scope, value, mode) VALUES (?,?,?,?,'active',?,?,?,?,?,?,?,?,?,?,?)",
            (user_id, kind, text, topic, _ts(now), _ts(since), _ts(now), origin.id,
             origin.chat_kind.value, origin.title, json.dumps(list(source_turn_ids)), lang,
             str(scope), value, mode),
        )
        for old_id in supersedes:
            await tx.execute(
                "UPDATE facts SET status = 'superseded', valid_to = ? WHERE id = ? AND "
                "user_id = ? AND status = 'active'", (_ts(since), old_id, user_id))
        return cur.lastrowid

    async def _confirm_in(self, tx: aiosqlite.Connection, fact_id: int, turn_id: int,
                          now: datetime) -> bool:
        """Confirm a fact inside an open transaction (see :meth:`confirm_fact`); False when the
        fact is gone."""
        row = await self._one("SELECT source_turn_ids FROM facts WHERE id = ?", (fact_id,))
        if row is None:
            return False
        sources = list(_ids(row["source_turn_ids"]))
        if turn_id not in sources:
            sources.append(turn_id)
        await tx.execute(
            "UPDATE facts SET last_confirmed_at = ?, confirmations = confirmations + 1,"
            " source_turn_ids = ? WHERE id = ?",
            (_ts(now), json.dumps(sources), fact_id),
        )
        return True

    async def _apply_fact_ops(self, tx: aiosqlite.Connection, ops: Sequence[FactOp],
                              now: datetime) -> list[int]:
        """Apply a language model's validated fact decisions inside the transaction of
        :meth:`complete_work` (all or nothing with the episode and the work's ``done_at``).

        ``add`` inserts a fact (``mode`` ``llm``) through :meth:`_insert_fact` (the length cap)
        and consumes the rules' repetition candidates of its source turn; ``supersede`` does
        the same and retires ``target_id``, but only while that fact is still active and the
        user's (a fact deleted or changed meanwhile is left alone and nothing is added);
        ``confirm`` bumps an active fact of the user.

        Returns:
            The ids of facts whose index rows must be rewritten (added and superseded ones).
        """
        changed: list[int] = []
        for op in ops:
            target = None
            if op.target_id is not None:
                target = await self._one(
                    "SELECT id FROM facts WHERE id = ? AND user_id = ? AND status = 'active'",
                    (op.target_id, op.user_id))
            if op.action == "confirm":
                if target is not None and await self._confirm_in(tx, op.target_id,
                                                                 op.source_turn_id, now):
                    log.info("fact confirmed id=%s (model)", op.target_id)
                continue
            if op.action == "supersede" and target is None:
                log.info("fact supersede skipped: id=%s no longer active", op.target_id)
                continue
            supersedes = [op.target_id] if op.action == "supersede" else []
            fact_id = await self._insert_fact(
                tx, user_id=op.user_id, kind=op.kind, text=op.text, topic=op.topic,
                origin=op.origin, source_turn_ids=[op.source_turn_id], lang=op.lang,
                scope=op.scope, now=now, valid_from=op.valid_from, mode="llm",
                supersedes=supersedes)
            await tx.execute(
                "UPDATE fact_candidates SET consumed_at = ? WHERE turn_id = ? AND "
                "consumed_at IS NULL", (_ts(now), op.source_turn_id))
            changed += [fact_id, *supersedes]
            log.info("fact %s id=%s user=%s kind=%s (model)",
                     "written" if not supersedes else "superseded", fact_id, op.user_id, op.kind)
        return changed

    async def candidate_turn_ids(self, turn_ids: Iterable[int]) -> set[int]:
        """Which of ``turn_ids`` the rules recorded as fact candidates (consumed or not): the
        turns that went through the semantic write policy and stated something possibly
        stable."""
        ids = list(turn_ids)
        found: set[int] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            rows = await self._all(
                f"SELECT DISTINCT turn_id FROM fact_candidates WHERE turn_id IN ({marks})", chunk)
            found |= {r["turn_id"] for r in rows}
        return found

    # ----------------------------------------------------------------- operator views

    async def prompt_records_of(self, user_id: int) -> list[dict]:
        """Every kept prompt record of one user (the last reply per thread, ``/why``), newest
        first: dicts with ``thread_id``, ``created_at`` (ISO text) and ``payload`` (decoded)."""
        rows = await self._all(
            "SELECT thread_id, created_at, payload FROM prompt_records WHERE user_id = ? "
            "ORDER BY created_at DESC", (user_id,))
        return [{"thread_id": r["thread_id"], "created_at": r["created_at"],
                 "payload": json.loads(r["payload"])} for r in rows]

    # ----------------------------------------------------------------- hot working memory

    async def working_turns(self, thread_id: int, limit: int
                            ) -> tuple[SessionRow | None, list[Turn]]:
        """The thread's open session and its newest ``limit`` turns, oldest first (``(None,
        [])`` when no session is open): :meth:`open_session` and :meth:`session_turns` in one
        call, answered from the hot cache (``memory/stores/hot.py``) when it holds them, read
        from SQLite and cached otherwise."""
        generation = self.hot.generation  # before both reads: the pair is cached only if
        session = await self.open_session(thread_id)  # no write ran during either
        if session is None:
            return None, []
        turns = self.hot.turns(thread_id, session.id, limit)
        if turns is not None:
            return session, turns
        turns = await self.session_turns(session.id, limit=limit)
        self.hot.put_turns(thread_id, session, turns, limit, generation)
        return session, turns


