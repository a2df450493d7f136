"""The in-memory store's tables: rows in the column form of :mod:`memory.stores.columns`, in
dicts keyed as the SQLite tables are (row id, or the table's primary key), and what a write
does to them all together.

A row is never changed in place: a write puts a new dict in its table, so that
:meth:`Tables.transaction` can take a snapshot with one shallow copy per table and restore it
when the write fails half-way. Methods run without awaiting, so a write is never interleaved
with another one on the event loop; ids are the largest id of the table plus one, as SQLite
gives a new row id without ``AUTOINCREMENT`` (a deleted last id is given again).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator

Row = dict


class Tables:
    """Every table of the store (see the module docstring).

    Attributes:
        users, threads, sessions, turns, episodes, rounds, facts, candidates, work, purges:
            ``{row id: row}``.
        accounts: ``{(platform, platform_user_id): row}``.
        prompt_records: ``{(thread_id, user_id): row}``.
        usage: ``{(user_id, day, model): row}``.
        seen_updates: ``{(platform, update key): row}`` in the order first received.
        replies_due: ``{turn_id: row}``.
        chat_settings: ``{(platform, chat_id): row}``.
        questions: ``{(thread_id, user_id): row}``.
        maintenance_runs: ``{day: row}``.
        audit: the audit log, oldest first.
    """

    NAMES = ("users", "accounts", "threads", "sessions", "turns", "episodes", "rounds", "facts",
             "candidates", "work", "purges", "prompt_records", "usage", "seen_updates",
             "replies_due", "chat_settings", "questions", "maintenance_runs",
             "audit")

    def __init__(self) -> None:
        for name in self.NAMES:
            setattr(self, name, [] if name == "audit" else {})

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Tables]:
        """All of a write or none of it: the tables as they were are restored when the block
        raises."""
        saved = {name: list(t) if isinstance(t := getattr(self, name), list) else dict(t)
                 for name in self.NAMES}
        try:
            yield self
        except BaseException:
            for name, table in saved.items():
                setattr(self, name, table)
            raise

    @staticmethod
    def new_id(table: dict) -> int:
        """The id a new row of ``table`` gets."""
        return max(table, default=0) + 1

    def insert(self, name: str, row: Row) -> int:
        """Add ``row`` (without ``id``) to the table ``name`` under a new id; returns it."""
        table = getattr(self, name)
        row_id = self.new_id(table)
        table[row_id] = {**row, "id": row_id}
        return row_id

    @staticmethod
    def update(table: dict, key, **changes) -> Row:
        """Replace a row by a copy with ``changes``; returns the new row."""
        table[key] = row = {**table[key], **changes}
        return row

    @staticmethod
    def where(table: dict, test: Callable[[Row], bool]) -> list[Row]:
        """The rows of ``table`` passing ``test``, in key order (row id order)."""
        return [row for _, row in sorted(table.items(), key=lambda kv: kv[0]) if test(row)]

    # ----------------------------------------------------------------- cascades

    def delete_turns(self, turn_ids: Iterable[int]) -> None:
        """Delete turns with what references them (SQLite's ``ON DELETE CASCADE``): their
        fact candidates and due replies."""
        gone = set(turn_ids) & self.turns.keys()
        if not gone:
            return
        for turn_id in gone:
            del self.turns[turn_id]
            self.replies_due.pop(turn_id, None)
        self.candidates = {k: r for k, r in self.candidates.items() if r["turn_id"] not in gone}

    def delete_rows(self, name: str, ids: Iterable[int]) -> None:
        """Delete rows of a table without dependants by id (missing ids ignored)."""
        table = getattr(self, name)
        for row_id in ids:
            table.pop(row_id, None)

    def delete_user_rows(self, user_id: int) -> None:
        """Delete a user with what references them (accounts, facts, candidates, usage,
        prompt records); their turns keep no user (``ON DELETE SET NULL``)."""
        self.users.pop(user_id, None)
        for name in ("accounts", "prompt_records", "usage", "questions"):
            table = getattr(self, name)
            setattr(self, name, {k: r for k, r in table.items() if r["user_id"] != user_id})
        self.facts = {k: r for k, r in self.facts.items() if r["user_id"] != user_id}
        self.candidates = {k: r for k, r in self.candidates.items() if r["user_id"] != user_id}
        for turn_id, row in list(self.turns.items()):
            if row["user_id"] == user_id:
                self.update(self.turns, turn_id, user_id=None)
