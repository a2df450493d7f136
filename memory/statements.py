"""What a user's statement says about them: attributes with values, and the value a
correction names.

One reader for English and Chinese, driven by the lexicons (``memory.lexicon``) and the topic
table (``memory.topics``): a statement of the topic table's phrases ("I live in Graz", 我住在成都)
gives that topic's key; any other first-person statement of the forms "my X is Y", "X is now Y"
(for an X already known), "I switched / moved / changed (my X) (from A) to Y", 我的X是Y,
我的X换成了Y, X现在是Y gives an **open-vocabulary** attribute: its key is X normalised
(:func:`attribute_key`: case, possessives, Snowball stems, jieba words; "favourite" /
最喜欢 kept), unless X is a synonym of a topic (``ATTRIBUTE_ALIASES``: "my job", 我的工作 ->
``job``). Attributes are single-valued, so a new value replaces the old one, unless the
topic is multi-valued (allergies, opinions, foods avoided) or the statement is additive
("my X is also Y", 我的X也是Y).

What no longer holds is read by ``memory.endings``, constraints kept at their first mention
by ``memory.constraints``; the phrase templates and value readers all of them share are
``memory.phrases``. A statement is read only where the speaker is its subject and it holds
as said: not in a question, a supposition ("if I moved to Tokyo"), a quote, or after a verb
of saying.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memory import language as L
from memory.constraints import constraint
from memory.endings import endings
from memory.lexicon import en as EN
from memory.lexicon import zh as ZH
from memory.phrases import (
    clause_free,
    en_match,
    en_value,
    match_template,
    value_end,
    zh_adverb_skips,
    zh_match,
    zh_said,
    zh_speaker,
    zh_value,
)
from memory.text import has_cjk, stem_english
from memory.topics import TOPIC_BY_KEY, TOPICS

#: Longest attribute name of "my X is Y", in English words / Chinese characters.
MAX_ATTRIBUTE_WORDS = 5
MAX_ZH_ATTRIBUTE_CHARS = 10


@dataclass(frozen=True, slots=True)
class Said:
    """One attribute a statement gives.

    Attributes:
        topic: the topic-table key when the attribute is one of its topics (or a synonym),
            else None (open vocabulary).
        attribute: the attribute as said ("dentist", "家的宽带"), for the fact's text.
        key: the conflict key: ``residence``, ``allergy:peanuts``, ``opinion:sushi``,
            ``dentist``, ``家宽带``.
        value: the normalised value ("graz"; ``like`` / ``dislike`` for opinions).
        shown: the value as said ("Graz", "Dr. Okafor").
        negative: an opinion against (dislike) rather than for.
        additive: the statement adds a value ("my X is also Y").
        changed_from: "I switched from A to B": A, lowercased (the key is then found from the
            stored fact whose value is A), else None.
        named: the value is a name given as such ("is called", 叫: 我女儿叫小雨).
    """

    topic: str | None
    attribute: str
    key: str
    value: str
    shown: str
    negative: bool = False
    additive: bool = False
    changed_from: str | None = None
    named: bool = False


def attribute_key(attribute: str, lang: str | None = None) -> str:
    """The conflict key of an attribute as said: "My Dentist" -> ``dentist``, "favorite
    bands" -> ``favourite band``, "daughter's school" -> ``daughter school``, 我家的宽带 ->
    ``家宽带``, 最喜欢的歌手 -> ``最喜欢歌手``; synonyms of a topic give the topic's key
    ("job" -> ``job``)."""
    if has_cjk(attribute):
        key = "".join(attribute.split()).replace("的", "")
        return ZH.ATTRIBUTE_ALIASES.get(key, key)
    words = [w for w in L.norms(L.tokens(attribute)) if w not in {"my", "the", "a", "an"}
             and w not in EN.KEY_DROPPED]
    alias = EN.ATTRIBUTE_ALIASES.get(" ".join(words))
    if alias:
        return alias
    words = [EN.KEY_SPELLINGS.get(w, w) for w in words if w != "'s" and w.isalnum()]
    kept = [w if w in EN.KEY_MODIFIERS or EN.KEY_SPELLINGS.get(w) == w else s
            for w, s in zip(words, stem_english(words))]
    key = " ".join(kept)
    return EN.ATTRIBUTE_ALIASES.get(key, key)


def keys_match(a: str, b: str) -> bool:
    """True when two attribute keys name the same attribute: equal, or one is the other with
    a narrower head in front ("mobile carrier" / "carrier", 手机运营商 / 运营商), unless what
    is in front is a modifier kept apart ("favourite band" is not "band")."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    if ":" in short or ":" in long or not long.endswith(short):
        return False
    front = long[:-len(short)].strip()
    if has_cjk(long):
        return len(short) >= 2 and not front.endswith(ZH.KEY_MODIFIERS)
    if not long[:-len(short)].endswith(" "):
        return False
    return not any(w in EN.KEY_MODIFIERS for w in front.split())


