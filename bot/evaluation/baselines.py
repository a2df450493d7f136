"""Reference retrievers over the raw turns of a conversation.

Both index one document per turn, ``"Speaker: text"`` plus ``" [shares a photo: caption]"`` when
the turn shared a photo, and return the turns as ``round`` items rendered the way the memory
block renders rounds, ``"(8 May 2023) Speaker: text ..."``, with their token cost by the product's
counter. The harness packs the ranked lists with the same rule as the system under test.

* ``BM25Index``: Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25
  and Beyond", 2009) via ``bm25s`` (Lù, 2024; defaults k1=1.5, b=0.75, Lucene IDF), English
  Snowball stemmer from PyStemmer, stopword list ``"en_plus"`` (accepted by bm25s 0.3.16 as an
  alias of ``"english_plus"``). Only turns with a positive score are ranked; ties keep turn order.
* ``JiebaBM25Index``: the same BM25 over jieba tokens, for Chinese (MemDaily).
* ``DenseIndex``: cosine similarity (dot product of the embedder's unit vectors) between the
  question and every turn; all turns ranked, ties keep turn order.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import bm25s
import numpy as np
import Stemmer

from bot.evaluation.target import EvalItem
from memory.ports import Embedder, TokenCounter

BM25_STOPWORDS = "en_plus"
BM25_STEMMER_LANGUAGE = "english"
DENSE_BATCH_SIZE = 64


def photo_suffix(caption: str | None) -> str:
    """The text appended to a turn that shared a photo (empty without a caption)."""
    return f" [shares a photo: {caption}]" if caption else ""


def render_round_line(speaker: str, text: str, sent_at: datetime) -> str:
    """A raw turn as a memory-block line: ``"(8 May 2023) Caroline: text"``."""
    return f"({sent_at.day} {sent_at:%B %Y}) {speaker}: {text}"


@dataclass(frozen=True)
class RawDoc:
    """One raw turn as the baselines see it.

    Attributes:
        document: the indexed text, ``"Speaker: text [shares a photo: ...]"``.
        item: the turn as a ``round`` item (rendered line, tokens, its own message id).
    """

    document: str
    item: EvalItem


def make_doc(
    *, message_id: str, speaker: str, text: str, sent_at: datetime, counter: TokenCounter
) -> RawDoc:
    """Build the baseline document of one turn; ``text`` already carries the photo suffix."""
    line = render_round_line(speaker, text, sent_at)
    return RawDoc(
        document=f"{speaker}: {text}",
        item=EvalItem(kind="round", text=line, tokens=counter.count(line), source_message_ids=(message_id,)),
    )


class BM25Index:
    """BM25 over one conversation's turns (see module docstring for the configuration)."""

    def __init__(self, docs: Sequence[RawDoc]) -> None:
        self._docs = list(docs)
        self._stemmer = Stemmer.Stemmer(BM25_STEMMER_LANGUAGE)
        self._retriever = bm25s.BM25()
        tokens = bm25s.tokenize(
            [doc.document for doc in self._docs],
            stopwords=BM25_STOPWORDS,
            stemmer=self._stemmer,
            show_progress=False,
        )
        self._retriever.index(tokens, show_progress=False)

    def rank(self, query: str) -> list[int]:
        """Indices of the turns with a positive score, best first."""
        if not self._docs:
            return []
        query_tokens = bm25s.tokenize(
            query,
            stopwords=BM25_STOPWORDS,
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )[0]
        ids = self._retriever.get_tokens_ids(query_tokens)
        if not ids:
            return []
        scores = np.asarray(self._retriever.get_scores(ids), dtype=np.float64)
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] > 0.0]

    def search(self, query: str) -> list[EvalItem]:
        """The ranked turns as ``round`` items."""
        return [self._docs[i].item for i in self.rank(query)]


class DenseIndex:
    """Dense retrieval over one conversation's turns with an ``Embedder``."""

    def __init__(self, docs: Sequence[RawDoc], embedder: Embedder, matrix: np.ndarray) -> None:
        self._docs = list(docs)
        self._embedder = embedder
        self._matrix = matrix

    @classmethod
    async def build(
        cls, docs: Sequence[RawDoc], embedder: Embedder, *, batch_size: int = DENSE_BATCH_SIZE
    ) -> DenseIndex:
        """Embed every turn document, ``batch_size`` texts per call."""
        vectors: list[list[float]] = []
        texts = [doc.document for doc in docs]
        for start in range(0, len(texts), batch_size):
            vectors.extend(await embedder.embed_documents(texts[start : start + batch_size]))
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
        return cls(docs, embedder, matrix)

    async def rank(self, query: str) -> list[int]:
        """Indices of all turns by descending cosine similarity to ``query``."""
        if not self._docs:
            return []
        vector = np.asarray(await self._embedder.embed_query(query), dtype=np.float32)
        scores = self._matrix @ vector
        return [int(i) for i in np.argsort(-scores, kind="stable")]

    async def search(self, query: str) -> list[EvalItem]:
        """The ranked turns as ``round`` items."""
        return [self._docs[i].item for i in await self.rank(query)]


#: A token must hold at least one letter or digit (drops punctuation and white space).
_WORDISH_RE = re.compile(r"\w", re.UNICODE)


def jieba_tokens(text: str) -> list[str]:
    """Lower-cased jieba tokens (accurate mode, Sun J., "jieba" 0.42) of ``text``, without
    punctuation and white space; English words stay whole. No stop words, no stemming."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return [t.lower() for t in jieba.lcut(text) if _WORDISH_RE.search(t)]


class JiebaBM25Index:
    """BM25 over one history's messages segmented with jieba (the Chinese baseline).

    Same scorer as :class:`BM25Index` (``bm25s``, k1=1.5, b=0.75, Lucene IDF) over
    :func:`jieba_tokens`; only messages with a positive score are ranked, ties keep message
    order.
    """

    def __init__(self, docs: Sequence[RawDoc]) -> None:
        self._docs = list(docs)
        self._retriever = bm25s.BM25()
        corpus = [jieba_tokens(doc.document) for doc in self._docs]
        if self._docs:
            self._retriever.index(corpus, show_progress=False)

    def rank(self, query: str) -> list[int]:
        """Indices of the messages with a positive score, best first."""
        if not self._docs:
            return []
        ids = self._retriever.get_tokens_ids(jieba_tokens(query))
        if not ids:
            return []
        scores = np.asarray(self._retriever.get_scores(ids), dtype=np.float64)
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] > 0.0]

    def search(self, query: str) -> list[EvalItem]:
        """The ranked messages as ``round`` items."""
        return [self._docs[i].item for i in self.rank(query)]
