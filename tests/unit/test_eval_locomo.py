"""The LoCoMo runner on a tiny synthetic conversation with a fake target and embedder."""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from bot.evaluation.locomo import load_locomo, run_locomo
from bot.evaluation.report import format_markdown
from bot.evaluation.target import EvalItem, ReplayTarget
from memory.ports import SimilarityCalibration
from memory.tokens import HeuristicTokenCounter

COUNTER = HeuristicTokenCounter()
TYPES = ["multi-hop", "temporal", "open-domain", "single-hop", "adversarial"]
RECALL_KEYS = ["evidence_recall@400", "evidence_recall@1000", "evidence_recall@4000"]

CONVERSATION = {
    "speaker_a": "Alice",
    "speaker_b": "Bob",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Alice", "dia_id": "D1:1", "text": "Hi Bob, how was your week?"},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "Great, I adopted a tortoise named Humphrey.",
         "img_url": ["http://example.invalid/x.jpg"], "blip_caption": "a photo of a tortoise on grass"},
        {"speaker": "Alice", "dia_id": "D1:3", "text": "Lovely! I started learning the cello."},
    ],
    # Numeric order: session 2 comes before session 10 although "10" < "2" as strings.
    "session_10_date_time": "9:00 am on 1 July, 2023",
    "session_10": [
        {"speaker": "Bob", "dia_id": "D10:1", "text": "Humphrey ate strawberries today."},
        {"speaker": "Alice", "dia_id": "D10:2", "text": "My cello teacher moved to Vienna."},
    ],
    "session_2_date_time": "7:55 pm on 9 June, 2023",
    "session_2": [
        {"speaker": "Alice", "dia_id": "D2:1", "text": "I visited Lisbon with my sister."},
        {"speaker": "Bob", "dia_id": "D2:2", "text": "Lisbon is beautiful, did you try the pastries?"},
    ],
    "session_11_date_time": "9:00 am on 2 July, 2023",  # a date without a session: ignored
    "events_session_1": {},
    "qa": [
        {"question": "What is the name of Bob's tortoise?", "answer": "Humphrey",
         "evidence": ["D1:2"], "category": 4},
        {"question": "When did Alice visit Lisbon?", "answer": "June 2023",
         "evidence": ["D2:01"], "category": 2},
        {"question": "Where did Alice's cello teacher move to?", "answer": "Vienna",
         "evidence": ["D1:3; D10:2", "D99:1"], "category": 1},
        {"question": "What does Humphrey eat?", "answer": "strawberries",
         "evidence": ["D"], "category": 3},
        {"question": "What is Bob's violin called?", "adversarial_answer": "none",
         "evidence": ["D1:3"], "category": 5},
    ],
}