# ----------------------------------------------------------------- attributes

def open_attributes(clause: str, lang: str, known: Iterable[str] = ()) -> list[Said]:
    """The open-vocabulary attributes of one clause (see the module docstring); ``known``:
    the user's attribute keys, for "X is now Y" without "my"."""
    if lang == "zh" or has_cjk(clause):
        return _zh_open(clause, tuple(known))
    return _en_open(clause, tuple(known))


def _en_open(clause: str, known: tuple[str, ...]) -> list[Said]:
    toks = L.tokens(clause)
    words = L.norms(toks)
    out: list[Said] = []
    for i, word in enumerate(words):
        if word in EN.POSSESSIVES and clause_free(words, i):
            said = _en_my_x_is(clause, toks, words, i + 1)
            if said:
                out.append(said)
        elif word in EN.SWITCHERS and clause_free(words, i):
            said = _en_switched(clause, toks, words, i + 1)
            if said:
                out.append(said)
    if not out and known:
        start = len(words) - len(L.after_openers(words))
        if start < len(words) and words[start] == "the":
            start += 1
        said = _en_my_x_is(clause, toks, words, start, require_now=True)
        if said and any(keys_match(said.key, k) for k in known):
            out.append(said)
    return out


def _en_my_x_is(clause, toks, words, start, *, require_now=False) -> Said | None:
    """"my X is [now] [called] Y" from token ``start`` (just after "my")."""
    for c in range(start + 1, min(start + MAX_ATTRIBUTE_WORDS, len(words)) + 1):
        if c >= len(words):
            return None
        if words[c - 1] in {",", ";", ".", "!", "?", "and", "or", "i", "is", "are", "was"}:
            return None
        if words[c] not in EN.COPULAS:
            continue
        x_end = _before_time_words(words, start, c)  # "my pharmacy these days is ..." 
        x_words = words[start:x_end]
        if x_words[0] in EN.NOT_ATTRIBUTES or any(w in EN.NOT_ATTRIBUTES for w in x_words[-1:]):
            return None
        v = c + 1
        additive = False
        now = x_end < c  # "my car insurance at the moment is ...": an update
        while v < len(words) and words[v] in EN.ADVERBS | EN.NAMING:
            additive |= words[v] in EN.ADDITIVE
            now |= words[v] in EN.NOW_WORDS
            v += 1
        named = any(w in EN.NAMING for w in words[c + 1:v]) or x_words[-1] == "name"
        if require_now and not now:
            return None
        value = en_value("", toks, clause, v, value_end(words, v))
        if value is None:
            return None
        attribute = clause[toks[start].start:toks[x_end - 1].end]
        key = attribute_key(attribute)
        if key in EN.NAMED_ONLY and not named:
            return None
        if x_words[-1] in EN.FAMILY and key not in EN.NAMED_ONLY:
            # "my sister is a doctor" describes her; "my son is called Leo" names him
            value = en_value("name", toks, clause, v, value_end(words, v))
            if not named or value is None:
                return None
            return _said(f"{key} name", f"{attribute}'s name", value)
        if key in {"name", "wife_name", "husband_name"}:
            value = en_value("name", toks, clause, v, value_end(words, v))
            if value is None:
                return None
        return _said(key, attribute, value, additive=additive, named=named and not
                     x_words[-1] == "name")
    return None


