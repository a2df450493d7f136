"""Inline buttons: ``/memories`` pages and confirmations.

Callback data (at most 64 bytes) is ``mem:<page>:<mode>`` for a page of ``/memories [mode]``
and ``cf:<y|n>:<user id>`` for a confirmation asked of one user.
"""

from __future__ import annotations

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from i18n import DEFAULT_LANGUAGE, say

from adapters.telegram._format import utf16_len

#: Lines of ``/memories`` shown per page.
PAGE_LINES = 10
#: Most UTF-16 units of one page (below the message limit, leaving room for the page line).
PAGE_UNITS = 3800


def paginate(text: str, *, lines_per_page: int = PAGE_LINES) -> list[str]:
    """Split a listing into pages of whole lines (at most ``lines_per_page`` lines and
    :data:`PAGE_UNITS` units each; a longer single line is a page of its own)."""
    pages: list[list[str]] = [[]]
    size = 0
    for line in text.split("\n"):
        units = utf16_len(line) + 1
        current = pages[-1]
        if current and (len(current) >= lines_per_page or size + units > PAGE_UNITS):
            pages.append([])
            size = 0
        pages[-1].append(line)
        size += units
    return ["\n".join(p) for p in pages if any(line.strip() for line in p)] or [text]


def page_view(pages: list[str], page: int, mode: str,
              lang: str = DEFAULT_LANGUAGE) -> tuple[str, InlineKeyboardMarkup | None]:
    """The text of ``page`` (clamped) with its page line, and its Previous/Next buttons."""
    page = max(0, min(page, len(pages) - 1))
    if len(pages) == 1:
        return pages[0], None
    row = []
    if page > 0:
        row.append(InlineKeyboardButton(say(lang, "button.previous"),
                                        callback_data=f"mem:{page - 1}:{mode}"))
    if page < len(pages) - 1:
        row.append(InlineKeyboardButton(say(lang, "button.next"),
                                        callback_data=f"mem:{page + 1}:{mode}"))
    line = say(lang, "button.page", page=page + 1, pages=len(pages))
    return f"{pages[page]}\n{line}", InlineKeyboardMarkup([row])


def confirm_buttons(user_id: int, lang: str = DEFAULT_LANGUAGE) -> InlineKeyboardMarkup:
    """Yes / Cancel buttons (in ``lang``) for a confirmation asked of ``user_id``."""
    return InlineKeyboardMarkup([[
        InlineKeyboardButton(say(lang, "button.yes"), callback_data=f"cf:y:{user_id}"),
        InlineKeyboardButton(say(lang, "button.cancel"), callback_data=f"cf:n:{user_id}"),
    ]])


def parse(data: str | None) -> tuple[str, str, str] | None:
    """``(kind, first, second)`` of our callback data, or None for anything else."""
    if not data:
        return None
    parts = data.split(":", 2)
    if len(parts) != 3 or parts[0] not in {"mem", "cf"}:
        return None
    return parts[0], parts[1], parts[2]
