"""Read-time date resolution: the days a question's relative time expressions point to.

"What did I do last Saturday?" asked on Tuesday 2023-05-30 is about 2023-05-27. At write time
every round and episode gets the keys of the days it is about (``memory.dates.time_keys``:
"2023-05-27 May 2023 Saturday 2023年5月27日"); this module gives a question the same keys for
the days it names relative to when it is asked, so its lexical query matches rounds of that day
(issue 5). Only expressions that name one day are resolved (last/this/next + weekday,
yesterday, the day before yesterday, tomorrow, N days/weeks ago, 上周五, 昨天, 前天, 3天前,
last weekend as its Saturday and Sunday); a bare weekday ("on Saturday mornings") is habitual
in a question and a span ("the past month", 上周) names no day, so neither adds keys. Nothing
here reads the wall clock.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

from memory.dates import local_day, resolve_relative_dates, time_keys

_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_NUMBER = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few)"
#: English expressions that name one day relative to the question's date.
_EN_DAY = re.compile(
    rf"\b(?:last|this|next|this coming|this past|past|coming)\s+{_WEEKDAY}\b"
    r"|\bthe day before yesterday\b|\byesterday\b|\btomorrow\b"
    rf"|\b{_NUMBER}\s+(?:days?|weeks?)\s+ago\b",
    re.IGNORECASE)
_EN_LAST_WEEKEND = re.compile(r"\b(?:last|this past|past)\s+weekend\b", re.IGNORECASE)
#: Chinese expressions that name one day (上周五, 这周三, 下下周一, 昨天, 前天, 明天, 3天前).
_ZH_DAY = re.compile(
    r"(?:下下|下|上|这|本)(?:个)?(?:周|星期|礼拜)[一二三四五六日天]|昨天|前天|明天|后天|大后天|\d+天[前后]")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
               "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3}


def _ago(phrase: str, today: date) -> date | None:
    m = re.match(rf"({_NUMBER})\s+(days?|weeks?)\s+ago", phrase, re.IGNORECASE)
    if m is None:
        return None
    raw = m.group(1).lower()
    n = int(raw) if raw.isdigit() else _EN_NUMBERS.get(raw)
    if n is None:
        return None
    return today - timedelta(days=n * (7 if m.group(2).lower().startswith("week") else 1))


def query_days(query: str, *, at: datetime, tz: str = "UTC") -> list[date]:
    """The calendar days a question names relative to when it is asked.

    Args:
        query: the question (English or Chinese).
        at: when it is asked (aware).
        tz: the user's IANA time zone.

    Returns:
        The days in order of mention, without repeats; empty when the question names none
        (see the module docstring for which expressions count).
    """
    today = local_day(at, tz)
    days: list[date] = []
    for m in _ZH_DAY.finditer(query):
        resolved = resolve_relative_dates(m.group(), at=at, tz=tz, lang="zh")
        days += [date(int(y), int(mo), int(d)) for y, mo, d in _ISO.findall(resolved)]
    for m in _EN_DAY.finditer(query):
        phrase = m.group()
        if (day := _ago(phrase, today)) is not None:
            days.append(day)
            continue
        if re.match(r"(?i)(?:last|this past|past)\s", phrase):
            # "last Friday" / "this past Friday": the most recent one before today
            name = re.search(_WEEKDAY, phrase, re.IGNORECASE).group().lower()
            wanted = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                      "sunday"].index(name)
            back = (today.weekday() - wanted) % 7 or 7
            days.append(today - timedelta(days=back))
            continue
        resolved = resolve_relative_dates(phrase, at=at, tz=tz, lang="en")
        days += [date(int(y), int(mo), int(d)) for y, mo, d in _ISO.findall(resolved)]
    if _EN_LAST_WEEKEND.search(query):
        saturday = today - timedelta(days=(today.weekday() - 5) % 7 or 7)
        days += [saturday, saturday + timedelta(days=1)]
    return list(dict.fromkeys(days))


def query_time_keys(query: str, *, at: datetime, tz: str = "UTC") -> str:
    """Lexical keys for the days a question names (``query_days``), written exactly as
    ``memory.dates.time_keys`` writes a round's days ("2023-05-27 May 2023 Saturday
    2023年5月27日"), space-separated; "" when it names none. Added to the question's lexical
    query only (the dense query stays the question)."""
    keys = []
    for day in query_days(query, at=at, tz=tz):
        noon = datetime.combine(day, time(12), tzinfo=timezone.utc)
        keys.append(time_keys(noon, "", "UTC"))
    return " ".join(keys)