def _before_time_words(words, start: int, end: int) -> int:
    """Where an attribute ``words[start:end]`` ends without the adverbs and time phrases
    after it ("my pharmacy these days", "my car insurance at the moment"); at least one word
    is left."""
    changed = True
    while changed:
        changed = False
        if end - start > 1 and words[end - 1] in EN.ADVERBS:
            end, changed = end - 1, True
        for phrase in EN.VALUE_TAIL_PHRASES:
            if end - start > len(phrase) and tuple(words[end - len(phrase):end]) == phrase:
                end, changed = end - len(phrase), True
    return end


def _en_switched(clause, toks, words, i) -> Said | None:
    """"I switched / moved / changed (my X) (from A) to Y" from token ``i`` (after "I")."""
    while i < len(words) and words[i] in EN.ADVERBS | {"have", "just"}:
        i += 1
    if i >= len(words) or words[i] not in EN.SWITCH_VERBS:
        return None
    j = i + 1
    attribute = None
    if j < len(words) and words[j] == "my":
        end = j + 1
        while end < len(words) and words[end] not in {"to", "from", "over", ",", "."} and \
                end - j <= MAX_ATTRIBUTE_WORDS:
            end += 1
        if end == j + 1:
            return None
        attribute = clause[toks[j + 1].start:toks[end - 1].end]
        j = end
    elif j + 1 < len(words) and words[j + 1] in {"to", "from"} and _plural_noun(words[j]):
        attribute = _singular(clause[toks[j].start:toks[j].end])  # "I switched banks to N26"
        j += 1
    changed_from = None
    if j < len(words) and words[j] == "from":
        end = j + 1
        while end < len(words) and words[end] != "to" and end - j <= 6:
            end += 1
        if end >= len(words) or end == j + 1:
            return None
        changed_from = clause[toks[j + 1].start:toks[end - 1].end].lower()
        j = end
    if j < len(words) and words[j] == "over":
        j += 1
    if j >= len(words) or words[j] != "to":
        return None
    value = en_value("", toks, clause, j + 1, value_end(words, j + 1))
    if value is None or (attribute is None and changed_from is None
                         and words[i] not in EN.REPLACING_VERBS):
        return None
    if attribute is None:  # the attribute is that of the old value (named, or in the clause)
        return Said(None, "", "", _norm_value(value), value, changed_from=changed_from)
    return _said(attribute_key(attribute), attribute, value, changed_from=changed_from)


def _plural_noun(word: str) -> bool:
    """A word that may be an attribute in the plural after a verb of switching ("banks",
    "vets", "dentists"; not "is", "always", "us")."""
    return len(word) > 3 and word.isalpha() and word.endswith("s") and not word.endswith("ss") \
        and word not in EN.ADVERBS and word not in EN.SPEAKER_WORDS


def _singular(word: str) -> str:
    """The attribute of a plural ("pharmacies" -> "pharmacy", "vets" -> "vet")."""
    return word[:-3] + "y" if word.endswith("ies") else word[:-1]


def _zh_open(clause: str, known: tuple[str, ...]) -> list[Said]:
    out: list[Said] = []
    at = clause.find(ZH.SPEAKER)
    while at >= 0:
        if zh_speaker(clause, at) and not zh_said(clause, at):
            said = _zh_my_x_is(clause, at + 1, possessive_needed=False)
            # 我(们)(现在)把(我的)车换成了比亚迪: the object of 把 is the attribute changed
            after = at + 1 + clause.startswith(ZH.PLURAL, at + 1)
            said = said or next((_zh_my_x_is(clause, q + len(ZH.OBJECT_FRONT),
                                             possessive_needed=False, require_change=True)
                                 for q in zh_adverb_skips(clause, after)
                                 if clause.startswith(ZH.OBJECT_FRONT, q)), None)
            if said:
                out.append(said)
        at = clause.find(ZH.SPEAKER, at + 1)
    if not out and known:
        said = _zh_my_x_is(L.strip_openers(clause), 0, possessive_needed=False,
                           require_change=True)
        if said and any(keys_match(said.key, k) for k in known):
            out.append(said)
    return out


