"""Recalled memory items as a person reads them (``/why``, the offline reply), in the reader's
language.

The memory core hands each recalled fact and episode over as parts (its own words and its
dates: ``memory.types.ItemParts``, here in its JSON form, the mapping a ``/why`` record keeps);
the framing around them ("since", "this conversation so far", "Open tasks") comes from the
catalogue, and dates are written with the catalogue's ``date.day`` pattern by Babel
(``2026-12-02`` in English, ``2026-12-02 星期三`` in Chinese). An item without parts (a round:
the conversation's own words and dates, or a record written before parts existed) is shown as
the prompt had it, the assistant's speaker label worded from the catalogue
(``item.round.assistant``: "助手" in Chinese); the prompt keeps the stored label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime

from babel.dates import format_date

from i18n import DEFAULT_LANGUAGE, LANGUAGES, say
from i18n.facts import fact_text

#: The speaker label of the assistant's turns as the memory core stores them in a round's text
#: (``memory.sessions``: ``"Assistant: ..."``) and the prompt shows them: a language model's
#: word, not the reader's.
STORED_ASSISTANT = "Assistant"
# where a speaker label starts in a round's line: the line's start, after its "(date) " prefix,
# or after the " / " that joins its turns (``memory.excerpt.excerpt``)
_ASSISTANT_LABEL = re.compile(rf"(?:^|(?<=\) )|(?<= / )){STORED_ASSISTANT}(?=: )")


def day_text(value: date | datetime | str | None, lang: str | None) -> str:
    """``value`` (a date, an aware datetime read as its UTC calendar day, or either in ISO 8601)
    written with the ``date.day`` pattern of ``lang``; ``offline.unknown_day`` for None."""
    lang = lang if lang in LANGUAGES else DEFAULT_LANGUAGE
    if value is None:
        return say(lang, "offline.unknown_day")
    if isinstance(value, str):
        value = datetime.fromisoformat(value) if "T" in value or " " in value \
            else date.fromisoformat(value)
    if isinstance(value, datetime):
        value = value.date()
    return format_date(value, say(lang, "date.day"), locale=lang)


def item_text(kind: str, parts: Mapping | None, text: str, lang: str | None) -> str:
    """The line of a recalled item for a person, without the prompt's leading ``"- "``.

    Args:
        kind: ``"fact"``, ``"episode"`` or ``"round"`` (``memory.types.ItemKind`` values).
        parts: ``ItemParts.as_dict()`` of the item, or None.
        text: the item's line in the prompt (shown when there are no parts).
        lang: the reader's language.
    """
    if not parts:
        shown = text.removeprefix("- ")
        return round_text(shown, lang) if kind == "round" else shown
    if kind == "fact":
        shown = fact_text(parts["text"])
        if parts.get("day") is None:  # a profile line: who the user is now, undated
            return shown
        if parts.get("current", True):
            return say(lang, "item.fact.current", text=shown, day=day_text(parts["day"], lang))
        return say(lang, "item.fact.past", text=shown, start=day_text(parts["day"], lang),
                   end=day_text(parts.get("until"), lang))
    if kind == "episode":
        pieces = [parts["text"]] if parts["text"] else []
        join = say(lang, "list.semicolon")
        if parts.get("open_tasks"):
            pieces.append(say(lang, "item.episode.open_tasks", tasks=join.join(parts["open_tasks"])))
        if parts.get("key_data"):
            pieces.append(say(lang, "item.episode.key_data", data=join.join(parts["key_data"])))
        body = " ".join(pieces) + (" …" if parts.get("cut") else "")
        msgid = "item.episode.running" if parts.get("running") else "item.episode"
        return say(lang, msgid, day=day_text(parts["day"], lang), body=body.strip())
    return round_text(text.removeprefix("- "), lang)


def round_text(line: str, lang: str | None) -> str:
    """A recalled exchange's line (``"(2026-12-02) Ana: ... / Assistant: ..."``) with the
    assistant's speaker label in ``lang`` (``item.round.assistant``); the people's names and
    everything said stay as they are."""
    label = say(lang, "item.round.assistant")
    return _ASSISTANT_LABEL.sub(lambda _: label, line)
