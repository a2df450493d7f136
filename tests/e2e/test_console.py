"""The console as a user runs it: ``memory-bot console`` in a subprocess, input piped, with
the default embedder, real SQLite and LanceDB in a temporary data folder, no keys, no network."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).with_name("memory-bot")


def run_console(tmp_path: Path, lines: list[str], *, user: str | None = None,
                env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "EMBEDDER"))}
    environ.update({"MEMORY_BOT_DATA_DIR": str(tmp_path / "data"), **(env or {})})
    args = [str(BIN), "console"] + (["--user", user] if user else [])
    return subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True,
                          cwd=tmp_path, env=environ, timeout=300)


def answers(stdout: str) -> dict[str, list[str]]:
    """Map each echoed input to the answer lines printed after it."""
    out: dict[str, list[str]] = {}
    current = None
    for line in stdout.splitlines()[1:]:
        if line.startswith("> "):
            current = line[2:]
            out.setdefault(current, [])
        elif current is not None:
            out[current].append(line)
    return out


SCENARIOS = {
    "en": ("I'm a quant developer, I mainly use Python, and I'm choosing a vector database "
           "these days.",
           ["What's a good recipe for pancakes?", "How do I fix a flat bike tyre?",
            "Recommend a science fiction novel", "What's the capital of Australia?"],
           "Let's continue with the vector database: where did we say to start?"),
    "zh": ("我是做量化策略的，主要用 Python，最近在选向量数据库。",
           ["今天午饭吃什么好？", "自行车胎破了怎么补？", "推荐一本科幻小说", "澳大利亚的首都是哪里？"],
           "帮我继续看向量数据库，上次说要从哪里开始？"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_first_session_is_recalled_after_four_unrelated_ones(tmp_path, lang):
    first, others, question = SCENARIOS[lang]
    lines = [first, "/new"]
    for other in others:
        lines += [other, "/new"]
    lines += [question, "/why"]
    result = run_console(tmp_path, lines)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0].startswith("memory-bot console - user local - model offline")
    assert first not in out[0]
    echoed = [line[2:] for line in out if line.startswith("> ")]
    assert echoed == lines
    replies = answers(result.stdout)
    assert all(replies[line] for line in lines)  # every input gets at least one line
    # /why has no words of its own: it speaks the language the user wrote in
    why = "\n".join(replies["/why"])
    if lang == "en":
        used, budget = map(int, re.search(r"(\d+) of (\d+) memory tokens", why).groups())
    else:
        budget, used = map(int, re.search(r"用了 (\d+) 个记忆 token 中的 (\d+) 个", why).groups())
    assert used <= budget == 1000
    session_1 = "(session 1)" if lang == "en" else "（会话 1）"
    first_session_items = [line for line in why.splitlines()[1:] if session_1 in line]
    assert first_session_items, why
    assert "向量数据库" in first_session_items[0] or "vector database" in first_session_items[0]
    assert result.stderr == ""


def test_forget_all_then_nothing_is_recalled(tmp_path):
    lines = ["remember I mainly use Python", "I'm choosing a vector database", "/new",
             "/forget all", "yes", "/memories", "vector database Python", "/why"]
    result = run_console(tmp_path, lines)
    assert result.returncode == 0, result.stderr
    replies = answers(result.stdout)
    assert replies["yes"][0].startswith("Deleted everything")
    assert replies["/memories"][0] == "You have no saved memories."
    assert replies["/why"][0].startswith("For my last reply I recalled 0 memory item(s)")


def test_memory_survives_a_restart_and_users_are_separate(tmp_path):
    first = run_console(tmp_path, ["remember I live in Graz"], user="bob")
    assert first.returncode == 0
    again = run_console(tmp_path, ["/memories"], user="bob")
    assert answers(again.stdout)["/memories"][0].startswith("1. The user lives in Graz (")
    other = run_console(tmp_path, ["/memories"], user="carol")
    assert answers(other.stdout)["/memories"][0] == "You have no saved memories."
    assert (tmp_path / "data" / "logs" / "memory-bot.log").exists()


def test_end_of_input_is_quit_and_logs_stay_off_stdout(tmp_path):
    result = run_console(tmp_path, ["hello", "/help"])
    assert result.returncode == 0
    assert result.stdout.splitlines()[-1] == "Goodbye."
    assert not re.search(r"\b(INFO|DEBUG|WARNING)\b|memory\.(service|stores)", result.stdout)
    log = (tmp_path / "data" / "logs" / "memory-bot.log").read_text()
    assert "recall thread=" in log and "hello" not in log  # ids and counts, no message text