def _zh_my_x_is(clause: str, q: int, *, possessive_needed: bool,
                require_change: bool = False) -> Said | None:
    """我(的|家的|家)X(现在)(是|叫|换成了)Y from ``q`` (just after 我)."""
    if require_change and clause.startswith(ZH.SPEAKER, q):
        q += len(ZH.SPEAKER)  # 把我的车换成了...
    possessive = next((p for p in ZH.POSSESSIVES if clause.startswith(p, q)), "")
    if possessive_needed and not possessive:
        return None
    x_start = q + (len(possessive) if possessive != "家" else 0)
    for c in range(x_start + 1, min(x_start + MAX_ZH_ATTRIBUTE_CHARS, len(clause))):
        if clause[c - 1] in ZH.CLAUSE_MARKS:
            return None
        copula = next((cp for cp in ZH.COPULAS if clause.startswith(cp, c)), None)
        if copula is None:
            continue
        attribute = clause[x_start:c]
        # "我的车险今年换成了": time words between the attribute and the verb
        for adverb in sorted(ZH.ADVERBS, key=len, reverse=True):
            if attribute.endswith(adverb) and len(attribute) > len(adverb):
                attribute = attribute[:-len(adverb)]
        additive = attribute.endswith(ZH.ADDITIVE)
        attribute = attribute.rstrip("也都")
        if not attribute or attribute.endswith("的") or attribute.startswith(ZH.MENTAL_VERBS) or \
                attribute in ZH.NOT_ATTRIBUTES or "不" in attribute or "是" in attribute or \
                ZH.OBJECT_FRONT in attribute or attribute.startswith(_ZH_PRONOUNS) or \
                any(w in attribute for w in ZH.MENTAL_VERBS[:4]):
            return None
        if not possessive and not require_change and not attribute.startswith(
                ZH.OTHER_PEOPLE) and "的" not in attribute and attribute not in \
                ZH.ATTRIBUTE_ALIASES:
            # 我是医生, 我叫李明: no attribute named (the topic table reads them); 我常去的超市,
            # 我最喜欢的歌手: a noun the speaker's clause describes
            return None
        if attribute in ZH.OTHER_PEOPLE and copula not in ZH.NAMING and \
                attribute not in ZH.ATTRIBUTE_ALIASES:
            return None  # 我女儿是学生 describes her; 我女儿叫小雨 names her
        if require_change and copula not in ZH.CHANGE_COPULAS + ("现在是",):
            return None
        end = c + len(copula)
        j = end
        while j < len(clause) and clause[j] not in ZH.CLAUSE_MARKS:
            j += 1
        value = zh_value("", clause[end:j])
        if value is None:
            return None
        key = attribute_key(("家" if possessive == "家的" else "") + attribute)
        if key in ZH.NAMED_ONLY and copula not in ZH.NAMING:
            return None
        shown_attribute = "家的" + attribute if possessive == "家的" else attribute
        return _said(key, shown_attribute, value, additive=additive, named=copula in ZH.NAMING)
    return None


_ZH_PRONOUNS = tuple(sorted(ZH.PRONOUNS))


def _norm_value(value: str) -> str:
    """A value for comparisons: lowercase, no articles, white space folded."""
    words = value.lower().split()
    while words and words[0] in EN.ARTICLES:
        words = words[1:]
    return " ".join(words).strip(" .,!?;:。，！？；：")


