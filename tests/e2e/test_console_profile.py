"""The profile block as a user meets it: ``memory-bot console`` piped, the default embedder,
real SQLite and LanceDB, no keys. A lasting fact said in the first conversation is at hand two
unrelated conversations later for a question that shares no word with it."""

from __future__ import annotations

import pytest

from i18n import say
from tests.e2e.test_console import answers, run_console

SEED = {
    "en": ("Remember that I'm a quant developer and I mainly use Python.",
           ["What's a good recipe for pancakes?", "How do I fix a flat bike tyre?"],
           "What framework should I learn?", ("quant", "Python")),
    "zh": ("记住，我是做量化的，主要用Python。",
           ["今天午饭吃什么好？", "自行车胎破了怎么补？"],
           "帮我看看我现在适合学什么框架", ("量化", "Python")),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_seed_example_after_two_unrelated_conversations(tmp_path, lang):
    fact, others, question, words = SEED[lang]
    lines = [fact, "/new"]
    for other in others:
        lines += [other, "/new"]
    lines += [question, "/why"]
    result = run_console(tmp_path, lines)
    assert result.returncode == 0, result.stderr
    replies = answers(result.stdout)
    reply = "\n".join(replies[question])
    assert all(w in reply for w in words), reply  # the offline reply shows it
    why = replies["/why"]  # no words of its own: in the language the user wrote in
    profile = say(lang, "why.profile", count=0, tokens=0).split("0")[0]
    start = next(i for i, line in enumerate(why) if line.startswith(profile))
    end = next((i for i, line in enumerate(why) if line == say(lang, "why.recalled")),
               len(why))
    part = "\n".join(why[start + 1:end])
    assert all(w in part for w in words), why  # the profile part holds it
    for other in others:  # the unrelated conversations' replies showed it too (first
        assert all(w in "\n".join(replies[other]) for w in words)  # reply of a session)
    assert result.stderr == ""
