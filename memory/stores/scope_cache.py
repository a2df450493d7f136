"""In-process copies of the vectors of recently searched scopes, for the dense half of recall.

A LanceDB vector query costs 3-4 ms of CPU even when the speaker's scope holds twenty rows
(planning, the BTree prefilter on ``scope``, opening every fragment; more with small unfolded
fragments), and recall runs one per turn. With the scope's rows in memory the same exact
search is a matrix-vector product of microseconds. :class:`ScopeVectors` keeps the rows of the
most recently used scopes (keys, kinds, item ids, owners, statuses and the float32 vectors),
least recently used first out, within a byte budget; a scope too large for its share is not
kept (its searches stay with LanceDB).

Exact by construction, as the hot turn cache (``memory/stores/sqlite/hot.py``): every index write
drops the scopes it touches before anyone can read them again (:meth:`ScopeVectors.written`,
called by the index right after a commit), a delete drops everything and outdates fills in
flight, and a fill read before a write committed is never stored (:meth:`ScopeVectors.ticket`). Keys never move between scopes (a key is ``kind:id`` of a
row whose scope is fixed when it is created). The index process is the only writer (the data
folder's lock, ``bot/datadir.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from memory.ports import ScopeFilter

#: Default budget of :class:`ScopeVectors` in bytes (the arrays: 4 bytes per dimension and
#: ~30 per row): 4 MiB holds ~2,700 rows of 384-d vectors. In the benchmark's throughput job
#: (50 conversations over 200 users, 10,000 facts) the cache used 2.2 MiB; every MiB more is
#: a MiB more of peak memory at 100,000 facts (docs/benchmarks.md, third pass).
SCOPE_CACHE_BYTES = 4 << 20
#: One scope may take at most this fraction of the budget (1 MiB of 4: ~680 rows of 384-d
#: vectors, a chat user's first months): larger scopes stay with LanceDB's search, whose
#: reads do not pass every vector through Python.
SCOPE_SHARE = 4
_ROW_OVERHEAD = 32  # bytes per row besides the vector (ids, kind, owner text, status, norm)


_KINDS = ("fact", "episode", "round")


@dataclass(frozen=True, slots=True)
class ScopeRows:
    """One scope's rows as arrays, no Python object per row: ``kinds`` (uint8 codes into
    ``("fact", "episode", "round")``), ``item_ids`` (int64), ``owners`` (the owner's text as a
    fixed-width unicode array), ``active`` (bool: status ``active``), ``vectors`` (float32
    ``[n, dim]``) and their L2 ``norms``. A row's key is ``"<kind>:<item_id>"``
    (:class:`memory.types.IndexItem`)."""

    kinds: np.ndarray
    item_ids: np.ndarray
    owners: np.ndarray
    active: np.ndarray
    vectors: np.ndarray
    norms: np.ndarray

    def __len__(self) -> int:
        return len(self.item_ids)

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays, in bytes."""
        return int(self.kinds.nbytes + self.item_ids.nbytes + self.owners.nbytes
                   + self.active.nbytes + self.vectors.nbytes + self.norms.nbytes)

    @classmethod
    def from_columns(cls, kinds: Sequence[str], item_ids: Sequence[int], owners: Sequence[str],
                     statuses: Sequence[str], vectors: np.ndarray) -> "ScopeRows":
        """Build from column values (``vectors``: ``[n, dim]`` float32).

        Raises:
            ValueError: a kind other than fact, episode or round.
        """
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        codes = np.asarray([_KINDS.index(k) for k in kinds], dtype=np.uint8)
        return cls(codes, np.asarray(item_ids, dtype=np.int64),
                   np.asarray(list(owners) or [""], dtype=str)[:len(codes)],
                   np.asarray([s == "active" for s in statuses], dtype=bool), vectors,
                   np.linalg.norm(vectors, axis=1).astype(np.float32))

    def nearest(self, query: np.ndarray, where: ScopeFilter, limit: int
                ) -> list[tuple[str, str, int, float]]:
        """The ``limit`` rows nearest to ``query`` by cosine among those ``where`` lets through
        (the rows are all of ``where.scope``; facts also need ``owner == where.owner`` and,
        without ``include_history``, status ``active``: as ``LanceIndex._where``), best first,
        as ``(key, kind, item_id, cosine)``. Cosine as LanceDB's ``cosine`` distance computes
        it (``1 - distance``): ``a.q / (|a| |q|)``, 0 for a zero vector."""
        if len(self) == 0 or limit <= 0:
            return []
        not_fact = self.kinds != 0
        allowed = not_fact | (self.owners == where.owner)
        if not where.include_history:
            allowed &= not_fact | self.active
        rows = np.flatnonzero(allowed)
        if len(rows) == 0:
            return []
        qnorm = float(np.linalg.norm(query))
        denom = self.norms[rows] * qnorm
        dots = self.vectors[rows] @ query
        cos = np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)
        if len(rows) > limit:
            top = np.argpartition(-cos, limit - 1)[:limit]
        else:
            top = np.arange(len(rows))
        top = top[np.argsort(-cos[top], kind="stable")]
        out = []
        for i in top:
            kind, item_id = _KINDS[self.kinds[rows[i]]], int(self.item_ids[rows[i]])
            out.append((f"{kind}:{item_id}", kind, item_id, float(cos[i])))
        return out


