"""Semantic memory, rules version: explicit requests become short facts about the user.

A fact is written when the user explicitly asks ("remember that ...", "from now on ...",
"记住 ...", "以后都 ..."). The request phrase is removed and first-person words are put in the
third person so the fact keeps its subject ("remember my sister Mia is vegan" -> "the user's
sister Mia is vegan"; "记住我不吃辣" -> "用户不吃辣"). Facts stay in the user's language. The
topic table, dedup and supersession arrive with the semantic-memory issue; here an exact
restatement confirms the existing fact instead of adding a twin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.text import language_of

#: Longest fact text kept, in characters; longer requests are refused with a message.
MAX_FACT_CHARS = 300

_EN_TRIGGERS = re.compile(
    r"""^\s*(?:please\s+|pls\s+|hey,?\s+|ok(?:ay)?,?\s+)?
    (?:remember(?:\s+that)?|don'?t\s+forget(?:\s+that)?|keep\s+in\s+mind(?:\s+that)?
       |note\s+that|please\s+note(?:\s+that)?|make\s+a\s+note(?:\s+that)?)\s*[:,]?\s+
    (?P<body>.+)$""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)
_EN_FROM_NOW = re.compile(
    r"^\s*(?:please\s+)?(?:from\s+now\s+on|going\s+forward|in\s+future|in\s+the\s+future)\s*,?\s+(?P<body>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_ZH_TRIGGERS = re.compile(r"^\s*(?:请|麻烦)?(?:你)?(?:帮我)?(?:记住|记得|记一下|记下)(?:了)?[：:，,\s]*(?P<body>.+)$", re.DOTALL)
_ZH_FROM_NOW = re.compile(r"^\s*(?:请|麻烦)?(?:你)?(?P<body>(?:以后都|以后|今后|从现在起|从现在开始)[：:，,\s]*.+)$", re.DOTALL)

_EN_PRONOUNS = [
    (re.compile(r"\bI am\b|\bI'm\b|\bIm\b", re.IGNORECASE), "the user is"),
    (re.compile(r"\bI was\b", re.IGNORECASE), "the user was"),
    (re.compile(r"\bI've\b|\bI have\b", re.IGNORECASE), "the user has"),
    (re.compile(r"\bI'd\b", re.IGNORECASE), "the user would"),
    (re.compile(r"\bI'll\b", re.IGNORECASE), "the user will"),
    (re.compile(r"\bI ((?:mainly|mostly|usually|often|always|never|really|also|only|just|still|"
                r"rarely|sometimes) )?([\w']+)"),
     lambda m: "the user " + (m.group(1) or "") + _third_person_verb(m.group(2))),
    (re.compile(r"\bI\b"), "the user"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bme\b", re.IGNORECASE), "the user"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "the user"),
]


@dataclass(frozen=True, slots=True)
class FactDraft:
    """A fact derived from a user's turn, before it is stored.

    Attributes:
        text: the fact, third person, in the user's language.
        kind: ``preference`` for "from now on"/"以后" requests, else ``note``.
        lang: ``en`` or ``zh``.
        too_long: True when the request exceeded :data:`MAX_FACT_CHARS` (nothing is written).
    """

    text: str
    kind: str
    lang: str
    too_long: bool = False


_MODALS = frozenset(
    "can could will would shall should must might may did was had used also really only "
    "just never always often usually still mainly mostly".split()
)
_IRREGULAR = {"do": "does", "don't": "doesn't", "dont": "doesn't", "have": "has", "go": "goes",
              "am": "is", "be": "is"}


def _third_person_verb(verb: str) -> str:
    """Conjugate a present-tense verb for "the user" (prefer -> prefers); others unchanged."""
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _MODALS or low.endswith("ed") or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _third_person_en(body: str) -> str:
    for pattern, replacement in _EN_PRONOUNS:
        body = pattern.sub(replacement, body)
    return body


def _third_person_zh(body: str) -> str:
    return body.replace("我们", "用户和大家").replace("我的", "用户的").replace("我", "用户")


def explicit_fact(text: str) -> FactDraft | None:
    """Return the fact an explicit memory request asks for, or None when ``text`` is not one.

    Only the user's own turns may be passed here; the assistant's words never become facts.
    """
    lang = language_of(text)
    body: str | None = None
    kind = "note"
    if m := _EN_TRIGGERS.match(text):
        body = m.group("body")
    elif m := _EN_FROM_NOW.match(text):
        body, kind = m.group("body"), "preference"
    elif m := _ZH_TRIGGERS.match(text):
        body = m.group("body")
    elif m := _ZH_FROM_NOW.match(text):
        body, kind = m.group("body"), "preference"
    if body is None:
        return None
    body = body.strip().rstrip("。.!！")
    if not body:
        return None
    if re.match(r"(?i)^(?:from now on|以后|今后)", body):
        kind = "preference"
    if len(body) > MAX_FACT_CHARS:
        return FactDraft(text="", kind=kind, lang=lang, too_long=True)
    fact = _third_person_zh(body) if lang == "zh" else _third_person_en(body)
    fact = fact[0].upper() + fact[1:] if fact[:1].islower() and lang == "en" else fact
    return FactDraft(text=fact, kind=kind, lang=lang)
