"""The LongMemEval loader and runner on tiny synthetic haystacks, with a fake target."""

from __future__ import annotations

import io
import json
import lzma
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from adapters.embedders import HashingEmbedder
from bot.evaluation.longmemeval import load_longmemeval, parse_lme_datetime, run_longmemeval
from bot.evaluation.report import format_markdown
from bot.evaluation.runner import session_recall
from bot.evaluation.target import DialogueTarget, EvalItem, ReplayTarget
from memory.tokens import HeuristicTokenCounter

COUNTER = HeuristicTokenCounter()
UTC = timezone.utc
RECALL_KEYS = ["evidence_recall@400", "evidence_recall@1000", "evidence_recall@4000"]
SESSION_KEYS = ["session_recall@5", "session_recall@10"]


def _session(*pairs: tuple[str, str], answer_user: int | None = None, answer_assistant: int | None = None):
    turns = []
    for i, (user, assistant) in enumerate(pairs):
        turns.append({"role": "user", "content": user, **({"has_answer": True} if i == answer_user else {})})
        turns.append({"role": "assistant", "content": assistant,
                      **({"has_answer": True} if i == answer_assistant else {})})
    return turns


RECORDS = [
    {
        "question_id": "q1", "question_type": "single-session-user",
        "question": "What breed is my new puppy?", "answer": "a beagle",
        "question_date": "2023/05/30 (Tue) 10:00",
        # listed out of date order, two sessions on the same minute
        "haystack_session_ids": ["s_late", "answer_q1", "s_same"],
        "haystack_dates": ["2023/05/20 (Sat) 09:00", "2023/05/01 (Mon) 08:00", "2023/05/01 (Mon) 08:00"],
        "haystack_sessions": [
            _session(("Any tips for baking sourdough bread?", "Use a starter and be patient.")),
            _session(("I just got a beagle puppy named Biscuit!", "Congratulations on the puppy!"),
                     answer_user=0),
            _session(("How do I fix a leaking tap?", "Replace the washer.")),
        ],
        "answer_session_ids": ["answer_q1"],
    },
    {
        "question_id": "q2", "question_type": "single-session-assistant",
        "question": "Which museum did you recommend in Vienna?", "answer": "the Albertina",
        "question_date": "2023/06/10 (Sat) 12:00",
        "haystack_session_ids": ["answer_q2", "s_other"],
        "haystack_dates": ["2023/06/01 (Thu) 18:30", "2023/06/02 (Fri) 19:00"],
        "haystack_sessions": [
            _session(("Planning a trip to Vienna, what should I see?",
                      "Visit the Albertina museum for its graphic collection."), answer_assistant=0),
            _session(("What is a good stretching routine?", "Try ten minutes of yoga.")),
        ],
        "answer_session_ids": ["answer_q2"],
    },
    {
        "question_id": "q3_abs", "question_type": "knowledge-update",
        "question": "What is the name of my pet parrot?", "answer": "You did not mention a parrot.",
        "question_date": "2023/06/10 (Sat) 12:00",
        "haystack_session_ids": ["s_x"],
        "haystack_dates": ["2023/06/01 (Thu) 18:30"],
        "haystack_sessions": [_session(("I repainted the kitchen blue.", "Nice choice."))],
        "answer_session_ids": [],
    },
]