def _said(key: str, attribute: str, value: str, *, additive: bool = False,
          changed_from: str | None = None, named: bool = False) -> Said:
    norm = _norm_value(value)
    topic = key if key in TOPIC_BY_KEY else None
    if topic is not None and TOPIC_BY_KEY[topic].multi or additive:
        key = f"{key}:{norm}"
    return Said(topic, attribute, key, norm, value, additive=additive, changed_from=changed_from,
                named=named)


def topic_attributes(clause: str, lang: str) -> list[Said]:
    """The topic-table statements of one clause (each topic at most once; the clause's own
    language first, then the other one's phrases). In Chinese a later part of a sentence
    whose subject is left out keeps the speaker of the first (我是一名工程师，在百度工作;
    我对花生不过敏，是对虾过敏)."""
    found: dict[str, Said] = {}
    for variant in _zh_continued(clause) if has_cjk(clause) else [clause]:
        for said in _topic_attributes(variant, lang):
            found.setdefault(said.key, said)
    return list(found.values())


def _zh_continued(sentence: str) -> list[str]:
    """``sentence``, then each later part of it without a subject, given the speaker of the
    first part (when the first part's subject is the speaker)."""
    parts = [p for p in _zh_parts(sentence) if p]
    out = [sentence]
    first = L.strip_openers(parts[0]) if parts else ""
    if first.startswith(ZH.SPEAKER) and L.zh_speaker_is_subject(first):
        for part in parts[1:]:
            part = part.lstrip()
            for conjunction in ZH.CONJUNCTIONS:
                part = part.removeprefix(conjunction)
            if part and ZH.SPEAKER not in part and not part.startswith(ZH.OTHER_SUBJECTS):
                out.append(ZH.SPEAKER + part)
    return out


def _zh_parts(sentence: str) -> list[str]:
    parts, start = [], 0
    for i, ch in enumerate(sentence):
        if ch in "，,；;":
            parts.append(sentence[start:i])
            start = i + 1
    return [*parts, sentence[start:]]


def _topic_attributes(clause: str, lang: str) -> list[Said]:
    zh_first = lang == "zh"
    toks = None if has_cjk(clause) and not clause.isascii() and zh_first else L.tokens(clause)
    out: dict[str, Said] = {}
    for topic in TOPICS:
        for negative, phrases in ((False, _phrases(topic.key, zh_first)),
                                  (True, _phrases(topic.key + "-", zh_first))):
            for template in phrases:
                if has_cjk(template):
                    hit = zh_match(template, clause)
                else:
                    toks = toks if toks is not None else L.tokens(clause)
                    hit = en_match(template, toks, clause)
                if hit is None or not hit.value:
                    continue
                said = _topic_said(topic, hit.value, negative)
                if said is not None:
                    out.setdefault(said.key, said)
                    break
            else:
                continue
            break
    return list(out.values())


def _phrases(key: str, zh_first: bool) -> tuple[str, ...]:
    en, zh = EN.TOPIC_PHRASES.get(key, ()), ZH.TOPIC_PHRASES.get(key, ())
    return zh + en if zh_first else en + zh


def _topic_said(topic, value: str, negative: bool) -> Said | None:
    value = value.strip()
    if not value or value.lower() in EN.PRONOUNS or value in ZH.PRONOUNS or \
            L.names_the_listener(value):
        return None  # "I love it", "I love you guys", 我喜欢你: nothing about the speaker
    norm = _norm_value(value)
    if topic.key == "opinion":
        return Said("opinion", "", f"opinion:{norm}", "dislike" if negative else "like", value,
                    negative=negative)
    if topic.key == "answer_length":
        norm = EN.ANSWER_LENGTHS.get(norm, ZH.ANSWER_LENGTHS.get(norm, norm))
        value = norm
    key = f"{topic.key}:{norm}" if topic.multi else topic.key
    return Said(topic.key, "", key, norm, value, negative=negative)


