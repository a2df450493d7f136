"""Keeping a copied search index consistent with a copied database.

A backup copies SQLite (the source of truth) first and the LanceDB index second, so the index
copy may be a little newer or older than the database copy: it may hold rows for items the
database copy lacks, lack rows for items it has, or hold a row whose status or text changed in
between (a fact superseded or archived, a running episode folded). Start-up reconcile
(:meth:`memory.service.MemoryService.reconcile`) adds missing keys and removes extra ones, but
compares keys only; so the copy keeps only rows whose status and text equal what the database
copy says, and reconcile re-embeds whatever was left out. Vectors are a function of the text, so
an equal text means an equal vector for the same embedder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memory.indexing import episode_text
from memory.ports import Store

Expectations = dict[str, tuple[str, str]]
"""``{index key: (status, text)}`` as the index rows of a database should read."""


async def index_expectations(store: Store) -> Expectations:
    """The ``(status, text)`` every index row should have, by key, for the items in ``store``.

    Mirrors how :class:`memory.service.MemoryService` writes index rows: a fact's row carries its
    status and text, an episode's row is ``active`` with the episode rendered by
    ``memory.indexing.episode_text``, a round's row is ``active`` with the round's text
    (``tests/integration/test_backup.py`` checks a live index against this).
    """
    expected: Expectations = {}
    for fact, _scope in await store.facts.all_facts():
        expected[f"fact:{fact.id}"] = (fact.status.value, fact.text)
    for episode in await store.episodes.all_episodes():
        expected[f"episode:{episode.id}"] = ("active", episode_text(episode))
    for rnd in await store.episodes.all_rounds():
        expected[f"round:{rnd.id}"] = ("active", rnd.text)
    return expected


def matching_rows(expected: Expectations) -> Callable[[str, object], Sequence[bool]]:
    """A row filter for :func:`memory.stores.lance_copy.copy_tables`: keep a row when its
    ``(status, text)`` equals ``expected[key]`` (rows of unknown keys are dropped)."""

    def keep(_table: str, batch) -> list[bool]:
        keys = batch.column("key").to_pylist()
        statuses = batch.column("status").to_pylist()
        texts = batch.column("text").to_pylist()
        return [expected.get(k) == (s, t) for k, s, t in zip(keys, statuses, texts)]

    return keep
