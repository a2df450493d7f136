"""Relative dates: the expressions resolved without dateparser give dateparser's dates."""

import re
from datetime import date, datetime, timezone

import pytest

import memory.dates as dates
from memory.dates import _add_months, resolve_relative_dates

AT = datetime(2026, 11, 30, 15, 0, tzinfo=timezone.utc)  # a Monday

FAST = [
    ("What should I cook tonight with sushi?", "What should I cook on 2026-11-30 with sushi?"),
    ("I stopped eating ramen last year.", "I stopped eating ramen on 2025-11-30."),
    ("my exam is tomorrow", "my exam is on 2026-12-01"),
    ("my exam is on tomorrow", "my exam is on 2026-12-01"),
    ("I went there yesterday", "I went there on 2026-11-29"),
    ("Today and yesterday", "on 2026-11-30 and on 2026-11-29"),
    ("see you next week", "see you on 2026-12-07"),
    ("Last week I met Bob", "on 2026-11-23 I met Bob"),
    ("next month we move", "on 2026-12-30 we move"),
    ("last month was hard", "on 2026-10-30 was hard"),
    ("this year I learned", "on 2026-11-30 I learned"),
    ("tomorrow morning", "on 2026-12-01"),
    # dateparser reads only the "tomorrow" of these (a new user's trial: saved as tomorrow)
    ("I fly to Rome the day after tomorrow", "I fly to Rome on 2026-12-02"),
    ("the day before yesterday we met", "on 2026-11-28 we met"),
]


@pytest.mark.parametrize(("text", "expected"), FAST)
def test_common_expressions_are_resolved_without_dateparser(text, expected, monkeypatch):
    def no_dateparser(*a, **k):
        raise AssertionError("dateparser called")

    import dateparser.search

    monkeypatch.setattr(dateparser.search, "search_dates", no_dateparser)
    assert resolve_relative_dates(text, at=AT) == expected


# dateparser reads "Today and yesterday" as one phrase (one date): not compared
@pytest.mark.parametrize(("text", "_"), [c for c in FAST if " and " not in c[0]])
def test_fast_path_gives_dateparsers_date(text, _, monkeypatch):
    fast = resolve_relative_dates(text, at=AT)
    monkeypatch.setattr(dates, "_FAST_NOT", re.compile(""))  # every text takes dateparser
    slow = resolve_relative_dates(text, at=AT)
    assert re.findall(r"\d{4}-\d{2}-\d{2}", fast) == re.findall(r"\d{4}-\d{2}-\d{2}", slow)


@pytest.mark.parametrize(("text", "expected"), [
    # the time of day stays (it was dropped: "a meeting on 2026-12-07")
    ("I have a meeting on Monday at 3pm", "I have a meeting on 2026-12-07 at 3pm"),
    ("see you next Friday at 10:30", "see you on 2026-12-04 at 10:30"),
    # a preposition takes the date itself ("until on ..." before)
    ("I am busy until Friday", "I am busy until 2026-12-04"),
    # habits and any such day are not dates ("every on 2026-12-04" before)
    ("we meet every Friday at 8:30 AM", "we meet every Friday at 8:30 AM"),
    ("I slept in until 11:00 AM on a Thursday", "I slept in until 11:00 AM on a Thursday"),
    ("I work on Mondays", "I work on Mondays"),
])
def test_dateparser_phrases(text, expected):
    assert resolve_relative_dates(text, at=AT) == expected


@pytest.mark.parametrize("text", ["last Friday we met",
                                  "3 days ago I fell", "wait for tomorrow's opening"])
def test_other_expressions_still_go_to_dateparser(text, monkeypatch):
    calls = []
    import dateparser.search

    real = dateparser.search.search_dates
    monkeypatch.setattr(dateparser.search, "search_dates",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    resolve_relative_dates(text, at=AT)
    assert calls


def test_months_are_clamped_like_relativedelta():
    assert _add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
    assert _add_months(date(2024, 2, 29), 12) == date(2025, 2, 28)
    assert _add_months(date(2026, 12, 15), 1) == date(2027, 1, 15)
    assert _add_months(date(2026, 1, 15), -1) == date(2025, 12, 15)
