"""Redaction of secret-looking spans at ingestion, before anything is stored, logged or sent.

Kinds recognised (English and Chinese):

* ``password``: the value after "password", "passcode", "pwd", "pin", "密码", "口令" (with
  "is", ":", "=", "是" between);
* ``api key``: well-known token shapes (``sk-...``, ``sk-ant-...``, ``ghp_...``, ``github_pat_...``,
  ``xox[baprs]-...``, ``AKIA...``, ``AIza...``, Telegram bot tokens ``123456:ABC...``, JWTs) and
  values after "api key", "token", "secret", "密钥";
* ``card number``: 13-19 digits (spaces or dashes allowed) passing the Luhn check (ISO/IEC 7812);
* ``ID number``: Chinese resident ID (18 characters, GB 11643-1999 check digit), US SSN
  (``ddd-dd-dddd``), and values after "passport", "ID number", "身份证", "护照".

Redacted spans become ``[redacted <kind>]``; callers tell the user which kinds were not kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VALUE = r"[^\s,，。;；]{3,}"
_LABELLED = [
    ("password", re.compile(
        r"(?i)(\b(?:password|passcode|passwd|pwd|pin)\b\s*(?:is|was|:|=|：)?\s*)(" + _VALUE + ")")),
    ("password", re.compile(r"((?:密码|口令)\s*(?:是|为|:|：|=)?\s*)(" + _VALUE + ")")),
    ("api key", re.compile(
        r"(?i)(\b(?:api[ _-]?key|access[ _-]?token|auth[ _-]?token|token|secret)\b\s*(?:is|:|=|：)?\s*)"
        r"([A-Za-z0-9_\-./+=]{12,})")),
    ("api key", re.compile(r"((?:密钥|令牌)\s*(?:是|为|:|：|=)?\s*)([A-Za-z0-9_\-./+=]{8,})")),
    ("ID number", re.compile(
        r"(?i)(\b(?:passport|id number|id no\.?|ssn)\b\s*(?:number|no\.?)?\s*(?:is|:|=|：)?\s*)"
        r"([A-Z0-9][A-Z0-9\-]{5,})")),
    ("ID number", re.compile(r"((?:身份证|护照)(?:号码?|号)?\s*(?:是|为|:|：)?\s*)([A-Za-z0-9]{6,})")),
]
_SHAPES = [
    ("api key", re.compile(r"\bsk-(?:ant-)?[A-Za-z0-9_\-]{16,}")),
    ("api key", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b|\bgithub_pat_[A-Za-z0-9_]{20,}")),
    ("api key", re.compile(r"\bxox[baprs]-[A-Za-z0-9\-]{10,}")),
    ("api key", re.compile(r"\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_\-]{30,}")),
    ("api key", re.compile(r"\b\d{8,10}:[A-Za-z0-9_\-]{30,}\b")),
    ("api key", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("ID number", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
]
_CARD_RE = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
_CN_ID_RE = re.compile(r"(?<![0-9A-Za-z])\d{17}[\dXx](?![0-9A-Za-z])")


@dataclass(frozen=True, slots=True)
class Redaction:
    """The result of :func:`redact`: the cleaned text and the kinds removed (sorted, unique)."""

    text: str
    kinds: tuple[str, ...]


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cn_id_ok(value: str) -> bool:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    checks = "10X98765432"
    total = sum(int(c) * w for c, w in zip(value[:17], weights))
    return checks[total % 11] == value[17].upper()


def redact(text: str) -> Redaction:
    """Replace secret-looking spans in ``text`` with ``[redacted <kind>]``.

    Args:
        text: a user's message.

    Returns:
        The redacted text and the kinds found; ``kinds`` is empty when nothing was found.
    """
    kinds: set[str] = set()

    def labelled(kind: str):
        def repl(m: re.Match) -> str:
            if m.group(2).startswith("[redacted"):
                return m.group(0)
            kinds.add(kind)
            return f"{m.group(1)}[redacted {kind}]"
        return repl

    def shaped(kind: str, check=None):
        def repl(m: re.Match) -> str:
            value = re.sub(r"[ -]", "", m.group(0))
            if check is not None and not check(value):
                return m.group(0)
            kinds.add(kind)
            return f"[redacted {kind}]"
        return repl

    for kind, pattern in _SHAPES:
        text = pattern.sub(shaped(kind), text)
    text = _CN_ID_RE.sub(shaped("ID number", _cn_id_ok), text)
    text = _CARD_RE.sub(shaped("card number", _luhn_ok), text)
    for kind, pattern in _LABELLED:
        text = pattern.sub(labelled(kind), text)
    return Redaction(text=text, kinds=tuple(sorted(kinds)))


def describe_redaction(kinds: tuple[str, ...], lang: str) -> str:
    """Return the sentence that tells the user what was not kept ("" when nothing was)."""
    if not kinds:
        return ""
    if lang == "zh":
        names = {"password": "密码", "api key": "密钥", "card number": "卡号", "ID number": "证件号"}
        return "注意：你发来的" + "、".join(names.get(k, k) for k in kinds) + "我没有保存。"
    listed = ", ".join(kinds)
    return f"Note: I did not keep the {listed} you sent; it was removed before anything was stored."
