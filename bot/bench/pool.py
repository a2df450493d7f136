"""A cached pool of embedded texts for seeding benchmark stores.

Embedding 100,000 texts on 2 cores would take hours with the default embedder, so the bench
embeds a fixed pool of generated texts once per embedder (about 2,000 by default) and reuses
their vectors: a seeded row takes its text and vector from the pool by index. The pool is
deterministic (a fixed seed), mixes English and Chinese, and holds three kinds of text: facts
("The user lives in Graz"), exchanges (a user turn with the reply) and user questions for the
measured turns. The cache is one ``.npz`` file per embedder, pool size and pool version.
"""

from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memory.ports import Embedder
from memory.text import search_text

log = logging.getLogger(__name__)

POOL_VERSION = 1

_PLACES = ["Graz", "Vienna", "Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi", "Lima", "Oslo",
           "Hanoi", "Porto", "Zurich", "Denver", "Kyoto", "Tallinn", "Cork"]
_FOODS = ["sushi", "spicy noodles", "oat milk", "green tea", "dark chocolate", "lentil soup",
          "mango", "espresso", "falafel", "ramen", "goat cheese", "blueberries"]
_HOBBIES = ["bouldering", "chess", "the piano", "trail running", "woodworking", "birdwatching",
            "sourdough baking", "salsa dancing", "astronomy", "knitting", "kayaking", "go"]
_TOOLS = ["Python", "Rust", "Go", "TypeScript", "PostgreSQL", "Kubernetes", "Neovim",
          "Emacs", "SQLite", "React", "Django", "Terraform"]
_PEOPLE = ["sister Anna", "friend Jonas", "colleague Priya", "son Leo", "daughter Mia",
           "partner Sam", "neighbour Ruth", "manager Omar", "cousin Elif", "father Karl"]
_TEMPLATES = [
    "The user lives in {place}.", "The user prefers {food} in the morning.",
    "The user is learning {hobby} on weekends.", "The user mainly writes {tool} at work.",
    "The user's {person} has a birthday on {date}.", "The user is allergic to {food}.",
    "The user wants short answers about {tool}.", "The user plans a trip to {place} in {month}.",
    "The user stopped eating {food} last year.", "The user's {person} lives in {place}.",
    "The user is saving {amount} euros for {hobby}.", "The user dislikes {tool} for side projects.",
]
_ZH_PLACES = ["格拉茨", "上海", "成都", "杭州", "深圳", "西安", "广州", "南京"]
_ZH_THINGS = ["火锅", "乌龙茶", "跑步", "围棋", "摄影", "爬山", "钢琴", "咖啡"]
_ZH_TEMPLATES = ["用户住在{place}。", "用户喜欢{thing}。", "用户周末常去{place}{thing}。",
                 "用户不吃辣，但喜欢{thing}。", "用户打算{month}去{place}出差。"]
_MONTHS = ["January", "March", "May", "July", "September", "November"]
_ZH_MONTHS = ["三月", "五月", "七月", "九月", "十一月"]
_QUESTIONS = [
    "What should I cook tonight with {food}?", "Can you suggest a weekend plan in {place}?",
    "How do I get better at {hobby}?", "Any tips for debugging {tool} code?",
    "What gift would my {person} like?", "Remind me what I said about {place}.",
    "Is {food} a good snack before {hobby}?", "Which {tool} book would you recommend?",
    "推荐一家{place}的{thing}店吧", "我最近想学{thing}，怎么开始？",
]


@dataclass
class TextPool:
    """Texts with their vectors and pre-segmented search text.

    Attributes:
        facts: fact texts (third person, short).
        exchanges: round texts (``"User: ...\\nAssistant: ..."``).
        questions: user messages for measured turns (not facts, not commands).
        vectors: float32 array ``(len(facts) + len(exchanges), dim)``, document embeddings of
            facts then exchanges, unit length.
        search: segmented search text of facts then exchanges (``memory.text.search_text``).
    """

    facts: list[str]
    exchanges: list[str]
    questions: list[str]
    vectors: np.ndarray
    search: list[str]

    def fact(self, i: int) -> tuple[str, np.ndarray, str]:
        """Text, vector and search text of fact ``i`` (taken modulo the pool)."""
        j = i % len(self.facts)
        return self.facts[j], self.vectors[j], self.search[j]

    def exchange(self, i: int) -> tuple[str, np.ndarray, str]:
        """Text, vector and search text of exchange ``i`` (taken modulo the pool)."""
        j = len(self.facts) + i % len(self.exchanges)
        return self.exchanges[i % len(self.exchanges)], self.vectors[j], self.search[j]