def not_allergic(clause: str, lang: str) -> list[str]:
    """Allergy keys a clause says the user does not (or no longer) have ("I'm not allergic to
    peanuts", 我对花生不过敏 -> ``allergy:peanuts`` / ``allergy:花生``); none under a wish or a
    condition (我希望我对花粉不过敏, "if only I weren't allergic to cats": ``NOT_HOLDING``)."""
    if L.is_hypothetical(clause, lang) or (
            any(w in clause for w in ZH.NOT_HOLDING) if has_cjk(clause)
            else any(t.norm in EN.NOT_HOLDING for t in L.tokens(clause))):
        return []  # 我希望我对花粉不过敏, "if only I weren't allergic to cats": a wish
    keys = []
    for template in EN.NOT_ALLERGIC_PHRASES + ZH.NOT_ALLERGIC_PHRASES:
        value = match_template(template, clause, "zh" if has_cjk(template) else "en")
        if value and value.lower() not in EN.PRONOUNS and value not in ZH.PRONOUNS:
            keys.append(f"allergy:{_norm_value(value)}")
    return list(dict.fromkeys(keys))


# ----------------------------------------------------------------- corrections

def bare_value(clause: str, lang: str) -> str | None:
    """The value a correction names without its attribute, as said: "No wait, it's olives."
    -> "olives", 不对，是5号柜 -> "5号柜"; also in a later part of the sentence ("Sorry, I got
    that wrong, it's Mrs. Kowalczyk", 不是王老师，是汪老师); None for any other clause."""
    zh = lang == "zh" or has_cjk(clause)
    marks = ZH.CLAUSE_MARKS if zh else ",;:-—–"
    starts = [0] + [i + 1 for i, ch in enumerate(clause) if ch in marks]
    for start in starts:
        value = _bare_value_at(L.strip_openers(clause[start:]), zh)
        if value:
            return value
    return None


def _bare_value_at(rest: str, zh: bool) -> str | None:
    if zh:
        if not rest.startswith("是"):
            return None
        end = 1
        while end < len(rest) and rest[end] not in ZH.CLAUSE_MARKS:
            end += 1
        return zh_value("", rest[1:end])
    toks = L.tokens(rest)
    words = L.norms(toks)
    if words[:2] not in (["it", "is"], ["that", "is"], ["it", "was"], ["it", "should"]):
        return None
    v = 2
    while v < len(words) and words[v] in EN.ADVERBS | {"be", "actually"}:
        v += 1
    return en_value("", toks, rest, v, value_end(words, v))


# ----------------------------------------------------------------- the rule table

def _opens(lang: str):
    return lambda s: any(a.topic is None for a in open_attributes(s, lang))


