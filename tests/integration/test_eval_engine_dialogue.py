"""LongMemEval and MemDaily through the real pipeline (SQLite + LanceDB in tmp folders, the
hashing embedder behind the on-disk cache), and the ``memory-bot eval`` command line."""

from __future__ import annotations

import json
import lzma
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from adapters.embedders import HashingEmbedder
from bot.evaluation.cache import CachingEmbedder
from bot.evaluation.longmemeval import run_longmemeval
from bot.evaluation.memdaily import run_memdaily
from bot.evaluation.pipeline import EngineTarget
from bot.evaluation.target import DialogueTarget
from bot.settings import load_settings
from memory.tokens import HeuristicTokenCounter
from memory.types import ChatKind, ThreadKey

UTC = timezone.utc
BIN = Path(sys.executable).with_name("memory-bot")
COUNTER = HeuristicTokenCounter()

FILLER = [("How do I descale a kettle?", "Boil vinegar and water, then rinse."),
          ("Suggest a name for a sourdough starter.", "How about Clint Yeastwood?"),
          ("What is a good beginner chess opening?", "Try the Italian Game.")]


def _haystack(qid: str, answer_pair: tuple[str, str], *, assistant_evidence: bool) -> dict:
    sessions, ids, dates = [], [], []
    for i, (user, assistant) in enumerate(FILLER):
        sessions.append([{"role": "user", "content": user}, {"role": "assistant", "content": assistant}])
        ids.append(f"filler_{qid}_{i}")
        dates.append(f"2023/05/0{i + 2} (Tue) 10:00")
    user, assistant = answer_pair
    sessions.insert(1, [
        {"role": "user", "content": user, **({} if assistant_evidence else {"has_answer": True})},
        {"role": "assistant", "content": assistant, **({"has_answer": True} if assistant_evidence else {})},
    ])
    ids.insert(1, f"answer_{qid}")
    dates.insert(1, "2023/05/01 (Mon) 09:00")
    return {"question_id": qid, "question_type": "single-session-assistant" if assistant_evidence
            else "single-session-user", "answer": "-", "question_date": "2023/05/20 (Sat) 12:00",
            "haystack_session_ids": ids, "haystack_dates": dates, "haystack_sessions": sessions,
            "answer_session_ids": [f"answer_{qid}"]}


RECORDS = [
    dict(_haystack("u1", ("My tortoise Humphrey loves strawberries.", "Tortoises do enjoy fruit."),
                   assistant_evidence=False), question="What fruit does my tortoise Humphrey love?"),
    dict(_haystack("a1", ("Which Vienna museum has the graphic collection?",
                          "The Albertina museum holds the graphic collection."),
                   assistant_evidence=True), question="Which museum with a graphic collection did you name?"),
]


def _settings(tmp_path: Path):
    return load_settings({"MEMORY_BOT_DATA_DIR": str(tmp_path / "unused"), "EMBEDDER": "hashing",
                          "LLM_PROVIDER": "offline"}, env_file=None)


async def _run(data: Path, tmp_path: Path, cache_path: Path) -> tuple[dict, CachingEmbedder]:
    settings = _settings(tmp_path)
    embedder = CachingEmbedder(HashingEmbedder(), cache_path)
    targets: list[EngineTarget] = []

    async def factory(folder: Path):
        targets.append(await EngineTarget.create(folder, settings=settings, embedder=embedder,
                                                 chat_kind=ChatKind.PRIVATE))
        return targets[-1]

    try:
        report = await run_longmemeval([data], target_factory=factory, embedder=embedder,
                                       counter=COUNTER, progress=None, work_dir=tmp_path / "work")
    finally:
        embedder.close()
    assert all(isinstance(t, DialogueTarget) for t in targets) and len(targets) == 2
    return report, embedder


async def test_longmemeval_through_the_engine_credits_recorded_replies(tmp_path: Path) -> None:
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(RECORDS), encoding="utf-8")
    cache = tmp_path / "cache.sqlite"
    report, cold = await _run(data, tmp_path, cache)
    ours = report["systems"]["ours"]
    assert ours["by_type"]["single-session-user"]["evidence_recall@4000"] == 1.0
    # the evidence is the assistant's turn: credited through the round it is part of
    assert ours["by_type"]["single-session-assistant"]["evidence_recall@4000"] == 1.0
    assert ours["overall"]["session_recall@10"] == 1.0
    assert cold.misses > 0

    # a rerun reads every vector back and measures exactly the same
    again, warm = await _run(data, tmp_path, cache)
    assert warm.misses == 0 and warm.hits > 0
    for name in ("ours", "bm25", "dense"):
        for key, value in report["systems"][name]["overall"].items():
            if not key.startswith("recall_ms"):
                assert again["systems"][name]["overall"][key] == value, (name, key)