class FakeTarget:
    """Keyword overlap over ingested turns; returns round items plus a pinned episode."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.calls: list[tuple] = []
        self.turns: list[tuple[str, str, str]] = []
        self.closed = False

    async def ingest(self, *, conversation_id: str, speaker: str, text: str, sent_at: datetime, message_id: str) -> None:
        self.calls.append(("ingest", conversation_id, speaker, text, sent_at, message_id))
        self.turns.append((message_id, speaker, text))

    async def close_session(self, *, conversation_id: str, at: datetime) -> None:
        self.calls.append(("close", conversation_id, at))

    async def recall(self, *, conversation_id: str, speaker: str, question: str, asked_at: datetime,
                     budget_tokens: int) -> list[EvalItem]:
        self.calls.append(("recall", conversation_id, speaker, question, asked_at, budget_tokens))
        words = {w for w in re.findall(r"[a-z]+", question.lower()) if len(w) > 3}
        hits = [t for t in self.turns if words & set(re.findall(r"[a-z]+", t[2].lower()))]
        items = [EvalItem("episode", "Earlier: small talk", 5, ("D1:1",), pinned=True)]
        items += [EvalItem("round", f"{s}: {x}", COUNTER.count(f"{s}: {x}"), (m,)) for m, s, x in hits]
        return items

    async def aclose(self) -> None:
        self.closed = True


class FakeEmbedder:
    """Hashed bag of words, L2-normalised."""

    name = "fake-hash-64"
    dim = 64
    calibration = SimilarityCalibration(floor=0.0, ceiling=1.0)

    def _vec(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for word in re.findall(r"[a-z]+", text.lower()):
            vec[int(hashlib.sha1(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    async def embed_documents(self, texts):
        return [self._vec(t) for t in texts]

    async def embed_query(self, text):
        return self._vec(text)


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "7.json"
    path.parent.mkdir()
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    return path


async def run(data_file: Path, tmp_path: Path, **kwargs):
    targets: list[FakeTarget] = []

    async def factory(folder: Path) -> ReplayTarget:
        assert folder.is_dir() and not any(folder.iterdir())
        targets.append(FakeTarget(folder))
        return targets[-1]

    err = io.StringIO()
    report = await run_locomo([data_file.parent], target_factory=factory, embedder=FakeEmbedder(),
                              counter=COUNTER, progress=err, work_dir=tmp_path / "work", **kwargs)
    return report, targets, err.getvalue()


def test_fake_target_satisfies_the_protocol(tmp_path: Path) -> None:
    assert isinstance(FakeTarget(tmp_path), ReplayTarget)


def test_loader_orders_sessions_numerically_and_cleans_evidence(data_file: Path) -> None:
    (conv,) = load_locomo([data_file])
    assert conv.sample_id == "7" and conv.conversation_id == "locomo-7"
    assert [s.number for s in conv.sessions] == [1, 2, 10]
    assert conv.turns[1].text == ("Great, I adopted a tortoise named Humphrey."
                                  " [shares a photo: a photo of a tortoise on grass]")
    assert [q.evidence for q in conv.questions] == [("D1:2",), ("D2:1",), ("D1:3", "D10:2"), ("D1:3",)]
    assert conv.dropped_evidence_ids == 2 and conv.skipped_questions == 1


async def test_report_shape_matches_the_contract(data_file: Path, tmp_path: Path) -> None:
    report, _, err = await run(data_file, tmp_path)
    assert list(report) == ["schema", "dataset", "paths", "questions", "overall_scope", "budgets_tokens",
                            "embedder", "token_counter", "elapsed_s", "systems",
                            "full_history_tokens_mean", "abstention"]
    assert report["schema"] == "memory-bot-eval/1" and report["dataset"] == "locomo"
    assert report["paths"] == [str(data_file)]
    assert report["questions"] == 4
    assert report["overall_scope"] == "categories 1-4"
    assert report["budgets_tokens"] == [400, 1000, 4000]
    assert report["embedder"] == "fake-hash-64" and report["token_counter"] == "heuristic-v1"
    assert list(report["systems"]) == ["ours", "bm25", "dense"]
    overall_keys = {
        "ours": RECALL_KEYS + ["memory_tokens_mean", "recall_ms_p50", "recall_ms_p95"],
        "bm25": RECALL_KEYS + ["recall@10", "memory_tokens_mean"],
        "dense": RECALL_KEYS + ["memory_tokens_mean"],
    }
    for name, system in report["systems"].items():
        assert list(system) == ["overall", "by_type"]
        assert list(system["overall"]) == overall_keys[name]
        assert list(system["by_type"]) == TYPES
        for type_name, block in system["by_type"].items():
            assert list(block)[: 1 + len(RECALL_KEYS)] == ["n"] + RECALL_KEYS
            assert block["n"] == {"open-domain": 0}.get(type_name, 1)
        for value in system["overall"].values():
            assert isinstance(value, float) and value >= 0
        for key in RECALL_KEYS:
            assert 0.0 <= system["overall"][key] <= 1.0
    # only the pinned episode comes back for the unanswerable question: counts as empty
    assert report["abstention"] == {"questions": 1, "empty_rate": 1.0}
    assert report["full_history_tokens_mean"] > 0
    assert "dropped 2" in err and "skipped 1" in err
    table = format_markdown(report)
    assert "| bm25 | single-hop | 1 |" in table and "recall@10" in table
    json.dumps(report, allow_nan=False)


async def test_bm25_and_ours_find_the_obvious_turn(data_file: Path, tmp_path: Path) -> None:
    report, _, _ = await run(data_file, tmp_path)
    for name in ("ours", "bm25"):
        single_hop = report["systems"][name]["by_type"]["single-hop"]
        assert single_hop["evidence_recall@400"] == 1.0, name
    assert report["systems"]["bm25"]["by_type"]["single-hop"]["recall@10"] == 1.0


async def test_replay_timestamps_and_session_closes(data_file: Path, tmp_path: Path) -> None:
    _, (target,), _ = await run(data_file, tmp_path)
    assert target.closed and target.folder.parent == tmp_path / "work"
    utc = timezone.utc
    s1, s2, s10 = (datetime(2023, 5, 8, 13, 56, tzinfo=utc), datetime(2023, 6, 9, 19, 55, tzinfo=utc),
                   datetime(2023, 7, 1, 9, 0, tzinfo=utc))
    sec = timedelta(seconds=30)
    replay = [c for c in target.calls if c[0] != "recall"]
    assert replay == [
        ("ingest", "locomo-7", "Alice", "Hi Bob, how was your week?", s1, "D1:1"),
        ("ingest", "locomo-7", "Bob", "Great, I adopted a tortoise named Humphrey. [shares a photo: a photo of a "
         "tortoise on grass]", s1 + sec, "D1:2"),
        ("ingest", "locomo-7", "Alice", "Lovely! I started learning the cello.", s1 + 2 * sec, "D1:3"),
        ("close", "locomo-7", s1 + 3 * sec),
        ("ingest", "locomo-7", "Alice", "I visited Lisbon with my sister.", s2, "D2:1"),
        ("ingest", "locomo-7", "Bob", "Lisbon is beautiful, did you try the pastries?", s2 + sec, "D2:2"),
        ("close", "locomo-7", s2 + 2 * sec),
        ("ingest", "locomo-7", "Bob", "Humphrey ate strawberries today.", s10, "D10:1"),
        ("ingest", "locomo-7", "Alice", "My cello teacher moved to Vienna.", s10 + sec, "D10:2"),
        ("close", "locomo-7", s10 + 2 * sec),
    ]
    recalls = [c for c in target.calls if c[0] == "recall"]
    assert target.calls[len(replay):] == recalls  # questions only after the whole replay
    assert len(recalls) == 4
    for _, conv_id, speaker, _, asked_at, budget in recalls:
        assert (conv_id, speaker, asked_at, budget) == ("locomo-7", "Alice", s10 + timedelta(days=1), 4000)


async def test_extra_budget_and_limit(data_file: Path, tmp_path: Path) -> None:
    report, (target,), _ = await run(data_file, tmp_path, budgets=(400, 1000, 4000, 20), limit=2)
    assert report["budgets_tokens"] == [20, 400, 1000, 4000]
    assert report["questions"] == 2
    assert "evidence_recall@20" in report["systems"]["ours"]["overall"]
    assert sum(1 for c in target.calls if c[0] == "ingest") == 7  # still fully replayed


async def test_skipped_systems_are_empty(data_file: Path) -> None:
    report = await run_locomo([data_file], target_factory=None, embedder=None, counter=COUNTER, progress=None)
    assert report["systems"]["ours"] == {"overall": {}, "by_type": {}}
    assert report["systems"]["dense"] == {"overall": {}, "by_type": {}}
    assert report["systems"]["bm25"]["overall"]["evidence_recall@400"] > 0
    assert report["embedder"] == "none"
    assert "(not run)" in format_markdown(report)
