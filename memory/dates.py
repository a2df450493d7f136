"""Relative dates resolved at write time against the message's own timestamp.

"My exam is tomorrow", said on 2026-11-30 in the user's time zone, is stored as "My exam is on
2026-12-01" (resolved later against a stale "today", a relative date would be
wrong). English and Chinese relative expressions are found with dateparser's ``search_dates``
using ``RELATIVE_BASE`` (the message time converted to the user's zone); Chinese weekday
expressions (下周五, 这周三, 周日), which dateparser reads as the whole week, are resolved
here. Absolute dates are left as they are. Nothing here reads the wall clock.
"""

from __future__ import annotations

import logging
import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

log = logging.getLogger(__name__)

_EN_CUE = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|next|last|this|coming|ago|in \d+ (?:days?|weeks?|months?|years?)"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b", re.IGNORECASE)
#: Two days away: dateparser reads only the "tomorrow" of "the day after tomorrow".
_TWO_DAYS = re.compile(r"\b(?:on\s+)?(?:the\s+)?day\s+(after\s+tomorrow|before\s+yesterday)\b",
                       re.IGNORECASE)
#: Words before a weekday that make it a habit or any such day, not a date.
_RECURRING = re.compile(r"(?i)\b(?:every|each|on\s+an?|most|some|any)\s+$")
_ANY_DAY = re.compile(r"(?i)\b(?:every|each|on\s+an?)\s+\w*day\b")
#: Prepositions that take the date itself ("until 2023-05-06", not "until on 2023-05-06").
_PREPOSITION = re.compile(r"(?i)\b(?:until|till|by|before|after|since|from|to|for)\s+$")
#: A clock time inside a resolved phrase ("on Monday at 3pm"), kept after the date.
_CLOCK = re.compile(r"\b(?:at\s+)?\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b(?:at\s+)?\d{1,2}:\d{2}\b",
                    re.IGNORECASE)
_ZH_CUE = re.compile(r"今天|今晚|明天|后天|大后天|昨天|前天|下周|上周|这周|本周|下个?星期|上个?星期|下个月|上个月|明年|去年|今年|\d+天[前后]")
_ZH_WEEKDAY = re.compile(r"(下下|下|上|这|本)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])")
_ZH_DAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_FIXED = {"大后天": 3, "后天": 2, "明天": 1, "今天": 0, "今晚": 0, "昨天": -1, "前天": -2}
_ABSOLUTE = re.compile(r"\d{4}[-/年]\d{1,2}|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
                       r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}", re.IGNORECASE)


#: The expressions resolved here without dateparser (its ``search_dates`` costs 2-10 ms a
#: call; these are most of the relative dates people write): a day word, with an optional part
#: of the day, and "last / next / this" week, month or year. Same results as dateparser's with
#: the settings below (tests/unit/test_dates.py compares them).
_FAST_EXPR = (r"(?:(today|tonight|tomorrow|yesterday)(?:\s+(?:morning|afternoon|evening|night))?"
              r"|(last|next|this)\s+(week|month|year))\b(?!['\u2019]s)")
_FAST = re.compile(r"\b" + _FAST_EXPR, re.IGNORECASE)
_ON_FAST = re.compile(r"\bon\s+(?=" + _FAST_EXPR + ")", re.IGNORECASE)  # "on" + one: one "on"
_FAST_NOT = re.compile(r"\bday\s+(?:before|after)\b", re.IGNORECASE)
_DAY_OFFSET = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}
_STEP = {"last": -1, "next": 1, "this": 0}