async def test_engine_target_stores_replies_in_a_private_chat(tmp_path: Path) -> None:
    target = await EngineTarget.create(tmp_path / "d", settings=_settings(tmp_path),
                                       embedder=HashingEmbedder(), chat_kind=ChatKind.PRIVATE)
    try:
        t0 = datetime(2024, 4, 1, 9, 0, tzinfo=UTC)
        await target.ingest(conversation_id="c", speaker="User", text="I keep bees on my roof.",
                            sent_at=t0, message_id="s:0")
        await target.ingest_reply(conversation_id="c", user="User", text="Rooftop beekeeping is fun.",
                                  sent_at=t0 + timedelta(seconds=30), message_id="s:1")
        await target.ingest_reply(conversation_id="c", user="User", text="  ",
                                  sent_at=t0 + timedelta(seconds=40), message_id="s:2")
        await target.ingest(conversation_id="c", speaker="User", text="And I grow tomatoes.",
                            sent_at=t0 + timedelta(seconds=50), message_id="s:3")
        await target.close_session(conversation_id="c", at=t0 + timedelta(minutes=1))
        t1 = t0 + timedelta(hours=5)  # a later session, whose episode is the pinned one
        await target.ingest(conversation_id="c", speaker="User", text="Recommend a thriller novel.",
                            sent_at=t1, message_id="t:0")
        await target.close_session(conversation_id="c", at=t1 + timedelta(minutes=1))
        items = await target.recall(conversation_id="c", speaker="User", question="Where are my bees?",
                                    asked_at=t0 + timedelta(days=1), budget_tokens=1000)
        rounds = [i for i in items if i.kind == "round"]
        assert rounds and rounds[0].source_message_ids == ("s:0", "s:1")
        assert "Rooftop beekeeping" in rounds[0].text
        assert ("s:0", "s:1") in [i.source_message_ids for i in target.last_ranking()
                                  if i.kind == "round"]
        thread = await target.app.store.identities.thread_for_key(ThreadKey("eval", "c"), ChatKind.PRIVATE,
                                                       None, t0)
        assert thread.chat_kind is ChatKind.PRIVATE
    finally:
        await target.aclose()


async def test_memdaily_through_the_engine(tmp_path: Path) -> None:
    folder = tmp_path / "md"
    folder.mkdir()
    trajectories = [
        {"tid": t, "message_list": [
            {"mid": 0, "message": text, "time": f"2024年04月0{t + 1}日 周一 08:00", "place": "上海"},
            {"mid": 1, "message": "今天天气很好，我去散步了。", "time": f"2024年04月0{t + 1}日 周一 09:00", "place": "上海"}],
         "question_list": [{"qid": 0, "question": question, "answer": "-", "target_step_id": [0],
                            "choices": {}, "ground_truth": "A", "time": f"2024年04月0{t + 1}日 周一 10:00"}]}
        for t, (text, question) in enumerate([("我表弟张伟的身高是169cm。", "张伟的身高是多少？"),
                                              ("趣跑购物节的持续时间是八个周。", "趣跑购物节持续多久？")])
    ]
    (folder / "01_simple_roles.json").write_text(json.dumps(trajectories, ensure_ascii=False), encoding="utf-8")
    settings = _settings(tmp_path)
    embedder = HashingEmbedder()

    async def factory(path: Path):
        return await EngineTarget.create(path, settings=settings, embedder=embedder,
                                         chat_kind=ChatKind.PRIVATE)

    report = await run_memdaily([folder], target_factory=factory, embedder=embedder, counter=COUNTER,
                                progress=None, work_dir=tmp_path / "work")
    assert report["questions"] == 2
    assert report["systems"]["ours"]["overall"]["evidence_recall@4000"] == 1.0
    assert report["systems"]["bm25"]["overall"]["evidence_recall@4000"] == 1.0


