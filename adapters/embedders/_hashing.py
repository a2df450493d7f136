"""The weightless embedder: signed feature hashing of words, word pairs and CJK characters."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np

from adapters.embedders._base import BATCH_SIZE, prepare_text, unit_rows
from memory.ports import SimilarityCalibration

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
#: A run of CJK characters, or a run of other letters/digits (``_`` splits words).
_TOKEN_RE = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W_{_CJK}]+)")
#: English function words (mostly NLTK's list) and chat fillers, dropped: they carry no topic
#: and in 256 buckets drown the words that do. Dense R@10 on five LoCoMo conversations with
#: BIGRAM_WEIGHT 0.25 is 0.243 keeping them and 0.329 dropping them.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing don down during each
    few for from further get got had has have having he her here hers herself him himself his
    how i if in into is it its itself just let me more most my myself no nor not now of off
    oh ok okay on once only or other our ours ourselves out over own really s same she should
    so some such t than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why
    will with would yeah yes you your yours yourself yourselves""".split()
)
#: Weight of a word bigram relative to a unigram. Bigrams add phrase matches but share the
#: 256 buckets with unigrams; LoCoMo R@10 (stopwords dropped) is 0.335 without bigrams, 0.329
#: at 0.25, 0.315 at 0.5 and 0.259 at 1.
BIGRAM_WEIGHT = 0.25


def features(text: str) -> Counter[str]:
    """Return the hashed features of ``text`` with their counts.

    The text is NFKC-normalised (full-width forms to ASCII) and lower-cased. Latin/other
    scripts give word unigrams ``w:`` and bigrams ``b:`` of words adjacent once
    :data:`STOPWORDS` are dropped; CJK runs give
    character unigrams ``c:`` and bigrams ``d:`` (Chinese has no spaces between words, and
    character bigrams are the usual word substitute). A CJK run breaks the word bigram chain.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    counts: Counter[str] = Counter()
    previous_word: str | None = None
    for match in _TOKEN_RE.finditer(text):
        word = match.group("word")
        if word is not None:
            if word in STOPWORDS:
                continue
            counts["w:" + word] += 1
            if previous_word is not None:
                counts[f"b:{previous_word} {word}"] += 1
            previous_word = word
            continue
        run = match.group("cjk")
        previous_word = None
        counts.update("c:" + ch for ch in run)
        counts.update("d:" + run[i : i + 2] for i in range(len(run) - 1))
    return counts


@functools.lru_cache(maxsize=65536)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    """Bucket and sign of a feature from blake2b (stable across processes, unlike ``hash``)."""
    value = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    return value % dim, (1.0 if value >> 63 else -1.0)


class HashingEmbedder:
    """Feature hashing into 256 signed buckets, L2-normalised; numpy only, no weights.

    Each feature (see :func:`features`) adds ``sign * weight * (1 + ln count)`` to bucket
    ``blake2b(feature) mod 256``, with the sign from the hash's top bit so that collisions
    cancel on average instead of piling up (Weinberger et al., "Feature Hashing for Large Scale
    Multitask Learning", ICML 2009); ``weight`` is 1, or :data:`BIGRAM_WEIGHT` for word
    bigrams. Deterministic across processes and machines. A text with no
    letters, digits or CJK maps to the first basis vector. It matches surface words only: no
    synonyms, no stemming. The cheapest backend, used by unit tests and as a last resort.

    Calibration (cosine, higher = closer):
    ``floor`` 0.0: median of 2,000 unrelated pairs (LoCoMo question against a turn of another
    conversation; conversations 26, 30, 41, 42, 43, fixed seed); most unrelated pairs share no
    feature at all (p90 0.107; unrelated Chinese pairs: median 0.0, p90 0.098). ``ceiling``
    0.496: 90th percentile of 80 related pairs (20 English, 20 Chinese hand-made paraphrases,
    medians 0.259 and 0.275; 40 LoCoMo question/evidence pairs, median 0.251). Paraphrases
    without shared words score 0.
    See docs/embedders.md for the method and every number.

    Attributes:
        name: ``"hashing-256-v1"`` (bump the version when the features change: stored vectors
            would no longer match).
        dim: 256.
        calibration: measured floor/ceiling, see above.
    """

    name = "hashing-256-v1"
    dim = 256
    calibration = SimilarityCalibration(floor=0.0, ceiling=0.496, duplicate=0.9)

    def __repr__(self) -> str:
        return f"HashingEmbedder(name={self.name!r}, dim={self.dim})"

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` synchronously. Returns float64 ``(len(texts), 256)``, unit rows."""
        matrix = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            for feature, count in features(prepare_text(text)).items():
                bucket, sign = _slot(feature, self.dim)
                weight = BIGRAM_WEIGHT if feature.startswith("b:") else 1.0
                matrix[row, bucket] += sign * weight * (1.0 + math.log(count))
        return unit_rows(matrix, rows=len(texts), dim=self.dim, source=self.name, zero_ok=True)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed stored texts; yields to the event loop between batches of 16.

        Returns:
            One unit vector (256 floats) per text, in input order.

        Raises:
            TypeError: an item is not a ``str``.
        """
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH_SIZE):
            if start:
                await asyncio.sleep(0)
            vectors.extend(self.embed_sync(texts[start : start + BATCH_SIZE]).tolist())
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        """Embed a search query (same features as documents). Returns 256 floats, norm 1."""
        return self.embed_sync([text])[0].tolist()