def generate_texts(size: int, *, seed: int = 11) -> tuple[list[str], list[str], list[str]]:
    """Return ``(facts, exchanges, questions)``: ``size // 2`` distinct facts, as many
    exchanges and 200 questions, deterministic for a seed."""
    rng = random.Random(seed)

    def fill(template: str) -> str:
        return template.format(
            place=rng.choice(_PLACES), food=rng.choice(_FOODS), hobby=rng.choice(_HOBBIES),
            tool=rng.choice(_TOOLS), person=rng.choice(_PEOPLE), month=rng.choice(_MONTHS),
            date=f"{rng.choice(_MONTHS)} {rng.randint(1, 28)}",
            amount=rng.randrange(100, 5000, 50), thing=rng.choice(_ZH_THINGS))

    def fill_zh(template: str) -> str:
        return template.format(place=rng.choice(_ZH_PLACES), thing=rng.choice(_ZH_THINGS),
                               month=rng.choice(_ZH_MONTHS))

    half = max(1, size // 2)
    facts: list[str] = []
    seen: set[str] = set()
    attempts = 0
    while len(facts) < half and attempts < half * 50:
        attempts += 1
        text = fill_zh(rng.choice(_ZH_TEMPLATES)) if rng.random() < 0.15 else fill(
            rng.choice(_TEMPLATES))
        if text not in seen:
            seen.add(text)
            facts.append(text)
    while len(facts) < half:  # the templates ran out of combinations: number the rest
        facts.append(f"{facts[len(facts) % len(seen)]} (note {len(facts)})")
    exchanges = []
    for i in range(half):
        question = fill(rng.choice(_QUESTIONS[:8])) if i % 7 else fill_zh(rng.choice(_QUESTIONS[8:]))
        exchanges.append(f"User: {question}\nAssistant: {fill(rng.choice(_TEMPLATES))} "
                         f"Here is a short answer about {rng.choice(_HOBBIES)}.")
    questions = [fill(q) if i % 7 else fill_zh(q) for i, q in
                 enumerate(rng.choice(_QUESTIONS[:8]) if i % 7 else rng.choice(_QUESTIONS[8:])
                           for i in range(200))]
    return facts, exchanges, questions


async def load_pool(embedder: Embedder, *, size: int = 2000, cache_dir: Path | None = None
                    ) -> TextPool:
    """Return the pool of ``size`` texts embedded by ``embedder``, from the cache when present
    (``cache_dir/pool-<embedder>-<size>-v<version>.npz``), else embedding it once (in batches,
    through :meth:`Embedder.embed_documents`) and writing the cache."""
    facts, exchanges, questions = generate_texts(size)
    texts = facts + exchanges
    path = None
    if cache_dir is not None:
        safe = "".join(c if c.isalnum() else "_" for c in embedder.name)
        path = Path(cache_dir) / f"pool-{safe}-{size}-v{POOL_VERSION}.npz"
        if path.exists():
            data = np.load(path, allow_pickle=False)
            if data["vectors"].shape == (len(texts), embedder.dim) and \
                    json.loads(str(data["texts"])) == texts:
                return TextPool(facts, exchanges, questions, data["vectors"],
                                json.loads(str(data["search"])))
    started = time.perf_counter()
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for start in range(0, len(texts), 64):
        batch = await embedder.embed_documents(texts[start:start + 64])
        vectors[start:start + len(batch)] = np.asarray(batch, dtype=np.float32)
    search = [search_text(t) for t in texts]
    log.info("bench pool embedded texts=%d embedder=%s s=%.1f", len(texts), embedder.name,
             time.perf_counter() - started)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, vectors=vectors, texts=np.array(json.dumps(texts, ensure_ascii=False)),
                 search=np.array(json.dumps(search, ensure_ascii=False)))
        tmp.replace(path)
    return TextPool(facts, exchanges, questions, vectors, search)
