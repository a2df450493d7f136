"""Redaction of secret-looking spans at ingestion, before anything is stored, logged or sent.

Kinds recognised (English and Chinese):

* ``password``: the value after "password", "passcode", "pwd", "pin", "密码", "口令" (with
  "is", ":", "=", "是" between); and a credential said in ordinary words, by its structure: a
  credential noun (password, passcode, passphrase, PIN, login, credentials, network key, door /
  alarm / safe / lock code or combination, "code for the garage"; 密码, 口令, 门禁码, 解锁码 ...),
  an optional phrase naming what it opens ("for my laptop", "of the vault", up to five words),
  "is" / "are" / ":" / 是 / 为 / 改成 (Chinese allows an adverb first: 一直是, 分别是), then the
  value ("alex / Zebra-Kiwi-77" and "A 和 B" take both). The value must hold a digit or a
  symbol and not be a web or e-mail address, or (passwords only) be one word ending the clause
  that is no ordinary word ("... is on the fridge", "... is the same as ..." are kept);
* ``api key``: well-known token shapes (``sk-...``, ``sk-ant-...``, ``ghp_...``, ``github_pat_...``,
  ``xox[baprs]-...``, ``AKIA...``, ``AIza...``, Telegram bot tokens ``123456:ABC...``, JWTs) and
  values after "api key", "token", "secret", "密钥" (with "is" / ":" between, or 20 characters
  and more: "my token tk0u50001n10 is fine" is kept), also "the token for the staging server
  is ...";
* ``card number``: 13-19 digits (spaces or dashes allowed) passing the Luhn check (ISO/IEC 7812);
* ``ID number``: Chinese resident ID (18 characters, GB 11643-1999 check digit), US SSN
  (``ddd-dd-dddd``), and values after "passport", "ID number", "身份证", "护照".

* ``private key``: PEM/OpenSSH private key blocks (``-----BEGIN ... PRIVATE KEY-----``), age
  secret keys, and values after "private key", "seed phrase", "私钥";
* ``one-time code``: 4-8 digits after "verification code", "one-time code", "OTP", "2FA code",
  "security code", "验证码", "动态码", "校验码";
* ``IBAN``: ISO 13616 account numbers whose mod-97 checksum is valid.

Provider tokens also recognised: Stripe (``sk_live_``, ``rk_live_``, ...), GitLab ``glpat-``,
npm ``npm_``, PyPI ``pypi-``, Hugging Face ``hf_``, SendGrid ``SG.``, Twilio ``SK...``, Shopify,
DigitalOcean, Google OAuth ``ya29.``, Discord bot tokens, Slack webhooks, ``Bearer`` headers and
credentials inside URLs (``scheme://user:pass@host``).

Kept on purpose (users need them remembered): phone numbers, e-mail and street addresses, dates,
order and tracking numbers (a digit run right after "order", "tracking", "订单", "单号", ... is
never taken for a card or ID), versions and prices. Card numbers must look like cards (13-19
digits, contiguous or in groups of four, first digit 2-6) and pass Luhn; Chinese IDs must hold a
plausible birth date and a valid check digit. A labelled password without "is"/":"/"=" must
contain a digit or symbol, so "password manager" or "pin location" are kept.

Redacted spans become ``[redacted <kind>]``; callers tell the user which kinds were not kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VALUE = r"[^\s,，。;；]{3,}"
_ASCII_VALUE = r"[!-~]{3,}"
_LABELLED = [
    ("one-time code", re.compile(
        r"(?i)(\b(?:one[- ]time (?:code|password|passcode)|otp|verification code|security code|"
        r"confirmation code|login code|2fa code|auth(?:entication)? code|sms code)\b"
        r"\s*(?:is|was|:|=|：)?\s*)(\d{4,8})\b")),
    ("one-time code", re.compile(r"((?:验证码|校验码|动态码|动态密码|短信码)\s*(?:是|为|:|：)?\s*)"
                                 r"((?=[A-Za-z0-9]*\d)[A-Za-z0-9]{4,8})(?![A-Za-z0-9])")),
    ("private key", re.compile(
        r"(?i)(\b(?:private key|secret key|seed phrase|mnemonic)\b\s*(?:is|:|=|：)?\s*)"
        r"((?:0x)?[A-Fa-f0-9]{32,}|(?:[a-z]{3,8} ){11,23}[a-z]{3,8})")),
    ("private key", re.compile(r"((?:私钥|助记词)\s*(?:是|为|:|：)?\s*)([!-~]{16,}|(?:[a-z]{3,8} ){11,23}[a-z]{3,8})")),
    ("password", re.compile(
        r"(?i)(\b(?:password|passcode|passwd|pwd|pin)\b\s*(is|was|:|=|：)?\s*)(" + _VALUE + ")")),
    ("password", re.compile(r"((?:密码|口令)\s*(?:是|为|:|：|=)?\s*)(" + _ASCII_VALUE + ")")),
    ("api key", re.compile(
        r"(?i)(\b(?:api[ _-]?key|access[ _-]?token|auth[ _-]?token|token|secret)\b\s*(?:is|:|=|：)\s*)"
        r"([A-Za-z0-9_\-./+=]{12,})")),
    # without "is" / ":" the value must be as long as a key: "my token tk0u50001n10 is fine"
    # names a token, it does not disclose one
    ("api key", re.compile(
        r"(?i)(\b(?:api[ _-]?key|access[ _-]?token|auth[ _-]?token|token|secret)\b\s*)"
        r"([A-Za-z0-9_\-./+=]{20,})")),
    ("api key", re.compile(r"((?:密钥|令牌)\s*(?:是|为|:|：|=)?\s*)([A-Za-z0-9_\-./+=]{8,})")),
    ("ID number", re.compile(
        r"(?i)(\b(?:passport|id number|id no\.?|ssn)\b\s*(?:number|no\.?)?\s*(?:is|:|=|：)?\s*)"
        r"((?=[A-Z0-9\-]*\d)[A-Z0-9][A-Z0-9\-]{5,})")),  # a number holds a digit: not "before"
    ("ID number", re.compile(r"((?:身份证|护照)(?:号码?|号)?\s*(?:是|为|:|：)?\s*)((?=[A-Za-z0-9]*\d)[A-Za-z0-9]{6,})")),
]
# Credentials said in ordinary words (see the module docstring): a credential noun, an optional
# phrase naming what it opens ("for my laptop", "of the vault", "at the cabin", up to five
# words), a verb or separator ("is", "are", ":", "="), then the value.
_EN_CREDENTIAL_NOUN = (
    r"pass(?:word|code|phrase)s?|passwd|pwd|pin(?:\s+code|\s+number)?|log-?ins?|logon|"
    r"credentials|creds|(?:network|wi-?fi|wpa2?)\s+key|"
    r"(?:door|gate|alarm|safe|lock|locker|entry|access|garage|keypad|building|unlock|padlock|"
    r"vault)\s+(?:code|combination|combo)")
_LOCKS = (r"door|front\s+door|gate|garage|safe|lock|bike\s+lock|locker|alarm|vault|padlock|"
          r"keypad|building|entrance|house|flat|apartment")
_WHAT_IT_OPENS = r"(?:\s+(?:for|of|to|on|at|in)\s+[^\s,.;:!?]+(?:\s+[^\s,.;:!?]+){0,4}?)?"
_SAYS = r"\s*(?:is|was|are|were|:|=|：)\s*"
_EN_VALUE = r"[^\s,;，。；]+(?:\s*/\s*[^\s,;，。；]+)?"
_ZH_VALUE = r"[!-~０-９Ａ-Ｚａ-ｚ]{3,}"
_CREDENTIALS = [
    ("password", re.compile(
        r"(?i)(\b(?:" + _EN_CREDENTIAL_NOUN + r")\b" + _WHAT_IT_OPENS + _SAYS + r")("
        + _EN_VALUE + ")")),
    ("password", re.compile(
        r"(?i)(\b(?:code|combination|combo)\s+(?:for|of|to)\s+(?:the\s+|my\s+|our\s+|a\s+)?"
        r"(?:" + _LOCKS + r")\b" + _SAYS + r")(" + _EN_VALUE + ")")),
    ("api key", re.compile(
        r"(?i)(\b(?:api[ _-]?key|access[ _-]?token|auth[ _-]?token|token|client\s+secret|"
        r"secret)\b" + _WHAT_IT_OPENS + _SAYS + r")([A-Za-z0-9_\-./+=]{12,})")),
    ("password", re.compile(
        r"((?:密码|口令|密令|暗码|门禁码|开门码|解锁码|PIN码|pin码)"
        r"(?:分别|都|也|还|一直|现在|已经|又|就|依然|仍然|还是|仍)?"
        r"(?:是|为|改成了?|改为|设成了?|设为|换成了?|:|：|=)\s*)(" + _ZH_VALUE
        + r"(?:\s*(?:和|与|跟|、|/)\s*" + _ZH_VALUE + r")*)")),
]
#: Words that follow "is" in a sentence about a password without being one ("the password for
#: the wifi is on the fridge", "... is the same as ...").
_NOT_VALUES = frozenset({
    "a", "an", "the", "my", "your", "his", "her", "its", "our", "their", "this", "that", "what",
    "on", "in", "at", "under", "behind", "inside", "somewhere", "written", "stored", "saved",
    "kept", "not", "no", "still", "too", "very", "easy", "hard", "simple", "secure", "safe",
    "new", "old", "broken", "failing", "working", "blocked", "locked", "missing", "lost",
    "forgotten", "unknown", "blank", "empty", "fine", "ok", "okay", "same", "shared",
})


def _credential_value(m: re.Match) -> bool:
    """Whether the value of a credential said in words is a secret (see the module docstring):
    it holds a digit or a symbol and is no web or e-mail address, or it is a single word that
    ends the clause and is not one of :data:`_NOT_VALUES` (passwords and passphrases only)."""
    value = m.group(2).rstrip(".?)")
    if re.search(r"://|^www\.|^[^\s/@]+@[^\s/@]+\.[a-z]{2,}$", value, re.IGNORECASE):
        return False
    if any(not c.isalpha() for c in value):
        return True
    head = m.group(1).lower()
    if not re.match(r"pass|pwd|口令|密", head.lstrip()) or value.lower() in _NOT_VALUES \
            or value.lower() in _WEAK_VALUES:
        return False
    rest = m.string[m.end(2):].lstrip(".?)")
    return not rest or rest[0] in ",;!，。；！" or bool(re.match(r"\s+(?:and|but)\b|\s*$", rest))

_SHAPES = [
    ("private key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)")),
    ("private key", re.compile(r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}")),
    ("password", re.compile(r"(?<=://)[^\s/:@]+:[^\s/@]+(?=@)")),
    ("api key", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-.=+/]{20,}")),
    ("api key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("api key", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}|\bnpm_[A-Za-z0-9]{36}\b|\bpypi-[A-Za-z0-9_\-]{50,}")),
    ("api key", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b|\bSG\.[\w\-]{16,}\.[\w\-]{20,}|\bSK[0-9a-f]{32}\b")),
    ("api key", re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b|\bdo[opr]_v1_[a-f0-9]{64}\b|\bya29\.[\w\-]{20,}")),
    ("api key", re.compile(r"\b[MN][A-Za-z\d]{23,25}\.[\w\-]{6}\.[\w\-]{27,}")),
    ("api key", re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9/]{20,}")),
    ("api key", re.compile(r"\bsk-(?:ant-)?[A-Za-z0-9_\-]{16,}")),
    ("api key", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b|\bgithub_pat_[A-Za-z0-9_]{20,}")),
    ("api key", re.compile(r"\bxox[baprs]-[A-Za-z0-9\-]{10,}")),
    ("api key", re.compile(r"\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_\-]{30,}")),
    ("api key", re.compile(r"\b\d{8,10}:[A-Za-z0-9_\-]{30,}\b")),
    ("api key", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("ID number", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
]
_CARD_RE = re.compile(
    r"(?<![\d+\-.])(?:[2-6]\d{12,18}|[2-6]\d{3}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{1,3})?"
    r"|3\d{3}[ -]\d{6}[ -]\d{5})(?![\d\-])")
_CN_ID_RE = re.compile(r"(?<![0-9A-Za-z])\d{17}[\dXx](?![0-9A-Za-z])")
_IBAN_RE = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
_REFERENCE_RE = re.compile(
    r"(?i)(?:order|tracking|invoice|reference|ref|booking|confirmation|shipment|parcel|waybill|"
    r"transaction|订单|单号|运单|快递|物流|发票|编号|流水号)[^\n]{0,12}$")
_WEAK_VALUES = frozenset({
    "manager", "managers", "reset", "changed", "change", "expired", "required", "wrong", "correct",
    "strong", "weak", "policy", "rules", "hint", "field", "protected", "location", "code", "number",
    "the", "and", "for", "too", "same", "different", "again", "long", "short", "here", "there",
})


@dataclass(frozen=True, slots=True)
class Redaction:
    """The result of :func:`redact`: the cleaned text and the kinds removed (sorted, unique)."""

    text: str
    kinds: tuple[str, ...]


def _iban_ok(value: str) -> bool:
    """ISO 13616 / ISO 7064 mod 97-10: move the first four to the end, letters to 10-35."""
    value = value.replace(" ", "")
    if not 15 <= len(value) <= 34:
        return False
    moved = value[4:] + value[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cn_id_ok(value: str) -> bool:
    year, month, day = int(value[6:10]), int(value[10:12]), int(value[12:14])
    if not (1900 <= year <= 2100 and 1 <= month <= 12 and 1 <= day <= 31):
        return False
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    checks = "10X98765432"
    total = sum(int(c) * w for c, w in zip(value[:17], weights))
    return checks[total % 11] == value[17].upper()


def _password_like(m: re.Match) -> bool:
    """Whether a labelled password value is a value, not the next word of a sentence."""
    value = m.group(m.lastindex)
    if value.lower().strip(".!?") in _WEAK_VALUES:
        return False
    if m.re.groups < 3:  # the Chinese pattern: its value is ASCII inside a Chinese sentence
        return True
    if m.group(2) or not value.isascii():
        return True
    return not value.isalpha()


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
            value = m.group(m.lastindex)
            if value.startswith("[redacted"):
                return m.group(0)
            if kind == "password" and not _password_like(m):
                return m.group(0)
            if kind == "api key" and not any(c.isdigit() for c in value):
                return m.group(0)
            kinds.add(kind)
            return f"{m.group(1)}[redacted {kind}]"
        return repl

    def credential(kind: str):
        def repl(m: re.Match) -> str:
            if "[redacted" in m.group(2) or not _credential_value(m):
                return m.group(0)
            kinds.add(kind)
            value = m.group(2)
            tail = value[len(value.rstrip(".?)")):]
            return f"{m.group(1)}[redacted {kind}]{tail}"
        return repl

    def shaped(kind: str, check=None, references: bool = False):
        def repl(m: re.Match) -> str:
            value = re.sub(r"[ -]", "", m.group(0))
            if check is not None and not check(value):
                return m.group(0)
            if references and _REFERENCE_RE.search(m.string[:m.start()]):
                return m.group(0)
            kinds.add(kind)
            return f"[redacted {kind}]"
        return repl

    for kind, pattern in _SHAPES:
        text = pattern.sub(shaped(kind), text)
    text = _IBAN_RE.sub(shaped("IBAN", _iban_ok), text)
    text = _CN_ID_RE.sub(shaped("ID number", _cn_id_ok, references=True), text)
    text = _CARD_RE.sub(shaped("card number", _luhn_ok, references=True), text)
    for kind, pattern in _CREDENTIALS:
        text = pattern.sub(credential(kind), text)
    for kind, pattern in _LABELLED:
        text = pattern.sub(labelled(kind), text)
    return Redaction(text=text, kinds=tuple(sorted(kinds)))

