"""Read-time date resolution (issue 5): the days a question names relative to when it is asked
become lexical keys, so rounds said on that day match."""

from __future__ import annotations

from datetime import date, datetime, timezone

from memory import service
from memory.dates import time_keys
from memory.types import ItemKind
from memory.when import query_days, query_time_keys

TUESDAY = datetime(2023, 5, 30, 21, 0, tzinfo=timezone.utc)


def test_a_question_naming_a_past_weekday_gets_that_day():
    assert query_days("What did I do last Saturday?", at=TUESDAY) == [date(2023, 5, 27)]
    assert query_days("How much cashback did I earn last Thursday?", at=TUESDAY) == [
        date(2023, 5, 25)]
    assert query_days("What did I buy yesterday?", at=TUESDAY) == [date(2023, 5, 29)]
    assert query_days("What milestone did I mention four weeks ago?", at=TUESDAY) == [
        date(2023, 5, 2)]
    assert query_days("What game did I beat last weekend?", at=TUESDAY) == [
        date(2023, 5, 27), date(2023, 5, 28)]


def test_chinese_relative_days_are_resolved_against_the_question_date():
    assert query_days("上周五我做了什么？", at=TUESDAY) == [date(2023, 5, 26)]
    assert query_days("前天我去了哪里？", at=TUESDAY) == [date(2023, 5, 28)]
    assert query_days("那个时间是下周五下午两点的活动是什么？", at=TUESDAY) == [date(2023, 6, 9)]


def test_habits_spans_and_plain_questions_name_no_day():
    for question in ("What time do I wake up on Saturday mornings?",
                     "How many art events did I attend in the past month?",
                     "What is my sister's phone number?", "我上周做了什么？", "今天天气真好"):
        assert query_days(question, at=TUESDAY) == [], question
        assert query_time_keys(question, at=TUESDAY) == ""


def test_query_keys_are_written_like_the_round_keys():
    said = datetime(2023, 5, 27, 9, 0, tzinfo=timezone.utc)
    assert query_time_keys("What did I do last Saturday?", at=TUESDAY) == time_keys(said, "")


def test_the_users_time_zone_decides_the_day():
    # 23:30 UTC on Tuesday is already Wednesday in Shanghai: "yesterday" is Tuesday there
    late = datetime(2023, 5, 30, 23, 30, tzinfo=timezone.utc)
    assert query_days("what did I do yesterday?", at=late) == [date(2023, 5, 29)]
    assert query_days("what did I do yesterday?", at=late, tz="Asia/Shanghai") == [
        date(2023, 5, 30)]


async def test_recall_finds_the_round_of_the_day_the_question_names(harness, monkeypatch):
    # Saturday's round shares few of the question's words; the day's keys bring it in
    harness.clock.set(datetime(2023, 5, 27, 10, 0, tzinfo=timezone.utc))  # a Saturday
    await harness.say("Picked up plums from a market stall.")
    await harness.say("/new")
    harness.clock.set(datetime(2023, 5, 29, 10, 0, tzinfo=timezone.utc))  # Monday
    await harness.say("I buy pears at the farmers market every week.")
    await harness.say("/new")
    harness.clock.set(TUESDAY)
    ctx = await harness.memory.context(harness.message("x"))
    question = "What did I buy at the farmers market last Saturday?"

    async def rounds() -> list[str]:
        result = await harness.memory.recall(ctx, question, touch=False)
        return [i.text for i in result.ranked if i.kind is ItemKind.ROUND]

    assert service.QUERY_DATE_KEYS is False  # off by default: no shared-split gain measured
    assert not any("plums" in text for text in await rounds())
    monkeypatch.setattr(service, "QUERY_DATE_KEYS", True)
    assert any("plums" in text for text in await rounds())
