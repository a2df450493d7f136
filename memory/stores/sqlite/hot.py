"""Hot working memory kept in process: each thread's open session and
its newest turns, so the reply path does not read them from SQLite again on every turn.

The cache belongs to one :class:`~memory.stores.sqlite.SQLiteStore` (the only writer of its
database: the data folder is locked by one process, ``bot.datadir``) and is kept exact, never
"eventually" right:

* every write transaction of the store invalidates it at its start and again at its end
  (and on failure): all of it by default, or only the entries of the sessions it names, or
  nothing for the few writes that touch no turn and no session (usage, ``/why`` records);
  ``add_turn`` updates the entry of its thread itself, inside its transaction;
* a read fills it only when no write transaction ran or was running while the read was in
  flight (a generation number moved by every write, plus a "writing" flag: the store's one
  connection sees its own uncommitted writes, which a rollback could take back).

So a ``/forget``, an edit, a fold, a close, ``/memory_off``, an import or any write added later
that does not say otherwise is never served from a stale entry.

Bounds: at most ``max_threads`` threads (least recently used leave first) and, per thread, the
newest ``max_turns`` turns of the open session.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import datetime
from memory.records import SessionRow
from memory.types import Turn

#: Threads kept (least recently used leave first). 256 threads of 60 short turns stay under
#: ~10 MB; the reply path of one thread needs one entry.
MAX_THREADS = 256
#: Newest turns kept per thread: the working-memory read asks for MAX_WORKING_MESSAGES x 3 (60).
MAX_TURNS = 64


@dataclass(slots=True)
class _Entry:
    session: SessionRow | None  # the thread's open session; None: no session is open
    turns: list[Turn] | None  # the newest turns of that session, oldest first; None: not read
    complete: bool  # ``turns`` holds every turn of the session


class HotTurns:
    """The per-thread cache (see the module docstring). Not thread-safe: one event loop.

    Attributes:
        generation: moved by every write transaction (start and end); a fill carries the
            generation read before its query and is dropped if it moved.
        hits, misses: lookups served from the cache, and those that went to SQLite.
    """

    def __init__(self, *, max_threads: int = MAX_THREADS, max_turns: int = MAX_TURNS) -> None:
        self.max_threads = max_threads
        self.max_turns = max_turns
        self.generation = 0
        self.hits = 0
        self.misses = 0
        self._writing = 0
        self._entries: OrderedDict[int, _Entry] = OrderedDict()

    # ----------------------------------------------------------------- write transactions

    def begin_write(self, sessions: Collection[int] | None) -> None:
        """A write transaction starts. ``sessions``: None = it may change any turn or session
        (drop everything); a collection of session ids = only those sessions' turns and rows
        (drop their threads' entries); empty = it changes no turn and no session."""
        self.generation += 1
        self._writing += 1
        self._invalidate(sessions)

    def end_write(self, sessions: Collection[int] | None, *, failed: bool = False) -> None:
        """The transaction committed (or, with ``failed``, rolled back or broke: drop all)."""
        self.generation += 1
        self._writing -= 1
        self._invalidate(None if failed else sessions)

    def _invalidate(self, sessions: Collection[int] | None) -> None:
        if sessions is None:
            self._entries.clear()
        elif sessions:
            for thread_id in [t for t, e in self._entries.items()
                              if e.session is not None and e.session.id in sessions]:
                del self._entries[thread_id]

    # ----------------------------------------------------------------- reads

    def session(self, thread_id: int) -> tuple[bool, SessionRow | None]:
        """``(known, session)``: whether the thread's open session is cached, and it (or
        None when the thread has no open session)."""
        entry = self._entries.get(thread_id)
        if entry is None:
            self.misses += 1
            return False, None
        self._entries.move_to_end(thread_id)
        self.hits += 1
        return True, entry.session

    def turns(self, thread_id: int, session_id: int, limit: int) -> list[Turn] | None:
        """The newest ``limit`` turns of the thread's open session ``session_id``, oldest
        first, or None when the cache cannot answer (a copy: callers may keep it)."""
        entry = self._entries.get(thread_id)
        if (entry is None or entry.session is None or entry.session.id != session_id
                or entry.turns is None or (len(entry.turns) < limit and not entry.complete)):
            self.misses += 1
            return None
        self._entries.move_to_end(thread_id)
        self.hits += 1
        if limit <= 0:
            return []
        return entry.turns[-limit:] if limit < len(entry.turns) else list(entry.turns)

    def can_fill(self, generation: int) -> bool:
        """Whether a read that started at ``generation`` may fill the cache now."""
        return generation == self.generation and not self._writing

    def put_session(self, thread_id: int, session: SessionRow | None, generation: int) -> None:
        """Fill the thread's open session read from SQLite at ``generation``."""
        if not self.can_fill(generation):
            return
        entry = self._entries.get(thread_id)
        if entry is not None and entry.session == session:
            return
        self._set(thread_id, _Entry(session, None, False))

    def put_turns(self, thread_id: int, session: SessionRow, turns: list[Turn], limit: int,
                  generation: int) -> None:
        """Fill the newest turns of ``session`` read from SQLite at ``generation`` with
        ``limit`` (fewer than ``limit`` rows: that is every turn of the session)."""
        if not self.can_fill(generation) or limit > self.max_turns:
            return
        self._set(thread_id, _Entry(session, list(turns), len(turns) < limit))

    def _set(self, thread_id: int, entry: _Entry) -> None:
        self._entries[thread_id] = entry
        self._entries.move_to_end(thread_id)
        while len(self._entries) > self.max_threads:
            self._entries.popitem(last=False)

    # ----------------------------------------------------------------- add_turn

    def turn_added(self, thread_id: int, turn: Turn, *, opened: SessionRow | None,
                   at: datetime) -> None:
        """``add_turn`` stored ``turn`` (inside its transaction, which names no session to
        invalidate). ``opened``: the session it opened, if it opened one; otherwise the
        thread's cached open session moves its ``last_turn_at`` as the store does."""
        if opened is not None:
            self._set(thread_id, _Entry(opened, [turn], True))
            return
        entry = self._entries.get(thread_id)
        if entry is None:
            return
        if entry.session is None or entry.session.id != turn.session_id:
            del self._entries[thread_id]  # not what the store wrote to: do not guess
            return
        if entry.session.last_turn_at is None or at > entry.session.last_turn_at:
            entry.session = replace(entry.session, last_turn_at=at)
        if entry.turns is not None:
            entry.turns.append(turn)
            if len(entry.turns) > self.max_turns:
                del entry.turns[0]
                entry.complete = False
