"""``memory-bot eval longmemeval --judge`` with the real Claude client against a scripted fake
server on 127.0.0.1: the answering model sees the recalled memory, the judge the reference."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.e2e.fakes.llm import Answer, FakeLLMServer
from tests.integration.test_eval_engine_dialogue import RECORDS

BIN = Path(sys.executable).with_name("memory-bot")


@pytest.fixture
async def server():
    fake = await FakeLLMServer().start()
    yield fake
    await fake.close()


def _environ(tmp_path: Path, extra: dict) -> dict:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "EMBEDDER", "LLM_"))}
    environ.update({"MEMORY_BOT_DATA_DIR": str(tmp_path / "data"), "EMBEDDER": "hashing",
                    "XDG_CACHE_HOME": str(tmp_path / "xdg"), **extra})
    return environ


async def _run(args: list[str], environ: dict, cwd: Path) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        str(BIN), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=environ, cwd=cwd)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=300)
    return proc.returncode, out.decode(), err.decode()


async def test_judge_grades_the_answers(tmp_path: Path, server: FakeLLMServer) -> None:
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(RECORDS), encoding="utf-8")
    # file order: the assistant question (a1) comes second; answer, then judge, per question
    server.push(Answer("Strawberries."), Answer("yes"), Answer("I don't remember that."), Answer("no"))
    out = tmp_path / "report.json"
    code, stdout, stderr = await _run(
        ["eval", "longmemeval", str(data), "--judge", "--out", str(out)],
        _environ(tmp_path, {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.anthropic_url}),
        tmp_path)
    assert code == 0, stderr
    report = json.loads(out.read_text())
    answers = report["answers"]
    assert answers["questions"] == 2 and answers["judged"] == 2 and answers["accuracy"] == 0.5
    assert [r["response"] for r in answers["records"]] == ["Strawberries.", "I don't remember that."]
    assert "accuracy 0.500 over 2 graded" in stdout
    first_answer, first_judge = server.requests[0].json, server.requests[1].json
    assert "Humphrey" in json.dumps(first_answer["system"])  # the recalled memory
    assert first_answer["messages"][-1]["content"] == "What fruit does my tortoise Humphrey love?"
    judge_text = json.dumps(first_judge["messages"])
    assert "Strawberries." in judge_text and "yes or no" in judge_text
    assert len(server.requests) == 4


async def test_answer_needs_a_model(tmp_path: Path) -> None:
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(RECORDS), encoding="utf-8")
    code, _, stderr = await _run(["eval", "longmemeval", str(data), "--answer"],
                                 _environ(tmp_path, {"LLM_PROVIDER": "offline"}), tmp_path)
    assert code == 2 and "need a language model" in stderr
