"""Facts as the user reads them: the stored text of a fact, worded for display.

The memory core stores a fact with its dates resolved to ISO form (``2026-12-04``), worded as
the sentence it was derived from ("On 2026-12-04 is the user's sister's birthday" for
"tomorrow is my sister's birthday"). What the model sees stays exactly that; what a person
reads (``/memories``, the notes under a reply, the offline reply, ``/forget`` listings) reads
naturally in the fact's own language:

- every date gets its weekday: ``2026-12-04 (Friday)``, ``2026-12-04（星期五）``;
- a sentence whose subject is a date is turned around: "On 2026-12-04 is the user's sister's
  birthday" -> "The user's sister's birthday is on 2026-12-04 (Friday)", "2026-12-01是用户妹妹的
  生日" -> "用户妹妹的生日是2026-12-01（星期二）";
- inside another sentence (:func:`mid_sentence`) an English fact loses the capital of its first
  word when that word is an article or pronoun ("until 2024-12: ..., then the user ...").
"""

from __future__ import annotations

import re
from datetime import date

_ISO = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])(?!\s*[(（])")
_CJK = re.compile(r"[\u3400-\u9fff]")
_WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WEEKDAYS_ZH = "一二三四五六日"
_DAY = r"\d{4}-\d{2}-\d{2}"
#: "On 2026-12-04 is/are/was/were/will be X" (a date as the subject of a copula)
_EN_DATE_SUBJECT = re.compile(rf"^On ({_DAY}) (is|are|was|were|will be) (.+?)([.!?]?)$")
#: "2026-12-01是X" / "2026-12-01 是 X"
_ZH_DATE_SUBJECT = re.compile(rf"^({_DAY})\s*是\s*(.+?)([。！？]?)$")
#: words that start an English sentence and are lower case inside one
_LOWER_INSIDE = frozenset("the a an this that these those my our his her their its on in at "
                          "from since until".split())


def _weekday(match: re.Match, zh: bool) -> str:
    try:
        day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:  # not a real date: left as written
        return match.group(0)
    if zh:
        return f"{match.group(0)}（星期{_WEEKDAYS_ZH[day.weekday()]}）"
    return f"{match.group(0)} ({_WEEKDAYS_EN[day.weekday()]})"


def fact_text(text: str) -> str:
    """``text`` (a stored fact) as a person reads it; see the module docstring. Chinese when
    the fact holds Chinese characters, else English."""
    zh = bool(_CJK.search(text))
    if zh:
        if m := _ZH_DATE_SUBJECT.match(text):
            text = f"{m.group(2)}是{m.group(1)}{m.group(3)}"
    elif m := _EN_DATE_SUBJECT.match(text):
        rest = m.group(3)
        text = f"{rest[:1].upper()}{rest[1:]} {m.group(2)} on {m.group(1)}{m.group(4)}"
    return _ISO.sub(lambda m: _weekday(m, zh), text)


def mid_sentence(text: str) -> str:
    """:func:`fact_text` of ``text`` for a place inside another sentence (after "then",
    inside brackets): an English first word that is lower case inside a sentence loses its
    capital ("The user lives in Graz" -> "the user lives in Graz"; names keep theirs)."""
    text = fact_text(text)
    first = text.split(" ", 1)[0]
    if first.lower() in _LOWER_INSIDE and first[:1].isupper() and not _CJK.search(text):
        return text[:1].lower() + text[1:]
    return text
