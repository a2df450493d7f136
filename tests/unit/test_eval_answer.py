"""Answer generation and model-as-judge grading with a scripted model."""

from __future__ import annotations

from collections import deque
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bot.evaluation.answer import AnswerRecorder, choice_letter, judge_label, judge_prompt
from bot.evaluation.memdaily import run_memdaily
from bot.evaluation.runner import EvalQuestion
from bot.evaluation.target import EvalItem
from memory.errors import ModelUnavailable
from memory.tokens import HeuristicTokenCounter
from memory.types import ModelReply
from tests.unit.test_eval_memdaily import NOISY, SIMPLE, ZhTarget

UTC = timezone.utc
ASKED = datetime(2023, 5, 28, 19, 47, tzinfo=UTC)


class ScriptedModel:
    """Answers with the next scripted text (or raises it) and records every call."""

    def __init__(self, name: str, *replies) -> None:
        self.name = name
        self.replies = deque(replies)
        self.calls: list[tuple[str, str]] = []

    async def complete(self, *, system, messages, max_tokens):
        self.calls.append((system, messages[-1].content))
        reply = self.replies.popleft()
        if isinstance(reply, Exception):
            raise reply
        return ModelReply(text=reply, model=self.name)


def question(qtype: str, *, qid: str = "q", abstention: bool = False, **kw) -> EvalQuestion:
    return EvalQuestion(question_id=qid, question=kw.pop("text", "How many days did my trip last?"),
                        type=qtype, in_overall=not abstention, evidence=("s:0",), evidence_sessions=(),
                        asked_at=ASKED, abstention=abstention, answer=kw.pop("answer", "18 days"), **kw)


ITEMS = [EvalItem("round", "- (2023-05-01) User: I was in Japan from May 1 to May 18.", 15, ("s:0",))]


def test_judge_prompts_follow_the_type() -> None:
    temporal = judge_prompt("longmemeval", "temporal-reasoning", "Q?", "18 days", "19 days")
    assert "off-by-one" in temporal and "Correct answer: 18 days" in temporal
    assert "Model response: 19 days" in temporal and temporal.endswith("Answer yes or no only.")
    update = judge_prompt("longmemeval", "knowledge-update", "Q?", "A", "R")
    assert "updated value" in update and "off-by-one" not in update
    plain = judge_prompt("longmemeval", "multi-session", "Q?", "A", "R")
    assert "intermediate step" in plain and "updated" not in plain
    assert "Rubric: A" in judge_prompt("longmemeval", "single-session-preference", "Q?", "A", "R")
    assert "unanswerable" in judge_prompt("longmemeval", "knowledge-update", "Q?", "A", "R", abstention=True)
    assert "CORRECT or WRONG" in judge_prompt("locomo", "temporal", "Q?", "A", "R")
    with pytest.raises(ValueError):
        judge_prompt("longmemeval", "unknown-type", "Q?", "A", "R")
    with pytest.raises(ValueError):
        judge_prompt("memdaily", "simple", "Q?", "A", "R")


def test_judge_labels_and_choice_letters() -> None:
    assert judge_label("longmemeval", "Yes.") and not judge_label("longmemeval", "No")
    assert judge_label("locomo", "CORRECT") and not judge_label("locomo", "WRONG, not CORRECT")
    assert not judge_label("locomo", "I cannot tell")
    assert choice_letter("B", ["A", "B", "C"]) == "B"
    assert choice_letter("The answer is (C).", ["A", "B", "C"]) == "C"
    assert choice_letter("答案：B。", ["A", "B"]) == "B"
    assert choice_letter("none", ["A", "B"]) is None


async def test_answers_and_judges_with_the_memory_and_date() -> None:
    model = ScriptedModel("answerer", "19 days.", "I don't know.", "You never mentioned a parrot.")
    judge = ScriptedModel("judge", "yes", "no", "Yes")
    recorder = AnswerRecorder("longmemeval", model, judge_model=judge)
    await recorder(question("temporal-reasoning", qid="t1"), ITEMS)
    await recorder(question("multi-session", qid="m1"), [])
    await recorder(question("abstention", qid="a1_abs", abstention=True, text="My parrot's name?",
                            answer="No parrot was mentioned."), ITEMS)
    system, content = model.calls[0]
    assert "Current date: 2023/05/28 (Sun) 19:47" in system
    assert "I was in Japan from May 1 to May 18." in system and content == "How many days did my trip last?"
    assert "(nothing recalled)" in model.calls[1][0]
    assert "off-by-one" in judge.calls[0][1] and "Model response: 19 days." in judge.calls[0][1]
    assert "unanswerable" in judge.calls[2][1]
    summary = recorder.summary()
    assert summary["model"] == "answerer" and summary["judge_model"] == "judge"
    assert (summary["questions"], summary["answered"], summary["judged"]) == (3, 3, 3)
    assert summary["accuracy"] == pytest.approx(2 / 3)
    assert summary["by_type"]["temporal-reasoning"] == {"n": 1, "judged": 1, "accuracy": 1.0}
    assert [r["correct"] for r in summary["records"]] == [True, False, True]


async def test_a_failing_model_is_recorded_not_raised() -> None:
    recorder = AnswerRecorder("longmemeval", ScriptedModel("m", ModelUnavailable("down")),
                              judge_model=ScriptedModel("j"))
    await recorder(question("multi-session"), ITEMS)
    (record,) = recorder.summary()["records"]
    assert record["response"] is None and record["correct"] is None and "down" in record["error"]
    assert recorder.summary()["accuracy"] is None

    no_judge = AnswerRecorder("longmemeval", ScriptedModel("m", "18 days"))
    await no_judge(question("multi-session"), ITEMS)
    assert no_judge.summary()["records"][0]["correct"] is None and no_judge.summary()["judged"] == 0


async def test_memdaily_multiple_choice_is_graded_by_letter(tmp_path: Path) -> None:
    import json

    folder = tmp_path / "md"
    folder.mkdir()
    (folder / "01_simple_events.json").write_text(json.dumps(SIMPLE, ensure_ascii=False), encoding="utf-8")
    (folder / "06_noisy_roles.json").write_text(json.dumps(NOISY, ensure_ascii=False), encoding="utf-8")
    model = ScriptedModel("answerer", "B", "C")  # questions in file order: simple first
    recorder = AnswerRecorder("memdaily", model)
    target = ZhTarget()

    async def factory(path: Path):
        return target

    await run_memdaily([folder], target_factory=factory, embedder=None,
                       counter=HeuristicTokenCounter(), progress=None, work_dir=tmp_path / "w",
                       on_answer=recorder)
    records = {r["id"]: r for r in recorder.summary()["records"]}
    simple = records["01_simple_events#0#0"]
    assert simple["correct"] is True  # "B" = 八个周, the ground truth
    assert "A. 九周" in model.calls[0][1] and "letter" in model.calls[0][1]
    assert records["06_noisy_roles#3#0"]["correct"] is None  # no choices, no judge: ungraded
    assert "张伟" in model.calls[1][0]  # the recalled message is in the memory shown
