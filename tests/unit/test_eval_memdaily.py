"""The MemDaily loader and runner on a tiny synthetic folder: one history, jieba BM25."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from adapters.embedders import HashingEmbedder
from bot.evaluation.baselines import JiebaBM25Index, jieba_tokens, make_doc
from bot.evaluation.memdaily import file_type, load_memdaily, parse_memdaily_time, run_memdaily
from bot.evaluation.report import format_markdown
from bot.evaluation.target import EvalItem
from memory.tokens import HeuristicTokenCounter

COUNTER = HeuristicTokenCounter()
UTC = timezone.utc

SIMPLE = [
    {"tid": 0,
     "message_list": [
         {"mid": 0, "message": "我将要参加趣跑购物节。", "time": "2024年04月02日 周二 08:43", "place": "上海"},
         {"mid": 1, "message": "趣跑购物节的持续时间是八个周。", "time": "2024年04月02日 周二 11:54", "place": "上海"},
     ],
     "question_list": [
         {"qid": 0, "question": "趣跑购物节的持续时间是什么？", "answer": "八个周", "target_step_id": [1],
          "choices": {"A": "九周", "B": "八个周"}, "ground_truth": "B", "time": "2024年04月05日 周五 08:07"},
         {"qid": 1, "question": "[ERROR] upstream placeholder", "answer": "", "target_step_id": [0],
          "choices": {}, "ground_truth": "A", "time": "2024年04月05日 周五 08:07"},
     ]},
]
NOISY = [
    {"tid": 3,
     "message_list": [
         {"mid": 0, "message": "张伟是我的表弟，其身高是169cm。", "time": "2024年04月01日 周一 08:34", "place": "深圳"},
         {"mid": 1, "message": "今天天气不错，我去公园散步了。", "time": "2024年04月01日 周一 17:22", "place": "深圳"},
     ],
     "question_list": [
         # dated before its own evidence: asked after the trajectory instead
         {"qid": 0, "question": "我表弟张伟的身高是多少？", "answer": "169cm", "target_step_id": [0, 7],
          "choices": {}, "ground_truth": "A", "time": "2024年04月01日 周一 09:00"},
     ]},
]


class ZhTarget:
    """Shares at least two characters with the question: a round item per stored message."""

    def __init__(self) -> None:
        self.turns: list[tuple[str, str]] = []
        self.sessions: list[datetime] = []
        self.asked: list[tuple[str, datetime]] = []

    async def ingest(self, *, conversation_id, speaker, text, sent_at, message_id) -> None:
        assert conversation_id == "memdaily" and speaker == "User"
        self.turns.append((message_id, text))

    async def close_session(self, *, conversation_id, at) -> None:
        self.sessions.append(at)

    async def recall(self, *, conversation_id, speaker, question, asked_at, budget_tokens):
        self.asked.append((question, asked_at))
        return [EvalItem("round", t, COUNTER.count(t), (m,)) for m, t in self.turns
                if len(set(t) & set(question) - set("我的是？。")) >= 2]

    async def aclose(self) -> None: ...


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "memdaily"
    root.mkdir()
    (root / "01_simple_events.json").write_text(json.dumps(SIMPLE, ensure_ascii=False), encoding="utf-8")
    (root / "06_noisy_roles.json").write_text(json.dumps(NOISY, ensure_ascii=False), encoding="utf-8")
    (root / "notes.txt").write_text("not data", encoding="utf-8")
    return root


def test_times_and_file_types() -> None:
    assert parse_memdaily_time("2024年04月01日 周一 08:43") == datetime(2024, 4, 1, 8, 43, tzinfo=UTC)
    assert parse_memdaily_time("2024年4月1日") == datetime(2024, 4, 1, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_memdaily_time("2024-04-01 08:43")
    assert file_type(Path("05_post_processing_places.json")) == "post_processing"
    assert file_type(Path("01_simple_events.json")) == "simple"


def test_one_history_sessions_by_first_message_time(folder: Path) -> None:
    files, history, counts = load_memdaily([folder])
    assert [f.name for f in files] == ["01_simple_events.json", "06_noisy_roles.json"]
    assert history.history_id == "memdaily"
    # the noisy trajectory starts a day earlier, so it is replayed first
    assert [s.session_id for s in history.sessions] == ["06_noisy_roles#3", "01_simple_events#0"]
    assert history.sessions[0].messages[0].message_id == "06_noisy_roles#3#0"
    assert counts == {"error": 1, "no_evidence": 0, "dropped_ids": 1}
    simple, noisy = history.questions
    assert (simple.type, noisy.type) == ("simple", "noisy")
    assert simple.evidence == ("01_simple_events#0#1",)
    assert simple.asked_at == datetime(2024, 4, 5, 8, 7, tzinfo=UTC)
    assert noisy.evidence == ("06_noisy_roles#3#0",)
    assert noisy.asked_at == datetime(2024, 4, 1, 17, 22, 30, tzinfo=UTC)
    assert all(q.in_overall and not q.evidence_sessions for q in history.questions)


async def test_runner_report(folder: Path, tmp_path: Path) -> None:
    target = ZhTarget()

    async def factory(path: Path):
        return target

    err = io.StringIO()
    report = await run_memdaily([folder], target_factory=factory, embedder=HashingEmbedder(),
                                counter=COUNTER, progress=err, work_dir=tmp_path / "work")
    assert report["dataset"] == "memdaily" and report["questions"] == 2
    assert list(report["systems"]["bm25"]["by_type"]) == [
        "simple", "conditional", "comparative", "aggregative", "post_processing", "noisy"]
    for name in ("ours", "bm25"):
        overall = report["systems"][name]["overall"]
        assert overall["evidence_recall@400"] == 1.0, name
        assert "session_recall@5" not in overall
    assert report["abstention"] == {"questions": 0, "empty_rate": None}
    assert len(target.turns) == 4 and len(target.sessions) == 2
    assert "skipped 1 [ERROR]" in err.getvalue()
    assert "S@5" not in format_markdown(report)


def test_jieba_bm25_ranks_the_matching_message() -> None:
    assert jieba_tokens("我的表弟身高169cm。") == ["我", "的", "表弟", "身高", "169cm"]
    at = datetime(2024, 4, 1, tzinfo=UTC)
    docs = [make_doc(message_id=str(i), speaker="User", text=t, sent_at=at, counter=COUNTER)
            for i, t in enumerate(["今天天气不错。", "我表弟的身高是169cm。", "我买了一本书。"])]
    index = JiebaBM25Index(docs)
    assert index.rank("表弟身高多少") == [1]
    assert index.search("表弟")[0].source_message_ids == ("1",)
    assert index.rank("？") == [] and JiebaBM25Index([]).rank("表弟") == []
