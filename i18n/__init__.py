"""The message catalogue: every text the product shows a user, in English and Chinese.

The texts are gettext catalogues (``i18n/locales/<lang>/LC_MESSAGES/messages.po``, kept in git
and read at load with Babel's ``read_po``; no compiled ``.mo`` files). Message ids are symbolic
(``command.new.summary``), so the English catalogue is a translation like the Chinese one and
editing an English sentence changes no id. Texts are ``str.format`` templates
(``{count} fact(s)``); both catalogues of one id carry the same placeholders (a test checks it).

This package imports nothing of the product: ``bot`` and ``adapters`` read it, the memory core
does not (it returns data, the edges word it).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from babel.messages.pofile import read_po

#: The languages the product speaks (ISO 639-1 codes), the default first.
LANGUAGES: tuple[str, ...] = ("en", "zh")
DEFAULT_LANGUAGE = "en"
DOMAIN = "messages"
LOCALES = Path(__file__).parent / "locales"


def po_path(lang: str) -> Path:
    """The ``.po`` file of ``lang`` (one of :data:`LANGUAGES`)."""
    return LOCALES / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@lru_cache(maxsize=None)
def catalogue(lang: str) -> Mapping[str, str]:
    """Message id -> text of ``lang``, read once per process from its ``.po`` file (fuzzy and
    empty entries are left out, so they fall back to English).

    Raises:
        KeyError: ``lang`` is not one of :data:`LANGUAGES`.
    """
    if lang not in LANGUAGES:
        raise KeyError(f"no catalogue for language {lang!r}")
    with po_path(lang).open("rb") as fh:
        po = read_po(fh, locale=lang, domain=DOMAIN)
    return {m.id: m.string for m in po if m.id and isinstance(m.string, str) and m.string
            and not m.fuzzy}


def message_ids() -> frozenset[str]:
    """Every message id of the English catalogue (the reference)."""
    return frozenset(catalogue(DEFAULT_LANGUAGE))


def say(lang: str | None, msgid: str, /, **values: object) -> str:
    """The text ``msgid`` in ``lang`` (None or an unknown language: English), its placeholders
    filled from ``values``.

    Raises:
        KeyError: ``msgid`` is not in the English catalogue (a programming error, which the
            catalogue tests catch before release).
    """
    lang = lang if lang in LANGUAGES else DEFAULT_LANGUAGE
    template = catalogue(lang).get(msgid)
    if template is None:
        template = catalogue(DEFAULT_LANGUAGE)[msgid]
    return template.format(**values) if values else template


def language_of_code(code: str | None) -> str | None:
    """The product's language for a platform's language tag (Telegram ``language_code``
    ``"zh-hans"``, Discord ``Locale`` ``"zh-CN"`` / ``"en-US"``, a POSIX locale
    ``"zh_CN.UTF-8"``), or None when it is missing or a language the product does not speak."""
    if not code:
        return None
    primary = code.replace("_", "-").split("-", 1)[0].split(".", 1)[0].lower()
    return primary if primary in LANGUAGES else None
