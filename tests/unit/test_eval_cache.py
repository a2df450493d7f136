"""The on-disk embedding cache of the eval harness: hits, sides, names, persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from adapters.embedders import HashingEmbedder
from bot.evaluation.cache import CachingEmbedder, cache_key, default_cache_path
from memory.ports import Embedder


class CountingEmbedder:
    """Wraps the hashing embedder and records every text it is asked to embed."""

    def __init__(self, name: str = "hashing-256-v1") -> None:
        self._inner = HashingEmbedder()
        self.name = name
        self.dim = self._inner.dim
        self.calibration = self._inner.calibration
        self.documents: list[str] = []
        self.queries: list[str] = []
        self.closed = False

    async def embed_documents(self, texts):
        self.documents.extend(texts)
        return await self._inner.embed_documents(texts)

    async def embed_query(self, text):
        self.queries.append(text)
        return await self._inner.embed_query(text)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "embeddings.sqlite"


def test_default_path_follows_xdg_cache_home(tmp_path: Path) -> None:
    assert default_cache_path({"XDG_CACHE_HOME": str(tmp_path)}) == \
        tmp_path / "memory-bot" / "embeddings.sqlite"
    assert default_cache_path({}) == Path.home() / ".cache" / "memory-bot" / "embeddings.sqlite"


def test_keys_separate_embedder_side_and_text() -> None:
    keys = {cache_key("a", "d", "x"), cache_key("b", "d", "x"), cache_key("a", "q", "x"),
            cache_key("a", "d", "y"), cache_key("a", "d\x00x", "")}
    assert len(keys) == 5


async def test_second_run_reads_every_vector_back(path: Path) -> None:
    inner = CountingEmbedder()
    cache = CachingEmbedder(inner, path)
    assert isinstance(cache, Embedder)
    texts = ["I adopted a tortoise", "我不吃辣", "I adopted a tortoise", ""]
    cold = await cache.embed_documents(texts)
    assert inner.documents == ["I adopted a tortoise", "我不吃辣", ""]  # a repeat is embedded once
    assert (cache.hits, cache.misses) == (0, 4)
    cache.close()
    assert inner.closed

    again = CountingEmbedder()
    warm_cache = CachingEmbedder(again, path)  # a new process, the same file
    warm = await warm_cache.embed_documents(texts)
    assert again.documents == [] and (warm_cache.hits, warm_cache.misses) == (4, 0)
    assert warm == cold  # identical floats: both went through the same float32 round trip
    assert cold[0] == cold[2]
    assert np.linalg.norm(cold[1]) == pytest.approx(1.0, abs=1e-6)
    assert len(cold[0]) == cache.dim == 256
    warm_cache.close()


async def test_queries_and_documents_are_cached_apart(path: Path) -> None:
    inner = CountingEmbedder()
    cache = CachingEmbedder(inner, path)
    await cache.embed_documents(["what pet do I have"])
    await cache.embed_query("what pet do I have")
    await cache.embed_query("what pet do I have")
    assert inner.documents == ["what pet do I have"] and inner.queries == ["what pet do I have"]
    assert (cache.hits, cache.misses) == (1, 2)
    cache.close()


async def test_another_embedder_name_is_a_miss(path: Path) -> None:
    first = CachingEmbedder(CountingEmbedder("one"), path)
    await first.embed_documents(["hello"])
    first.close()
    other = CountingEmbedder("two")
    second = CachingEmbedder(other, path)
    await second.embed_documents(["hello"])
    assert other.documents == ["hello"]
    assert second.name == "two" and second.dim == other.dim and second.calibration == other.calibration
    second.close()
    with pytest.raises(RuntimeError):
        await second.embed_query("after close")
