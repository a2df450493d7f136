"""Recalled items as a person reads them: the memory core hands facts and episodes over as
parts (``memory.item_parts``), the edges word them from the catalogue (``i18n.items``).

In English the words are the prompt's own line (what ``/why`` showed before), wherever the
line's token bound cut it; in Chinese none of the framing is English and dates carry the
weekday.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

import pytest

from i18n.items import day_text, item_text
from memory.types import ChatKind, Episode, Fact, FactStatus, KeyDatum, Scope
from tests.conftest import T0

_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def _fact(text: str, *, status=FactStatus.ACTIVE) -> Fact:
    return Fact(id=1, user_id=1, kind="profile", text=text, topic="home", status=status,
                created_at=T0, valid_from=T0,
                valid_to=T0 + timedelta(days=3) if status is not FactStatus.ACTIVE else None,
                last_confirmed_at=T0, last_recalled_at=None, confirmations=1,
                origin_thread_id=1, origin_kind=ChatKind.PRIVATE, origin_title=None,
                source_turn_ids=(1,), lang="en")


def _episode(summary: str, tasks=(), data=(), *, running=False) -> Episode:
    return Episode(id=4, thread_id=1, session_id=2, summary=summary,
                   key_data=tuple(KeyDatum(d, 1) for d in data), turn_ids=(1, 2),
                   started_at=T0, ended_at=T0, created_at=T0, scope=Scope.private(1),
                   open_tasks=tuple(tasks), status="running" if running else "closed")


def test_facts_read_in_english_as_the_prompt_has_them_and_in_chinese_without_english():
    from memory.item_parts import fact_parts
    from memory.recaller import _fact_line

    for fact in (_fact("The user lives in Graz"),
                 _fact("The user lives in Vienna", status=FactStatus.SUPERSEDED)):
        line, parts = _fact_line(fact), fact_parts(fact).as_dict()
        assert item_text("fact", parts, line, "en") == line.removeprefix("- ")
    graz = fact_parts(_fact("用户住在格拉茨")).as_dict()
    assert item_text("fact", graz, "", "zh") == "用户住在格拉茨（自 2026-11-30 星期一 起）"
    vienna = fact_parts(_fact("用户住在维也纳", status=FactStatus.SUPERSEDED)).as_dict()
    shown = item_text("fact", vienna, "", "zh")
    assert "2026-11-30 星期一" in shown and "2026-12-03 星期四" in shown
    assert not _LATIN_WORD.search(shown)
    # a date inside the fact gets its weekday, as /memories shows it; a profile line is undated
    birthday = fact_parts(_fact("用户妹妹的生日是2026-12-11"), dated=False).as_dict()
    assert item_text("fact", birthday, "", "zh") == "用户妹妹的生日是2026-12-11（星期五）"


def test_day_text_follows_the_catalogue_pattern_of_the_language():
    assert day_text(T0, "en") == "2026-11-30"
    assert day_text(T0.isoformat(), "zh") == "2026-11-30 星期一"
    assert day_text("2026-12-06", "zh") == "2026-12-06 星期日"
    assert day_text(None, "en") == "?"


_LABELS = ("Open", "tasks:", "Key", "data:")


def _content_words(text: str) -> list[str]:
    """The words of an English episode line up to its cut, without a partly shown label at
    the end or the separator after the last value."""
    words = text.removesuffix(" …").split(" ")
    while words and words[-1] in _LABELS:
        words.pop()
    if words:
        words[-1] = words[-1].rstrip(";")
    return words


@pytest.mark.parametrize("running", [False, True])
async def test_an_episode_reads_as_its_prompt_line_wherever_the_bound_cuts_it(harness, running):
    episode = _episode("Planned the Lisbon trip with Anna and Marco for the conference in March.",
                       tasks=("book the hotel near the venue", "renew the passport"),
                       data=("budget 1200 euros per person", "talk on 2027-03-14"),
                       running=running)
    recaller = harness.memory.recaller
    whole = recaller._episode_item(episode, score=0.5)
    assert item_text("episode", whole.parts.as_dict(), whole.text, "en") == whole.text[2:]
    cuts = set()
    for limit in range(8, whole.tokens + 1):
        recaller.policy = replace(recaller.policy, episode_prompt_tokens=limit)
        item = recaller._episode_item(episode, score=0.5)
        if "Planned" not in item.text:  # a bound below the date and the first word
            continue
        cuts.add(item.text)
        shown = item_text("episode", item.parts.as_dict(), item.text, "en")
        if item.parts.cut:
            assert shown.endswith(" …")
        assert _content_words(shown) == _content_words(item.text[2:]), (limit, item.text)
    assert len(cuts) > 10  # the bound went through the summary, the tasks and the key data


async def test_a_chinese_episode_has_chinese_framing(harness):
    episode = _episode("计划了里斯本之行。", tasks=("订酒店", "续签护照"), data=("预算1200欧元",),
                       running=True)
    item = harness.memory.recaller._episode_item(episode, score=0.5)
    assert "Open tasks" in item.text  # the model's prompt keeps its framing
    shown = item_text("episode", item.parts.as_dict(), item.text, "zh")
    assert shown == "（2026-11-30 星期一，本次对话至今）计划了里斯本之行。 待办：订酒店；续签护照 要点：预算1200欧元"
    assert not _LATIN_WORD.search(shown)


def test_an_item_without_parts_is_shown_as_the_prompt_has_it():
    line = "- (2026-11-30) Ana: I live in Graz"
    assert item_text("round", None, line, "zh") == line[2:]
    assert item_text("fact", None, line, "en") == line[2:]


def _round_line(turns: list[tuple[str, str, str]], *, limit: int = 1000) -> str:
    """A recalled exchange's prompt line, as recall renders it (``memory.excerpt``)."""
    from memory.excerpt import TurnLine, excerpt
    from memory.tokens import HeuristicTokenCounter

    lines = [TurnLine(n, speaker, text, role) for n, (speaker, text, role) in enumerate(turns)]
    line, _ = excerpt(lines, "酒店", prefix="- (2026-12-02) ", limit=limit,
                      count=HeuristicTokenCounter().count)
    return line


def test_an_exchange_names_the_assistant_in_the_readers_language():
    whole = _round_line([("小明", "我还需要订酒店", "user"),
                         ("Assistant", "好的，我记下了酒店的事。", "assistant")])
    assert item_text("round", None, whole, "en") == whole.removeprefix("- ")  # as the prompt
    zh = item_text("round", None, whole, "zh")
    assert zh == "(2026-12-02) 小明: 我还需要订酒店 / 助手: 好的，我记下了酒店的事。"
    # a line cut to the assistant's turn starts with its label; a person's words stay theirs
    cut = _round_line([("Assistant", "酒店订好了。" * 100, "assistant")], limit=40)
    assert cut.startswith("- (2026-12-02) Assistant: ")
    assert item_text("round", None, cut, "zh").startswith("(2026-12-02) 助手: ")
    said = _round_line([("Ana", "tell the Assistant: no hotel", "user")])
    assert item_text("round", None, said, "zh") == said.removeprefix("- ")