class FakeDialogueTarget:
    """Keyword overlap over every stored turn (user and assistant); one item per turn."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.calls: list[tuple] = []
        self.turns: list[tuple[str, str, str]] = []
        self._ranking: list[EvalItem] = []
        self.closed = False

    async def ingest(self, *, conversation_id, speaker, text, sent_at, message_id) -> None:
        self.calls.append(("user", conversation_id, speaker, sent_at, message_id))
        self.turns.append((message_id, speaker, text))

    async def ingest_reply(self, *, conversation_id, user, text, sent_at, message_id) -> None:
        self.calls.append(("assistant", conversation_id, user, sent_at, message_id))
        self.turns.append((message_id, "Assistant", text))

    async def close_session(self, *, conversation_id, at) -> None:
        self.calls.append(("close", conversation_id, at))

    async def recall(self, *, conversation_id, speaker, question, asked_at, budget_tokens):
        self.calls.append(("recall", conversation_id, speaker, asked_at, budget_tokens))
        words = {w for w in re.findall(r"[a-z]+", question.lower()) if len(w) > 3}
        hits = [t for t in self.turns if words & set(re.findall(r"[a-z]+", t[2].lower()))]
        items = [EvalItem("episode", "Earlier: chat", 4, (self.turns[-1][0],), pinned=True)]
        items += [EvalItem("round", f"{s}: {x}", COUNTER.count(f"{s}: {x}"), (m,)) for m, s, x in hits]
        self._ranking = items
        return items

    def last_ranking(self) -> list[EvalItem]:
        return list(self._ranking)

    async def aclose(self) -> None:
        self.closed = True


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "lme.json.xz"
    path.parent.mkdir()
    with lzma.open(path, "wt", encoding="utf-8") as handle:
        json.dump(RECORDS, handle)
    return path


async def run(data_file: Path, tmp_path: Path, **kwargs):
    targets: list[FakeDialogueTarget] = []

    async def factory(folder: Path) -> ReplayTarget:
        assert folder.is_dir() and not any(folder.iterdir())
        targets.append(FakeDialogueTarget(folder))
        return targets[-1]

    err = io.StringIO()
    report = await run_longmemeval([data_file.parent], target_factory=factory, embedder=HashingEmbedder(),
                                   counter=COUNTER, progress=err, work_dir=tmp_path / "work", **kwargs)
    return report, targets, err.getvalue()


def test_dates_parse_as_utc() -> None:
    assert parse_lme_datetime("2023/05/28 (Sun) 19:47") == datetime(2023, 5, 28, 19, 47, tzinfo=UTC)
    assert parse_lme_datetime("2023/05/28") == datetime(2023, 5, 28, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_lme_datetime("28 May 2023")


def test_loader_orders_sessions_by_date_and_marks_evidence(data_file: Path) -> None:
    files, histories, skipped = load_longmemeval([data_file])
    assert files == [data_file] and skipped == 0
    h1 = histories[0]
    assert h1.history_id == "lme-q1" and h1.user == "User"
    assert [s.session_id for s in h1.sessions] == ["answer_q1", "s_same", "s_late"]
    first, same = h1.sessions[0], h1.sessions[1]
    t0 = datetime(2023, 5, 1, 8, 0, tzinfo=UTC)
    sec = timedelta(seconds=30)
    assert [(m.message_id, m.role, m.speaker, m.sent_at) for m in first.messages] == [
        ("answer_q1:0", "user", "User", t0), ("answer_q1:1", "assistant", "Assistant", t0 + sec)]
    assert first.closed_at == t0 + 2 * sec
    # the session sharing the minute starts after the first one closed
    assert same.messages[0].sent_at == first.closed_at + sec
    (q1,) = h1.questions
    assert q1.evidence == ("answer_q1:0",) and q1.evidence_sessions == ("answer_q1",)
    assert q1.asked_at == datetime(2023, 5, 30, 10, 0, tzinfo=UTC) and q1.in_overall
    q3 = histories[2].questions[0]
    assert q3.abstention and q3.type == "abstention" and not q3.in_overall and q3.evidence == ()


async def test_report_shape_and_scores(data_file: Path, tmp_path: Path) -> None:
    report, targets, err = await run(data_file, tmp_path)
    assert list(report) == ["schema", "dataset", "paths", "questions", "overall_scope", "budgets_tokens",
                            "embedder", "token_counter", "elapsed_s", "systems",
                            "full_history_tokens_mean", "abstention"]
    assert report["dataset"] == "longmemeval" and report["questions"] == 3
    assert report["paths"] == [str(data_file)]
    assert report["elapsed_s"] >= 0
    overall_keys = {
        "ours": RECALL_KEYS + SESSION_KEYS + ["memory_tokens_mean", "recall_ms_p50", "recall_ms_p95"],
        "bm25": RECALL_KEYS + ["recall@10"] + SESSION_KEYS + ["memory_tokens_mean"],
        "dense": RECALL_KEYS + SESSION_KEYS + ["memory_tokens_mean"],
    }
    for name, system in report["systems"].items():
        assert list(system["overall"]) == overall_keys[name], name
        assert list(system["by_type"]) == [
            "single-session-user", "single-session-assistant", "single-session-preference",
            "multi-session", "knowledge-update", "temporal-reasoning", "abstention"]
        assert system["by_type"]["abstention"]["n"] == 0  # abstention without evidence: not scored
        assert system["by_type"]["single-session-user"]["n"] == 1
    ours = report["systems"]["ours"]
    # the user turn and the assistant's recommendation are both found and credited
    assert ours["by_type"]["single-session-user"]["evidence_recall@400"] == 1.0
    assert ours["by_type"]["single-session-assistant"]["evidence_recall@400"] == 1.0
    assert ours["overall"]["session_recall@5"] == 1.0
    assert report["systems"]["bm25"]["overall"]["session_recall@10"] == 1.0
    # the parrot question: only the pinned episode came back
    assert report["abstention"] == {"questions": 1, "empty_rate": 1.0}
    # three fresh folders, each closed; assistant turns went through ingest_reply
    assert len(targets) == 3 and all(t.closed for t in targets)
    assert len({t.folder for t in targets}) == 3
    kinds = [c[0] for c in targets[0].calls]
    assert kinds == ["user", "assistant", "close"] * 3 + ["recall"]
    assert targets[0].calls[-1][3] == datetime(2023, 5, 30, 10, 0, tzinfo=UTC)
    assert "skipped 0" in err and "lme-q2" in err
    table = format_markdown(report)
    assert "S@5" in table and "| ours | overall (all question types except abstention (_abs)) | 2 |" in table
    json.dumps(report, allow_nan=False)


async def test_limit_samples_by_type(data_file: Path, tmp_path: Path) -> None:
    report, targets, _ = await run(data_file, tmp_path, limit=1)
    assert report["questions"] == 1 and len(targets) == 1  # unsampled haystacks are not replayed


async def test_a_target_without_replies_is_refused(data_file: Path, tmp_path: Path) -> None:
    class UserOnly:
        async def ingest(self, **kw): ...
        async def close_session(self, **kw): ...
        async def recall(self, **kw): return []
        async def aclose(self): ...

    async def factory(folder):
        return UserOnly()

    assert not isinstance(UserOnly(), DialogueTarget)
    with pytest.raises(TypeError, match="assistant"):
        await run_longmemeval([data_file], target_factory=factory, embedder=None, counter=COUNTER,
                              progress=None, work_dir=tmp_path)


def test_session_recall_counts_distinct_sessions_and_skips_pinned() -> None:
    session_of = {"a:0": "a", "a:1": "a", "b:0": "b", "c:0": "c"}
    ranking = [EvalItem("episode", "pinned", 1, ("c:0",), pinned=True),
               EvalItem("round", "x", 1, ("a:0",)), EvalItem("round", "y", 1, ("a:1",)),
               EvalItem("round", "z", 1, ("b:0",)), EvalItem("round", "w", 1, ("c:0",))]
    assert session_recall(ranking, session_of, ["b"], 2) == 1.0
    assert session_recall(ranking, session_of, ["c"], 2) == 0.0
    assert session_recall(ranking, session_of, ["b", "c"], 3) == 1.0
    assert session_recall(ranking, session_of, [], 3) == 0.0
