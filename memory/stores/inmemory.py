"""In-memory fake of the search index, held to the same contract as ``LanceIndex``.

Dense side: exact cosine over every row in scope. Lexical side: Okapi BM25 (k1 = 1.2,
b = 0.75; Robertson & Zaragoza 2009) over the white-space tokens of ``search_text``, without
stemming or stop words, so its scores differ in scale from LanceDB's.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from memory.ports import ScopeFilter
from memory.types import IndexHit, IndexItem, ItemKind


class InMemoryIndex:
    """A :class:`memory.ports.SearchIndex` kept in a dict; for unit tests."""

    def __init__(self) -> None:
        self.rows: dict[str, IndexItem] = {}

    async def upsert(self, items: Sequence[IndexItem]) -> None:
        for item in items:
            self.rows[item.key] = item

    async def delete(self, keys: Sequence[str]) -> None:
        for key in keys:
            self.rows.pop(key, None)

    @staticmethod
    def _visible(item: IndexItem, where: ScopeFilter) -> bool:
        if item.scope != where.scope:
            return False
        return item.kind is not ItemKind.FACT or (
            item.owner == where.owner and (where.include_history or item.status == "active"))

    async def search(
        self, *, vector: Sequence[float], text: str, where: ScopeFilter, limit: int
    ) -> list[IndexHit]:
        rows = [r for r in self.rows.values() if self._visible(r, where)]
        cos = {r.key: sum(a * b for a, b in zip(vector, r.vector)) for r in rows}
        dense = sorted(rows, key=lambda r: -cos[r.key])[:limit]
        hits = {r.key: IndexHit(r.key, r.kind, r.item_id, cosine=cos[r.key]) for r in dense}
        terms = text.lower().split()
        if terms and rows:
            docs = {r.key: r.search_text.lower().split() for r in rows}
            avg = sum(len(d) for d in docs.values()) / len(docs) or 1.0
            df = Counter(t for d in docs.values() for t in set(d))
            scored = []
            for r in rows:
                tf = Counter(docs[r.key])
                score = 0.0
                for t in terms:
                    if tf[t]:
                        idf = math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5))
                        norm = tf[t] + 1.2 * (1 - 0.75 + 0.75 * len(docs[r.key]) / avg)
                        score += idf * tf[t] * 2.2 / norm
                if score > 0:
                    scored.append((score, r))
            for score, r in sorted(scored, key=lambda s: -s[0])[:limit]:
                hits[r.key] = IndexHit(r.key, r.kind, r.item_id, cosine=cos[r.key], bm25=score)
        return list(hits.values())

    async def keys(self) -> set[str]:
        return set(self.rows)

    async def count(self) -> int:
        return len(self.rows)

    async def compact(self) -> None:
        return None

    async def close(self) -> None:
        return None