class ScopeVectors:
    """The least-recently-used scopes' rows within ``max_bytes`` (see the module docstring).

    A scope needing more than ``max_bytes // SCOPE_SHARE`` is not kept.
    """

    def __init__(self, max_bytes: int = SCOPE_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._scopes: OrderedDict[str, ScopeRows] = OrderedDict()
        self._bytes = 0
        self._generation = 0  # bumped by deletes: every fill in flight is outdated
        self._scope_generation: dict[str, int] = {}
        self._too_big: set[str] = set()  # scopes refused for their size (searched in LanceDB)
        self._seen: OrderedDict[str, None] = OrderedDict()  # searched once, not yet kept
        self.hits = 0
        self.misses = 0

    @property
    def nbytes(self) -> int:
        """Bytes held now (approximate)."""
        return self._bytes

    def get(self, scope: str) -> ScopeRows | None:
        """The scope's rows, or None (a miss: fill it with :meth:`put`)."""
        rows = self._scopes.get(scope)
        if rows is None:
            self.misses += 1
            return None
        self.hits += 1
        self._scopes.move_to_end(scope)
        return rows

    def admit(self, scope: str) -> bool:
        """Whether a miss on ``scope`` should fill the cache: only from its second search on
        (admission on a second access, as a doorkeeper: Einziger et al., TinyLFU, 2017). A
        scope searched once, as most are when many users come once each, costs LanceDB's
        top-k query instead of a read of all its vectors (which raised the peak memory of
        the 100,000-fact benchmark by ~30 MiB for a 3% hit rate). Remembers the last 4,096
        scopes seen."""
        if scope in self._seen:
            del self._seen[scope]
            return True
        self._seen[scope] = None
        if len(self._seen) > 4096:
            self._seen.popitem(last=False)
        return False

    def max_rows(self, dim: int) -> int:
        """Most rows of ``dim``-d vectors one scope may keep (``1 / SCOPE_SHARE`` of the budget)."""
        return (self.max_bytes // SCOPE_SHARE) // (dim * 4 + _ROW_OVERHEAD)

    def refuse(self, scope: str) -> None:
        """Remember that the scope is too large to keep (until a delete)."""
        self._too_big.add(scope)

    def too_big(self, scope: str) -> bool:
        """True when the scope's rows were refused for their size (until a delete)."""
        return scope in self._too_big

    def ticket(self, scope: str) -> tuple[int, int]:
        """Take before reading a scope's rows from the index; give to :meth:`put`."""
        return self._generation, self._scope_generation.get(scope, 0)

    def put(self, scope: str, rows: ScopeRows, ticket: tuple[int, int]) -> bool:
        """Keep ``rows`` as the scope's rows unless a write touched the scope (or a delete
        ran) since ``ticket`` was taken, or they need more than half the budget. Returns
        whether they were kept."""
        if rows.nbytes > self.max_bytes // SCOPE_SHARE:
            self._too_big.add(scope)
            return False
        if ticket != self.ticket(scope):
            return False
        self._drop(scope)
        self._scopes[scope] = rows
        self._bytes += rows.nbytes
        while self._bytes > self.max_bytes and self._scopes:
            self._drop(next(iter(self._scopes)))
        return True

    def written(self, scopes: Iterable[str]) -> None:
        """Rows of ``scopes`` were inserted or replaced (keys never move between scopes): drop
        those scopes and outdate their fills in flight."""
        for scope in set(scopes):
            self._scope_generation[scope] = self._scope_generation.get(scope, 0) + 1
            if scope in self._scopes:  # still in use: its next miss refills at once
                self._drop(scope)
                self._seen[scope] = None

    def deleted(self) -> None:
        """Rows were deleted (by key, scope unknown; deletions are rare: ``/forget``, imports,
        reindexing): drop everything and outdate every fill in flight."""
        self.clear()
        self._too_big.clear()  # a scope may have shrunk below its share

    def clear(self) -> None:
        """Drop everything and outdate every fill in flight."""
        self._generation += 1
        self._scopes.clear()
        self._bytes = 0

    def _drop(self, scope: str) -> None:
        rows = self._scopes.pop(scope, None)
        if rows is not None:
            self._bytes -= rows.nbytes