def test_command_line_longmemeval(tmp_path: Path) -> None:
    data = tmp_path / "lme.json.xz"
    with lzma.open(data, "wt", encoding="utf-8") as handle:
        json.dump(RECORDS, handle)
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "EMBEDDER"))}
    environ.update({"MEMORY_BOT_DATA_DIR": str(tmp_path / "data"), "EMBEDDER": "hashing",
                    "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    out = tmp_path / "report.json"
    done = subprocess.run([str(BIN), "eval", "longmemeval", str(data), "--limit", "1", "--out", str(out),
                           "--work-dir", str(tmp_path / "work")],
                          capture_output=True, text=True, cwd=tmp_path, env=environ, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["dataset"] == "longmemeval" and report["questions"] == 1
    assert report["embedder"] == "hashing-256-v1" and report["elapsed_s"] > 0
    assert done.stdout.startswith("| system | type | n | R@400 | R@1000 | R@4000 | S@5 | S@10 |")
    assert "embedding cache" in done.stderr and "misses" in done.stderr
    assert (tmp_path / "xdg" / "memory-bot" / "embeddings.sqlite").is_file()
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").glob("*.db"))

    assert set(report["systems"]) == {"ours", "bm25", "dense"}

    # --no-dense: the same run without the dense baseline (its entry empty, shown as not run)
    lean = tmp_path / "lean.json"
    done = subprocess.run([str(BIN), "eval", "longmemeval", str(data), "--limit", "1", "--out", str(lean),
                           "--no-dense"], capture_output=True, text=True, cwd=tmp_path, env=environ,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    systems = json.loads(lean.read_text())["systems"]
    assert systems["dense"] == {"overall": {}, "by_type": {}} and systems["ours"]["overall"]
    assert "| dense | (not run) |" in done.stdout and "| ours | overall" in done.stdout

    bad = subprocess.run([str(BIN), "eval", "memdaily", str(tmp_path / "missing")], capture_output=True,
                         text=True, cwd=tmp_path, env=environ, timeout=120)
    assert bad.returncode == 2 and "does not exist" in bad.stderr


class CountingTarget(EngineTarget):
    """The engine target, counting the messages it is sent to replay."""

    ingested = 0

    async def ingest(self, **kwargs) -> None:
        CountingTarget.ingested += 1
        await super().ingest(**kwargs)

    async def ingest_reply(self, **kwargs) -> None:
        CountingTarget.ingested += 1
        await super().ingest_reply(**kwargs)


async def test_per_question_records_and_asking_again_on_the_stored_replay(tmp_path: Path) -> None:
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(RECORDS), encoding="utf-8")
    settings = _settings(tmp_path)
    embedder = HashingEmbedder()
    work = tmp_path / "work"

    async def factory(folder: Path):
        built = await EngineTarget.create(folder, settings=settings, embedder=embedder,
                                          chat_kind=ChatKind.PRIVATE)
        return CountingTarget(built.app, built.clock, ChatKind.PRIVATE)

    async def run(**options) -> dict:
        return await run_longmemeval([data], target_factory=factory, embedder=embedder,
                                     counter=COUNTER, progress=None, work_dir=work,
                                     per_question=True, **options)

    CountingTarget.ingested = 0
    first = await run()
    replayed = CountingTarget.ingested
    assert replayed == 16  # 4 sessions of a user turn and a reply, per question
    assert first["questions"] == 2  # the count stays; the records are beside it
    records = first["per_question"]
    assert [r["question_id"] for r in records] == ["u1", "a1"]
    for record in records:
        assert set(record["recall"]) == {"400", "1000", "4000"}
        assert record["recall"]["4000"] == 1.0
        assert record["packed"]["4000"] == len(record["items"]) >= 1
        assert record["packed"]["400"] <= record["packed"]["4000"]
        assert sum(i["tokens"] for i in record["items"]) <= 4000
        assert all(i["key"].startswith(i["kind"] + ":") for i in record["items"])
    # the answer is the recorded reply: its message id is one of the packed items' sources
    assert "answer_a1:1" in [s for i in records[1]["items"] for s in i["sources"]]

    # asked again on the stored replays: nothing replayed, the same results (the recorded
    # replies' message ids come back from the replay's mark)
    again = await run(reuse_replay=True)
    assert CountingTarget.ingested == replayed
    assert again["per_question"] == records
    assert len(list(work.iterdir())) == 2

    # without reuse_replay every history is replayed into a new folder
    await run()
    assert CountingTarget.ingested == 2 * replayed and len(list(work.iterdir())) == 4


def test_command_line_reuse_replay_needs_a_work_dir(tmp_path: Path) -> None:
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(RECORDS), encoding="utf-8")
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "EMBEDDER"))}
    environ.update({"MEMORY_BOT_DATA_DIR": str(tmp_path / "data"), "EMBEDDER": "hashing",
                    "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    done = subprocess.run([str(BIN), "eval", "longmemeval", str(data), "--reuse-replay"],
                          capture_output=True, text=True, cwd=tmp_path, env=environ, timeout=120)
    assert done.returncode == 2 and "--reuse-replay needs --work-dir" in done.stderr