#: The statement rules with their examples (``memory.language.Rule``; one parametrised test
#: runs every row of this table and of ``memory.language.RULES``).
RULES: tuple[L.Rule, ...] = (
    L.Rule("open attribute", "en", _opens("en"),
           ("My dentist is now Dr. Okafor", "my shoe size is 43", "I changed my laptop to a Mac",
            "Oh, and my hairdresser is Inés now", "my son is called Leo", "our vet is Dr Haas",
            "my pharmacy these days is Boots", "I switched banks to N26"),
           ("My sister is a doctor", "my dentist is really nice", "My plan is to visit Rome",
            "My favourite part was the fireworks", "If my gym is closed, where should I go",
            "We went to the cinema with Anna", "Our point is simple")),
    L.Rule("open attribute", "zh", _opens("zh"),
           ("我的牙医换成了李医生", "我家宽带换成了电信", "我最喜欢的歌手现在是陈奕迅", "我女儿叫小雨",
            "我的车险今年换成了太平洋保险", "我把宽带换成了电信", "我们把燃气公司换成了港华燃气"),
           ("我女儿是学生", "我的意思是明天再说", "我觉得这个是对的", "我是医生", "他的牙医是王医生",
            "我把这个问题换成了另一个说法")),
    L.Rule("topic statement", "en", lambda s: bool(topic_attributes(s, "en")),
           ("I live in Graz", "I love jazz", "I'm allergic to peanuts"),
           ("I love you guys!", "I like your idea", "I love it")),
    L.Rule("topic statement", "zh", lambda s: bool(topic_attributes(s, "zh")),
           ("我住在上海", "我喜欢爵士乐", "我对花生过敏"), ("我喜欢你", "我爱你们", "我喜欢这个")),
    L.Rule("not allergic", "en", lambda s: bool(not_allergic(s, "en")),
           ("I'm not allergic to peanuts", "I'm no longer allergic to cats"),
           ("I wish I wasn't allergic to cats", "If I'm not allergic to it, I'll try it")),
    L.Rule("not allergic", "zh", lambda s: bool(not_allergic(s, "zh")),
           ("我对花生不过敏", "我已经对猫毛不过敏了"), ("我希望我对花粉不过敏", "要是我对猫毛不过敏就好了")),
    L.Rule("ending", "en", lambda s: bool(endings(s, "en")),
           ("I'm no longer a member of the Alpine Club", "I don't have a personal trainer anymore",
            "I quit green tea", "I no longer take the bus to work", "I left Siemens",
            "I stepped down from the board", "I cancelled my gym membership"),
           ("I'm not sure anymore", "I don't know", "I love tea", "My friend quit smoking",
            "I left it at home", "My sister cancelled her trip")),
    L.Rule("ending", "zh", lambda s: bool(endings(s, "zh")),
           ("我不再学日语了", "我现在不打羽毛球了", "我已经戒咖啡了", "我现在没有私教了",
            "我已经从腾讯离职了", "我们家现在没有保姆了", "我戒烟了"),
           ("我不知道了", "我朋友不再抽烟了", "我喜欢打羽毛球", "我从北京回来了", "我同事从腾讯离职了")),
    L.Rule("constraint", "en", lambda s: constraint(s, "en"),
           ("I'm allergic to sesame", "I have type 1 diabetes", "Please don't message me on weekends",
            "I'm on blood thinners, so no ibuprofen for me", "Never schedule meetings for me before 10",
            "Since I'm coeliac I bake my own bread", "then I got allergic and had to stop",
            "I suffer from migraines", "I went vegan last year", "We keep kosher at home",
            "i cant eat gluten", "I have to avoid salt", "I don't do dairy",
            "no texts after 10pm please", "I'm not allowed to eat nuts"),
           ("I'm exhausted today", "Don't forget to stay positive", "Don't worry about me",
            "Is it okay if I eat peanuts?", "If I were vegan, what would I eat",
            "My dog is allergic to chicken", "I love you with all my heart",
            "I wish I weren't allergic!", "I baked a vegan cake for the party",
            "We'd adopt a kitten if we found one I'm not allergic to",
            "I'm not allergic to anything", "Sadly, allergies mean I can't keep pets",
            "I cooked it with oat milk so it's dairy-free", "I have a friend with diabetes",
            "We often eat at vegan places", "I avoid crowds", "I don't do mornings",
            "Don't mention it!", "Don't call him, he's busy", "never send money to strangers")),
    L.Rule("constraint", "zh", lambda s: constraint(s, "zh"),
           ("我对芒果过敏", "我有高血压", "别在周末给我发消息", "晚上十点以后不要给我发通知", "我乳糖不耐受",
            "因为我麸质不耐受所以不吃面包", "我是素食者", "我患有哮喘", "我们全家都吃素",
            "工作日晚上请不要给我推送消息", "我有点乳糖不耐，喝不了牛奶", "我只吃清真的", "我吃不了辣的",
            "我在吃抗凝药，不能吃布洛芬", "我从来不喝酒"),
           ("今天好累", "我不要喝咖啡", "我朋友对花生过敏吗", "假如我有糖尿病", "我女儿对花生过敏",
            "这冰箱的智能系统特别实用，跟我的爱好特别搭", "别人都给我发消息", "我希望我不过敏",
            "我做了素食冰淇淋", "我对花生不过敏", "我没有高血压", "我对他有点不耐烦", "我吃不了那么多",
            "我不吃了，饱了")),
)