def _add_months(day: date, months: int) -> date:
    """``day`` moved by whole months, the day clamped to the month's length (as dateutil's
    ``relativedelta``, which dateparser uses: 2024-01-31 + 1 month = 2024-02-29)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    last = (date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)).day
    return date(year, month, min(day.day, last))


def _fast_date(m: re.Match, today: date) -> date:
    if m.group(1):
        return today + timedelta(days=_DAY_OFFSET[m.group(1).lower()])
    step, unit = _STEP[m.group(2).lower()], m.group(3).lower()
    if unit == "week":
        return today + timedelta(weeks=step)
    return _add_months(today, step * (12 if unit == "year" else 1))


def local_day(at: datetime, tz: str) -> date:
    """The calendar day of the aware instant ``at`` in the IANA zone ``tz``."""
    return at.astimezone(ZoneInfo(tz)).date()


def _zh_weekday(m: re.Match, today: date) -> date:
    prefix, day = m.group(1) or "", _ZH_DAYS[m.group(2)]
    monday = today - timedelta(days=today.weekday())
    weeks = {"下下": 2, "下": 1, "上": -1}.get(prefix, 0)
    target = monday + timedelta(weeks=weeks, days=day)
    if not prefix and target < today:  # a bare "周五" means the coming one
        target += timedelta(weeks=1)
    return target


def resolve_relative_dates(text: str, *, at: datetime, tz: str = "UTC", lang: str = "en") -> str:
    """Replace relative date expressions in ``text`` by ISO dates (``YYYY-MM-DD``).

    Args:
        text: a statement (a fact or a key-data line).
        at: when the message was sent (aware).
        tz: the user's IANA time zone (``/timezone``, else ``DEFAULT_TIMEZONE``).
        lang: ``en`` or ``zh``.

    Returns:
        The text with relative dates made absolute; unchanged when it has none.
    """
    today = local_day(at, tz)
    if lang == "zh" or _ZH_CUE.search(text):
        text = _ZH_WEEKDAY.sub(lambda m: _zh_weekday(m, today).isoformat(), text)
        for word, offset in _ZH_FIXED.items():
            text = text.replace(word, (today + timedelta(days=offset)).isoformat())
        text = re.sub(r"(\d+)天([前后])", lambda m: (today + timedelta(
            days=int(m.group(1)) * (1 if m.group(2) == "后" else -1))).isoformat(), text)
    text = _TWO_DAYS.sub(lambda m: "on " + (today + timedelta(
        days=2 if m.group(1).lower().startswith("after") else -2)).isoformat(), text)
    if not _EN_CUE.search(text):
        return text
    if not _FAST_NOT.search(text) and not _EN_CUE.search(_FAST.sub(" ", text)):
        # every cue is one of the common expressions: resolved here, no dateparser call
        return _FAST.sub(lambda m: f"on {_fast_date(m, today).isoformat()}",
                         _ON_FAST.sub("", text))
    try:
        from dateparser.search import search_dates

        base = datetime.combine(today, at.astimezone(ZoneInfo(tz)).time())
        found = search_dates(text, languages=["en"], settings={
            "RELATIVE_BASE": base, "PREFER_DATES_FROM": "future", "RETURN_AS_TIMEZONE_AWARE": False,
        }) or []
    except Exception:  # dateparser is a helper here: never lose the statement over it
        log.warning("relative date resolution failed", exc_info=True)
        return text
    for phrase, value in found:
        if not _EN_CUE.search(phrase) or _ABSOLUTE.search(phrase):
            continue
        where = re.search(r"(?i)\bon\s+" + re.escape(phrase) + "|" + re.escape(phrase), text)
        if where is None or _RECURRING.search(text[:where.start()]) or _ANY_DAY.search(phrase) \
                or re.match(r"s\b", text[where.end():]):  # "every Friday", "on a Thursday", "Fridays"
            continue
        day = value.date().isoformat()
        # "until Saturday" -> "until 2023-05-06" (no "until on"); otherwise "on 2023-05-06"
        replacement = day if _PREPOSITION.search(text[:where.start()]) else "on " + day
        if clock := _CLOCK.search(phrase):  # "on Monday at 3pm" keeps its "at 3pm"
            time_text = clock.group(0).strip()
            replacement += " " + (time_text if time_text.lower().startswith("at") else f"at {time_text}")
        text = text[:where.start()] + replacement + text[where.end():]
    return text


_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_SENTENCE_END = re.compile(r"(?<=[.!?\n。！？])\s+|(?<=[。！？\n])")


def _cue_sentences(text: str) -> str:
    """The sentences of ``text`` that hold a relative-date cue, joined (the others can add no
    date): dateparser's cost grows with the text, and a long reply in a round held one or two
    such sentences in 2,000 characters (LongMemEval_S: 16 s of a haystack's replay went to
    dateparser on whole rounds)."""
    if len(text) <= 200 or not (_EN_CUE.search(text) or _ZH_CUE.search(text)
                                or _TWO_DAYS.search(text)):
        return text if len(text) <= 200 else ""
    kept = [p for p in _SENTENCE_END.split(text)
            if _EN_CUE.search(p) or _ZH_CUE.search(p) or _TWO_DAYS.search(p)]
    return " ".join(kept)


def time_keys(at: datetime, text: str, tz: str = "UTC") -> str:
    """Search keys for the dates a memory is about: the day it was said and the dates its
    relative expressions point to ("yesterday" said on 2023-05-08 -> 2023-05-07), each as
    ``YYYY-MM-DD``, month name, year and weekday (e.g. "2023-05-07 May 2023 Sunday"), so a
    question that names the time ("in May 2023", "last Sunday", "2023年5月") finds it."""
    days = [local_day(at, tz)]
    text = _cue_sentences(text)
    resolved = resolve_relative_dates(text, at=at, tz=tz, lang="zh" if _ZH_CUE.search(text) else "en")
    if resolved != text:
        for y, m, d in _ISO.findall(resolved):
            try:
                days.append(date(int(y), int(m), int(d)))
            except ValueError:
                continue
    keys = []
    for day in dict.fromkeys(days):
        keys.append(f"{day.isoformat()} {day:%B} {day.year} {day:%A} {day.year}年{day.month}月{day.day}日")
    return " ".join(keys)


#: Entries of the zone database that are not zones: the host's own zone link (``localtime``),
#: the POSIX rules template (``posixrules``) and the "no zone set" placeholder (``Factory``).
#: ``zoneinfo.available_timezones`` lists them on some systems.
NOT_ZONES = frozenset({"localtime", "posixrules", "factory"})
#: The longest IANA zone name is 32 characters (America/Argentina/ComodRivadavia).
MAX_ZONE_CHARS = 64


def _zone_names() -> dict[str, str]:
    from zoneinfo import available_timezones

    return {name.lower(): name for name in available_timezones()
            if name.lower() not in NOT_ZONES and not name.startswith(("posix/", "right/"))}


_ZONES: dict[str, str] | None = None


def canonical_zone(name: str) -> str | None:
    """The IANA zone ``name`` stands for, in its own spelling (``europe/vienna`` ->
    ``Europe/Vienna``), or None when it is no zone: unknown, too long, or one of
    :data:`NOT_ZONES`. Never raises (a 5,000-character name is simply unknown)."""
    global _ZONES
    name = name.strip()
    if not name or len(name) > MAX_ZONE_CHARS:
        return None
    if _ZONES is None:
        _ZONES = _zone_names()
    found = _ZONES.get(name.lower())
    if found is None:
        return None
    try:
        ZoneInfo(found)
    except (KeyError, ValueError, OSError):  # listed but unreadable (ZoneInfoNotFoundError
        return None                          # is a KeyError)
    return found
