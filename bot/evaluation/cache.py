"""An on-disk embedding cache for evaluation runs: the same text is embedded once per embedder.

Replaying a LongMemEval haystack embeds ~750 texts of ~900 characters (rounds and episodes for
the engine, turns for the dense baseline); with the default embedder on 2 cores that is minutes
per question. :class:`CachingEmbedder` wraps any :class:`~memory.ports.Embedder` and keeps every
vector it computes in one SQLite file, keyed by the embedder's ``name``, the side (``d`` for
``embed_documents``, ``q`` for ``embed_query``: e5 prefixes them differently) and the exact text,
so a rerun (or the engine target and the dense baseline asking for the same text) reads the
vector back instead of computing it.

Vectors are stored as float32 and every vector returned, cached or fresh, goes through the same
float32 round trip, so a cold run and a warm run rank identically. The file is safe to share
between processes (WAL, a 60 s busy timeout); a write that still fails is logged and skipped
(the run goes on uncached). Default location: ``$XDG_CACHE_HOME/memory-bot/embeddings.sqlite``
(``~/.cache/memory-bot/...``); delete the file to start over.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from memory.ports import Embedder, SimilarityCalibration

log = logging.getLogger(__name__)

CACHE_FILE_NAME = "embeddings.sqlite"
#: Keys per ``SELECT ... IN (...)`` (SQLite's default variable limit is 32,766; stay small).
_LOOKUP_CHUNK = 500


def default_cache_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/memory-bot/embeddings.sqlite``, or ``~/.cache/memory-bot/...``."""
    env = os.environ if env is None else env
    base = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "memory-bot" / CACHE_FILE_NAME


def cache_key(embedder_name: str, side: str, text: str) -> bytes:
    """SHA-256 of ``name NUL side NUL text`` (UTF-8, surrogates replaced): 32 bytes."""
    raw = "\x00".join((embedder_name, side, text)).encode("utf-8", "replace")
    return hashlib.sha256(raw).digest()


class CachingEmbedder:
    """An :class:`~memory.ports.Embedder` that remembers the vectors of ``inner`` on disk.

    Same ``name``, ``dim`` and ``calibration`` as ``inner`` (so the engine's index table and
    thresholds do not change). ``hits`` and ``misses`` count texts since construction.

    Args:
        inner: the embedder whose vectors are cached.
        path: the SQLite file (created with its folder when missing).
    """

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.dim: int = inner.dim
        self.calibration: SimilarityCalibration = inner.calibration
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, dim INTEGER NOT NULL,"
            " vector BLOB NOT NULL) WITHOUT ROWID")
        self._db.commit()
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"CachingEmbedder({self.inner!r}, path={str(self.path)!r})"

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of stored texts: cached ones read back, the others embedded by ``inner``
        in one call (in input order) and stored."""
        return await self._embed(list(texts), "d")

    async def embed_query(self, text: str) -> list[float]:
        """The vector of a search query (cached like documents, on its own side)."""
        return (await self._embed([text], "q"))[0]

    async def warm_up(self) -> None:
        """Load ``inner``'s model now, if it has one to load."""
        warm = getattr(self.inner, "warm_up", None)
        if warm is not None:
            await warm()

    def close(self) -> None:
        """Close the cache file and ``inner`` (when it has ``close``). Idempotent."""
        if self._db is not None:
            self._db.close()
            self._db = None
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    async def _embed(self, texts: list[str], side: str) -> list[list[float]]:
        if self._db is None:
            raise RuntimeError("CachingEmbedder used after close()")
        keys = [cache_key(self.name, side, t) for t in texts]
        found = self._lookup(set(keys))
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            # one text may repeat within a call: embed it once
            unique: dict[bytes, str] = {}
            for i in missing:
                unique.setdefault(keys[i], texts[i])
            order = list(unique)
            if side == "q":
                fresh = [await self.inner.embed_query(unique[k]) for k in order]
            else:
                fresh = await self.inner.embed_documents([unique[k] for k in order])
            rows = [(key, np.asarray(vec, dtype=np.float32)) for key, vec in zip(order, fresh)]
            self._store(rows)
            found.update(rows)
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        return [found[key].astype(np.float64).tolist() for key in keys]

    def _lookup(self, keys: set[bytes]) -> dict[bytes, np.ndarray]:
        assert self._db is not None
        wanted = list(keys)
        found: dict[bytes, np.ndarray] = {}
        for start in range(0, len(wanted), _LOOKUP_CHUNK):
            chunk = wanted[start:start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, dim, blob in self._db.execute(
                    f"SELECT key, dim, vector FROM vectors WHERE key IN ({marks})", chunk):
                if dim == self.dim:
                    found[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _store(self, rows: list[tuple[bytes, np.ndarray]]) -> None:
        assert self._db is not None
        try:
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors (key, dim, vector) VALUES (?, ?, ?)",
                    [(key, int(vec.shape[0]), vec.tobytes()) for key, vec in rows])
        except sqlite3.Error as exc:  # a busy or read-only cache must not stop the run
            log.warning("embedding cache write failed (%s): %s", self.path, exc)
