"""What a user's statement says about them: attributes with values, endings, constraints.

One reader for English and Chinese, driven by the lexicons (``memory.lexicon``) and the topic
table (``memory.topics``):

* **Attributes.** A statement of the topic table's phrases ("I live in Graz", 我住在成都) gives
  that topic's key; any other first-person statement of the forms "my X is Y", "X is now Y"
  (for an X already known), "I switched / moved / changed (my X) (from A) to Y", 我的X是Y,
  我的X换成了Y, X现在是Y gives an **open-vocabulary** attribute: its key is X normalised
  (:func:`attribute_key`: case, possessives, Snowball stems, jieba words; "favourite" /
  最喜欢 kept), unless X is a synonym of a topic (``ATTRIBUTE_ALIASES``: "my job", 我的工作 ->
  ``job``). Attributes are single-valued, so a new value replaces the old one, unless the
  topic is multi-valued (allergies, opinions, foods avoided) or the statement is additive
  ("my X is also Y", 我的X也是Y).
* **Endings.** "I'm no longer X", "I don't X anymore", "I quit X", 我不再X, 我戒了X, 我不X了,
  我没有X了: the thing that no longer holds (:func:`endings`).
* **Constraints.** Allergies, diets, medical conditions and prohibitions ("don't message me
  on weekends", 别在周末给我发消息): :func:`constraint`.

A statement is read only where the speaker is its subject and it holds as said: not in a
question, a supposition ("if I moved to Tokyo"), a quote, or after a verb of saying.

Phrase templates are data (``TOPIC_PHRASES`` of the lexicons): ``{v}`` is the value, ``{*}``
skips a few words, ``{v:kind}`` restricts the value to a word class, a number or a name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memory import language as L
from memory.lexicon import en as EN
from memory.lexicon import zh as ZH
from memory.text import has_cjk, search_tokens, stem_english
from memory.topics import TOPIC_BY_KEY, TOPICS

#: Longest value kept, in characters (a longer "value" is a whole clause, not an attribute).
MAX_VALUE_CHARS = 60
MAX_ZH_VALUE_CHARS = 20
#: Longest Chinese proper name taken as a value (a place such as 广西壮族自治区 has 7 characters).
MAX_ZH_NAME_CHARS = 8
#: Longest attribute name of "my X is Y", in English words / Chinese characters.
MAX_ATTRIBUTE_WORDS = 5
MAX_ZH_ATTRIBUTE_CHARS = 10
#: Words ``{*}`` may skip in English.
MAX_SKIP_WORDS = 6


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


# ----------------------------------------------------------------- templates

@dataclass(frozen=True, slots=True)
class _Item:
    kind: str  # "word", "value", "skip"
    text: str = ""  # the word (English token / Chinese string) or the value's class


@lru_cache(maxsize=None)
def _template(template: str, zh: bool) -> tuple[_Item, ...]:
    """A phrase template as items (see the module docstring)."""
    items: list[_Item] = []
    rest = template
    while rest:
        at = rest.find("{")
        literal, rest = (rest, "") if at < 0 else (rest[:at], rest[at:])
        if literal:
            if zh:
                items.append(_Item("word", literal))
            else:
                items.extend(_Item("word", w) for w in literal.split())
        if rest:
            close = rest.index("}")
            inner, rest = rest[1:close], rest[close + 1:]
            if inner == "*":
                items.append(_Item("skip"))
            else:
                items.append(_Item("value", inner.partition(":")[2]))
    return tuple(items)


@dataclass(frozen=True, slots=True)
class _Hit:
    start: int  # where the template's first item stands (token / character)
    value: str  # the value as said (cleaned)


def _clause_free(words: Sequence[str], at: int) -> bool:
    """The statement starting at token ``at`` holds as said: no subordinator, verb of saying
    or question word shortly before it in its clause."""
    i = at - 1
    while i >= 0 and at - i <= 4 and words[i] not in {",", ";", ":", ".", "!", "?", "and", "but"}:
        if words[i] in EN.SUBORDINATORS or words[i] in EN.REPORTING or \
                words[i] in EN.QUESTION_WORDS:
            return False
        i -= 1
    return True


def _imperative_start(words: Sequence[str], at: int) -> bool:
    """An instruction template ("call me Sam") stands at the start of its clause, after
    softeners, openers, a polite frame or a standing phrase only."""
    i = at - 1
    while i >= 0 and words[i] not in {",", ";", ":", ".", "!", "?"}:
        if not (words[i] in EN.SOFTENERS or words[i] in EN.OPENERS or words[i] in EN.ADVERBS
                or words[i] in {"you", "can", "could", "would", "will", "always", "from", "on",
                                "going", "forward", "future", "in", "the"}):
            return False
        i -= 1
    return True


def _en_match(template: str, toks: Sequence[L.Token], text: str) -> _Hit | None:
    items = _template(template, False)
    words = L.norms(toks)
    first = items[0].text
    for start, word in enumerate(words):
        if word != first or not _clause_free(words, start):
            continue
        if first not in {"i", "my"} and not _imperative_start(words, start):
            continue
        value = _en_walk(items, 1, start + 1, words, toks, text, None)
        if value is not None:
            return _Hit(start, value)
    return None


def _en_walk(items, k, i, words, toks, text, value):
    """Match ``items[k:]`` from token ``i``; the value found so far is ``value``."""
    if k == len(items):
        return value if value is not None else ""
    item = items[k]
    if item.kind == "word":
        while i < len(words) and words[i] != item.text and words[i] in EN.ADVERBS:
            i += 1
        if i < len(words) and words[i] == item.text:
            return _en_walk(items, k + 1, i + 1, words, toks, text, value)
        return None
    if item.kind == "skip":
        for j in range(i + 1, min(i + MAX_SKIP_WORDS, len(words)) + 1):
            found = _en_walk(items, k + 1, j, words, toks, text, value)
            if found is not None:
                return found
        return None
    # a value: up to the next word of the template, or to the end of the clause
    stops = EN.VALUE_STOPS if item.text != "number" else {".", ";", "!", "?"}
    if k + 1 < len(items):
        nxt = items[k + 1].text
        for j in range(i + 1, len(words)):
            if words[j] in stops:
                return None
            if words[j] == nxt:
                got = _en_value(item.text, toks, text, i, j)
                if got is not None:
                    found = _en_walk(items, k + 1, j, words, toks, text, got)
                    if found is not None:
                        return found
        return None
    j = i
    while j < len(words) and words[j] not in stops:
        if item.text == "number" and words[j] == "," and not (
                j + 1 < len(words) and words[j + 1].isdigit()):
            break  # a number ends at a comma too, unless a list of numbers goes on
        j += 1
    return _en_value(item.text, toks, text, i, j) if j > i else None


def _en_value(kind: str, toks: Sequence[L.Token], text: str, i: int, j: int) -> str | None:
    """The value of class ``kind`` in tokens ``i``-``j``, as said, or None."""
    toks = list(toks[i:j])
    words = L.norms(toks)
    toks, words = _without_tails(toks, words, kind)
    while words and words[0] in EN.ARTICLES and kind not in {"name"}:
        toks, words = toks[1:], words[1:]
    if not words:
        return None
    said = text[toks[0].start:toks[-1].end].strip(" \"'“”‘’")
    if kind == "":
        if len(said) > MAX_VALUE_CHARS or words[0] in EN.PRONOUNS or \
                words[0] in EN.QUESTION_WORDS or words[0] == "to" or len(words) > 8 or \
                words[0] in EN.NOT_VALUES:
            return None
        return said
    if kind == "number":
        return said if len(words) == 1 and said.isdigit() and len(said) <= 3 else None
    if kind == "name":
        names = []
        for t in toks:
            word = text[t.start:t.end]
            if not word[:1].isupper() or any(c.isdigit() for c in word) or len(names) == 2:
                break
            names.append(word)
        return " ".join(names) or None
    if kind == "timezone":
        low = said.lower()
        if low.startswith(("utc", "gmt")) and all(c in "+-0123456789:" for c in low[3:]) \
                and len(low) > 3:
            return said
        return said if said.isupper() and 3 <= len(said) <= 4 and said.endswith("T") else None
    members = EN.VALUE_CLASSES[kind]
    if kind in EN.HEAD_CLASSES:  # the last class word of the first four: "quant developer"
        heads = [n for n in range(min(len(words), 4))
                 if words[n] in members or (n and " ".join(words[n - 1:n + 1]) in members)]
        return text[toks[0].start:toks[heads[-1]].end] if heads else None
    if kind in EN.OPENING_CLASSES:
        return said if words[0] in members and len(words) <= 4 else None
    for n in range(min(len(words), 3), 0, -1):
        if " ".join(words[:n]) in members:
            return text[toks[0].start:toks[n - 1].end]
    return None


def _without_tails(toks, words, kind):
    """Tokens without trailing words that are no part of a value ("now", "these days",
    "on 2026-11-25", "last month")."""
    changed = True
    while words and changed:
        changed = False
        if words[-1] in EN.VALUE_TAILS or words[-1] in {"today", "yesterday", "again"}:
            toks, words = toks[:-1], words[:-1]
            changed = True
            continue
        for phrase in EN.VALUE_TAIL_PHRASES + (("this", "year"), ("last", "month"),
                                               ("last", "week"), ("last", "year")):
            if len(words) > len(phrase) and tuple(words[-len(phrase):]) == phrase:
                toks, words = toks[:-len(phrase)], words[:-len(phrase)]
                changed = True
                break
        # a resolved date after the value: "Vodafone on 2026-11-25" (not "on 2026-12-01")
        if words and words[-1][:4].isdigit() and "-" in words[-1]:
            cut = 2 if len(words) > 2 and words[-2] in {"on", "in", "since", "from", "at"} else 1
            if len(words) > cut and words[-cut - 1] not in {"on", "in", "since", "from", "at"}:
                toks, words = toks[:-cut], words[:-cut]
                changed = True
    return toks, words


def _zh_match(template: str, text: str) -> _Hit | None:
    items = _template(template, True)
    first = items[0].text
    speaker = first.startswith(ZH.SPEAKER)
    at = text.find(first[:1])
    while at >= 0:
        if (not speaker or _zh_speaker(text, at)) and not _zh_said(text, at):
            head = first[1:] if speaker else first[1:]
            for q in _zh_adverb_skips(text, at + 1) if speaker else [at + 1]:
                if text.startswith(head, q):
                    value = _zh_walk(items, 1, q + len(head), text, None)
                    if value is not None:
                        return _Hit(at, value)
        at = text.find(first[:1], at + 1)
    return None


def _zh_speaker(text: str, at: int) -> bool:
    """我 at ``at`` is the speaker as subject: not an object (给我, 叫我) and not in a
    supposition (如果我)."""
    before = text[max(0, at - 4):at]
    clause = text[:at]
    for mark in ZH.CLAUSE_MARKS:
        clause = clause.rpartition(mark)[2]
    return not before.endswith(ZH.OBJECT_MARKERS) and not any(s in clause for s in
                                                              ZH.SUBORDINATORS)


def _zh_said(text: str, at: int) -> bool:
    """The statement at ``at`` follows a verb of saying in its clause (他说我...)."""
    clause = text[:at]
    for mark in ZH.CLAUSE_MARKS:
        clause = clause.rpartition(mark)[2]
    return any(clause.endswith(v) or clause.endswith(v + "过") for v in ZH.REPORTING)


def _zh_adverb_skips(text: str, q: int) -> list[int]:
    """Positions reachable from ``q`` by skipping adverbs and time words (我[现在][一直]...)."""
    out = [q]
    seen = {q}
    frontier = [q]
    while frontier:
        p = frontier.pop()
        for adverb in ZH.ADVERBS:
            if text.startswith(adverb, p) and p + len(adverb) not in seen:
                seen.add(p + len(adverb))
                out.append(p + len(adverb))
                frontier.append(p + len(adverb))
    return out


def _zh_walk(items, k, q, text, value):
    if k == len(items):
        return value if value is not None else ""
    item = items[k]
    if item.kind == "word":
        return _zh_walk(items, k + 1, q + len(item.text), text, value) \
            if text.startswith(item.text, q) else None
    if item.kind == "skip":
        for j in range(q + 1, min(q + MAX_ZH_VALUE_CHARS, len(text)) + 1):
            if j > q and text[j - 1] in "。！？!?":
                return None
            found = _zh_walk(items, k + 1, j, text, value)
            if found is not None:
                return found
        return None
    if k + 1 < len(items):
        nxt = items[k + 1].text
        j = q + 1
        while j < len(text) and j - q <= MAX_ZH_VALUE_CHARS and text[j - 1] not in ZH.CLAUSE_MARKS:
            if text.startswith(nxt, j):
                got = _zh_value(item.text, text[q:j])
                if got is not None:
                    found = _zh_walk(items, k + 1, j, text, got)
                    if found is not None:
                        return found
            j += 1
        return None
    j = q
    while j < len(text) and text[j] not in ZH.CLAUSE_MARKS:
        j += 1
    return _zh_value(item.text, text[q:j]) if j > q else None


def _zh_value(kind: str, value: str) -> str | None:
    if kind == "name":  # 我是{v:name}人: 湖南 / 北京, never 个好 (我是个好人) or 一个很内向
        value = _zh_clean(value)
        return value if 0 < len(value) <= MAX_ZH_NAME_CHARS and not any(
            c in ZH.NOT_IN_NAMES for c in value) else None
    if kind not in {"", "number"}:
        return _zh_class_value(kind, value.strip())
    if value.startswith("的"):
        return None  # 我最喜欢的歌手是...: 喜欢 modifies a noun, it is no opinion's object
    judged = value.startswith(ZH.NOT_VALUE_HEADS)
    value = _zh_clean(value)
    if kind == "" and judged and (len(value) <= 3 or value.endswith("的")):
        return None  # 是很好的, 挺远: a judgement, no value
    if not value or kind == "" and (len(value) > MAX_ZH_VALUE_CHARS or value in ZH.PRONOUNS
                                    or ZH.SPEAKER in value or value.endswith("不")):
        return None
    if kind == "":
        return value
    if kind == "number":
        return value if value.isdigit() and len(value) <= 3 else None
    return None


def _zh_class_value(kind: str, value: str) -> str | None:
    """The value of word class ``kind`` at the start of ``value`` (at its end for head
    classes: 软件工程师), after the words that may lead it (要简短, 尽量详细)."""
    members = ZH.VALUE_CLASSES[kind]
    changed = True
    while changed:
        changed = False
        for lead in ZH.VALUE_LEADS:
            if value.startswith(lead) and len(value) > len(lead):
                value = value[len(lead):].lstrip()
                changed = True
    if kind in ZH.HEAD_CLASSES:
        for word in sorted(members, key=len, reverse=True):
            at = value.find(word)
            if 0 <= at <= 8:  # 我是做销售的: the verb that leads the occupation is not in it
                found = _zh_clean(value[:at + len(word)])
                lead = next((v for v in ZH.OCCUPATION_VERBS if found.startswith(v)
                             and len(found) > len(v)), "")
                return found[len(lead):]
        return None
    for word in sorted(members, key=len, reverse=True):
        if value.startswith(word):
            return _zh_clean(word, heads=False) or word
    return None


def _zh_clean(value: str, *, heads: bool = True) -> str:
    """A Chinese value without particles around it (了上海 -> 上海, 联通的 -> 联通)."""
    value = value.strip(" \"'“”‘’")
    changed = True
    while value and changed:
        changed = False
        for head in ZH.VALUE_HEADS if heads else ():
            if value.startswith(head) and len(value) > len(head):
                value = value[len(head):]
                changed = True
        for tail in ZH.VALUE_TAILS:
            if value.endswith(tail) and len(value) > len(tail):
                value = value[:-len(tail)]
                changed = True
    return value.strip()


def match_template(template: str, clause: str, lang: str) -> str | None:
    """The value of ``template`` in ``clause`` (as said), or None when it does not match."""
    if lang == "zh" or has_cjk(template):
        hit = _zh_match(template, clause)
    else:
        hit = _en_match(template, L.tokens(clause), clause)
    return hit.value if hit is not None else None


# ----------------------------------------------------------------- keys

def attribute_key(attribute: str, lang: str | None = None) -> str:
    """The conflict key of an attribute as said: "My Dentist" -> ``dentist``, "favorite
    bands" -> ``favourite band``, "daughter's school" -> ``daughter school``, 我家的宽带 ->
    ``家宽带``, 最喜欢的歌手 -> ``最喜欢歌手``; synonyms of a topic give the topic's key
    ("job" -> ``job``)."""
    if has_cjk(attribute):
        key = "".join(attribute.split()).replace("的", "")
        return ZH.ATTRIBUTE_ALIASES.get(key, key)
    words = [w for w in L.norms(L.tokens(attribute)) if w not in {"my", "the", "a", "an"}]
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
        if word == "my" and _clause_free(words, i):
            said = _en_my_x_is(clause, toks, words, i + 1)
            if said:
                out.append(said)
        elif word == "i" and _clause_free(words, i):
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
        x_words = words[start:c]
        if x_words[0] in EN.NOT_ATTRIBUTES or any(w in EN.NOT_ATTRIBUTES for w in x_words[-1:]):
            return None
        v = c + 1
        additive = False
        now = False
        while v < len(words) and words[v] in EN.ADVERBS | EN.NAMING:
            additive |= words[v] in EN.ADDITIVE
            now |= words[v] in {"now", "currently"}
            v += 1
        named = any(w in EN.NAMING for w in words[c + 1:v]) or x_words[-1] == "name"
        if require_now and not now:
            return None
        value = _en_value("", toks, clause, v, _value_end(words, v))
        if value is None:
            return None
        attribute = clause[toks[start].start:toks[c - 1].end]
        key = attribute_key(attribute)
        if key in EN.NAMED_ONLY and not named:
            return None
        if x_words[-1] in EN.FAMILY and key not in EN.NAMED_ONLY:
            # "my sister is a doctor" describes her; "my son is called Leo" names him
            value = _en_value("name", toks, clause, v, _value_end(words, v))
            if not named or value is None:
                return None
            return _said(f"{key} name", f"{attribute}'s name", value)
        if key in {"name", "wife_name", "husband_name"}:
            value = _en_value("name", toks, clause, v, _value_end(words, v))
            if value is None:
                return None
        return _said(key, attribute, value, additive=additive, named=named and not
                     x_words[-1] == "name")
    return None


def _value_end(words: Sequence[str], v: int) -> int:
    """Where a value starting at token ``v`` ends: a stop word, or a second statement with its
    own subject ("blue and I like jazz")."""
    j = v
    while j < len(words) and words[j] not in EN.VALUE_STOPS and not (
            words[j] in {"and", "but"} and words[j + 1:j + 2] in (["i"], ["my"])):
        j += 1
    return j


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
    value = _en_value("", toks, clause, j + 1, _value_end(words, j + 1))
    if value is None or (attribute is None and changed_from is None):
        return None
    if attribute is None:
        return Said(None, "", "", _norm_value(value), value, changed_from=changed_from)
    return _said(attribute_key(attribute), attribute, value, changed_from=changed_from)


def _zh_open(clause: str, known: tuple[str, ...]) -> list[Said]:
    out: list[Said] = []
    at = clause.find(ZH.SPEAKER)
    while at >= 0:
        if _zh_speaker(clause, at) and not _zh_said(clause, at):
            said = _zh_my_x_is(clause, at + 1, possessive_needed=False)
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
                any(w in attribute for w in ZH.MENTAL_VERBS[:4]):
            return None
        if not possessive and not attribute.startswith(ZH.OTHER_PEOPLE) and "的" not in \
                attribute and attribute not in ZH.ATTRIBUTE_ALIASES:
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
        value = _zh_value("", clause[end:j])
        if value is None:
            return None
        key = attribute_key(("家" if possessive == "家的" else "") + attribute)
        if key in ZH.NAMED_ONLY and copula not in ZH.NAMING:
            return None
        shown_attribute = "家的" + attribute if possessive == "家的" else attribute
        return _said(key, shown_attribute, value, additive=additive, named=copula in ZH.NAMING)
    return None


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
                    hit = _zh_match(template, clause)
                else:
                    toks = toks if toks is not None else L.tokens(clause)
                    hit = _en_match(template, toks, clause)
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
    if not value or value.lower() in EN.PRONOUNS or value in ZH.PRONOUNS:
        return None
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
    peanuts", 我对花生不过敏 -> ``allergy:peanuts`` / ``allergy:花生``)."""
    keys = []
    for template in EN.NOT_ALLERGIC_PHRASES + ZH.NOT_ALLERGIC_PHRASES:
        value = match_template(template, clause, "zh" if has_cjk(template) else "en")
        if value and value.lower() not in EN.PRONOUNS and value not in ZH.PRONOUNS:
            keys.append(f"allergy:{_norm_value(value)}")
    return list(dict.fromkeys(keys))


# ----------------------------------------------------------------- endings

def endings(clause: str, lang: str) -> list[str]:
    """What the user says no longer holds, as said ("I'm no longer a member of the Alpine
    Club" -> ["member of the Alpine Club"], "I quit green tea" -> ["green tea"], 我不再学日语了
    -> ["学日语"]), empty when the clause ends nothing."""
    if lang == "zh" or has_cjk(clause):
        return _zh_endings(clause)
    toks = L.tokens(clause)
    words = L.norms(toks)
    out = []
    for i, word in enumerate(words):
        if word != "i" or not _clause_free(words, i):
            continue
        j = i + 1
        verb = None
        ended = False
        while j < len(words) and (words[j] in EN.ADVERBS or words[j] in {"have", "am", "do"}
                                  or words[j:j + 2] in (["no", "longer"], ["gave", "up"],
                                                        ["given", "up"])):
            if words[j:j + 2] in (["no", "longer"], ["gave", "up"], ["given", "up"]):
                ended = True
                j += 2
                continue
            if words[j] == "do" and words[j + 1:j + 2] == ["not"]:
                j += 2
                verb = "not"
                continue
            if words[j] == "am" and words[j + 1:j + 2] == ["not"]:
                j += 2
                verb = "not"
                continue
            j += 1
        if j < len(words) and words[j] in EN.ENDING_VERBS and not ended:
            ended = True
            j += 1
        end = j
        while end < len(words) and words[end] not in EN.VALUE_STOPS | {"and"}:
            end += 1
        tail = words[j:end]
        anymore = False
        for phrase in EN.ENDING_ADVERBS:
            if tuple(tail[-len(phrase):]) == phrase:
                anymore = True
                end -= len(phrase)
                break
        if not (ended or (verb == "not" and anymore)):
            continue
        while j < end and words[j] in EN.ARTICLES:
            j += 1
        if j >= end:
            continue
        phrase = clause[toks[j].start:toks[end - 1].end].strip()
        content = [w for w in words[j:end] if w.isalpha()]
        if content and content[0] not in EN.NOT_ENDED and not (
                len(content) == 1 and content[0] in EN.ARTICLES):
            out.append(phrase)
    return out


def _zh_endings(clause: str) -> list[str]:
    out = []
    at = clause.find(ZH.SPEAKER)
    while at >= 0:
        if _zh_speaker(clause, at) and not clause.startswith(("的", *ZH.OTHER_PEOPLE), at + 1):
            for q in _zh_adverb_skips(clause, at + 1):
                phrase = _zh_ended_at(clause, q)
                if phrase:
                    out.append(phrase)
                    break
        at = clause.find(ZH.SPEAKER, at + 1)
    return out


def _zh_ended_at(clause: str, q: int) -> str | None:
    end = q
    while end < len(clause) and clause[end] not in ZH.CLAUSE_MARKS:
        end += 1
    rest = clause[q:end]
    marker = next((m for m in ZH.ENDING_MARKERS if rest.startswith(m)), None)
    if marker:
        phrase = _zh_clean(rest[len(marker):])
    elif rest.startswith(ZH.NEGATION) and rest.endswith("了") and len(rest) > 2:
        phrase = _zh_clean(rest[1:])
    elif rest.startswith(ZH.NO_LONGER_HAVE) and rest.endswith("了"):
        phrase = _zh_clean(rest[len(ZH.NO_LONGER_HAVE):])
    else:
        return None
    if not phrase or phrase.startswith(ZH.NOT_ENDED) or "过敏" in phrase:
        return None
    return phrase


def ends(phrase: str, fact_text: str, fact_value: str | None) -> bool:
    """True when an ended ``phrase`` names the fact: its value is the phrase or holds it as
    whole words ("green tea" / "tea"; in Chinese as characters), or every content word of the
    phrase is in the fact's text (stems compared: "take the bus to work" ends "The user takes
    the bus to work"; 打羽毛球 ends 用户每周打两次羽毛球)."""
    p = phrase.lower().strip()
    v = (fact_value or "").lower()
    if v and v not in {"like", "dislike"}:
        if has_cjk(p) or has_cjk(v):
            if v in p or p in v:
                return True
        elif f" {v} " in f" {p} " or f" {p} " in f" {v} ":
            return True
    if has_cjk(p):
        words = [w for w in search_tokens(p) if len(w) > 1 or not has_cjk(w)]
        return bool(words) and all(w in fact_text for w in words)
    content = [w for w in L.norms(L.tokens(p)) if w.isalpha() and w not in _EN_FUNCTION_WORDS]
    if not content:
        return False
    have = set(stem_english([w for w in L.norms(L.tokens(fact_text.lower())) if w.isalpha()]))
    return all(s in have for s in stem_english(content))


_EN_FUNCTION_WORDS = frozenset(
    "a an the of to in on at for with by from my me i is am are be do does not no any more "
    "anymore longer have has".split())


# ----------------------------------------------------------------- constraints

def constraint(clause: str, lang: str) -> bool:
    """True when ``clause`` states a constraint the assistant must respect from its first
    mention: an allergy, intolerance, diet or medical condition of the speaker ("I'm
    allergic to sesame", "I have type 1 diabetes", 我乳糖不耐受), or a prohibition addressed to
    the assistant about the speaker ("please don't message me on weekends", 别在周末给我发消息).
    Questions, suppositions and passing states are none."""
    if L.is_question(clause) or L.is_hypothetical(clause, lang):
        return False
    if lang == "zh" or has_cjk(clause):
        return _zh_constraint(clause)
    words = L.norms(L.tokens(clause))
    transient = any(w in {"today", "tonight", "tomorrow", "yesterday"} for w in words)
    if transient:
        return False
    # the speaker's own ("I'm allergic", "we're vegan"), not "my dog is allergic to chicken"
    if any(w in {"i", "we"} for w in words) and L.speaker_subject(clause, "en") and (
            any(w in EN.CONSTRAINT_WORDS for w in words)
            or L.find_phrase(words, EN.CONSTRAINT_PHRASES) is not None):
        return True
    rest = L.after_openers(words)
    opens = any(L.starts_with(rest, p) for p in EN.PROHIBITION_OPENERS)
    return opens and any(w in EN.CONTACT_VERBS for w in rest[:6]) and any(
        w in EN.SPEAKER_WORDS for w in rest)


def _zh_constraint(clause: str) -> bool:
    if any(w in clause for w in ("今天", "今晚", "明天", "昨天", "刚才")):
        return False
    at = L.zh_speaker_at(clause)
    if at is not None and L.zh_speaker_is_subject(clause[at:]) and any(
            w in clause[at:] for w in ZH.CONSTRAINT_WORDS):
        return True  # the speaker's own (我对芒果过敏), not 我女儿对花生过敏
    for opener in ZH.PROHIBITION_OPENERS:
        p = clause.find(opener)
        if p < 0:
            continue
        before = clause[:p]
        for mark in ZH.CLAUSE_MARKS:
            before = before.rpartition(mark)[2]
        if ZH.SPEAKER in before and L.zh_speaker_at(before) is not None:
            continue  # 我不要喝咖啡: the speaker's own wish
        after = clause[p + len(opener):]
        if ZH.SPEAKER in after and any(v in after for v in ZH.CONTACT_VERBS):
            return True
    return False


# ----------------------------------------------------------------- corrections

def bare_value(clause: str, lang: str) -> str | None:
    """The value a correction names without its attribute, as said: "No wait, it's olives."
    -> "olives", 不对，是5号柜 -> "5号柜"; None for any other clause."""
    rest = L.strip_openers(clause)
    if lang == "zh" or has_cjk(rest):
        if not rest.startswith("是"):
            return None
        end = 1
        while end < len(rest) and rest[end] not in ZH.CLAUSE_MARKS:
            end += 1
        return _zh_value("", rest[1:end])
    toks = L.tokens(rest)
    words = L.norms(toks)
    if words[:2] not in (["it", "is"], ["that", "is"], ["it", "was"], ["it", "should"]):
        return None
    v = 2
    while v < len(words) and words[v] in EN.ADVERBS | {"be", "actually"}:
        v += 1
    return _en_value("", toks, rest, v, _value_end(words, v))


# ----------------------------------------------------------------- the rule table

def _opens(lang: str):
    return lambda s: any(a.topic is None for a in open_attributes(s, lang))


#: The statement rules with their examples (``memory.language.Rule``; one parametrised test
#: runs every row of this table and of ``memory.language.RULES``).
RULES: tuple[L.Rule, ...] = (
    L.Rule("open attribute", "en", _opens("en"),
           ("My dentist is now Dr. Okafor", "my shoe size is 43", "I changed my laptop to a Mac",
            "Oh, and my hairdresser is Inés now", "my son is called Leo"),
           ("My sister is a doctor", "my dentist is really nice", "My plan is to visit Rome",
            "My favourite part was the fireworks", "If my gym is closed, where should I go")),
    L.Rule("open attribute", "zh", _opens("zh"),
           ("我的牙医换成了李医生", "我家宽带换成了电信", "我最喜欢的歌手现在是陈奕迅", "我女儿叫小雨",
            "我的车险今年换成了太平洋保险"),
           ("我女儿是学生", "我的意思是明天再说", "我觉得这个是对的", "我是医生", "他的牙医是王医生")),
    L.Rule("ending", "en", lambda s: bool(endings(s, "en")),
           ("I'm no longer a member of the Alpine Club", "I don't have a personal trainer anymore",
            "I quit green tea", "I no longer take the bus to work"),
           ("I'm not sure anymore", "I don't know", "I love tea", "My friend quit smoking")),
    L.Rule("ending", "zh", lambda s: bool(endings(s, "zh")),
           ("我不再学日语了", "我现在不打羽毛球了", "我已经戒咖啡了", "我现在没有私教了"),
           ("我不知道了", "我朋友不再抽烟了", "我喜欢打羽毛球")),
    L.Rule("constraint", "en", lambda s: constraint(s, "en"),
           ("I'm allergic to sesame", "I have type 1 diabetes", "Please don't message me on weekends",
            "I'm on blood thinners, so no ibuprofen for me", "Never schedule meetings for me before 10"),
           ("I'm exhausted today", "Don't forget to stay positive", "Don't worry about me",
            "Is it okay if I eat peanuts?", "If I were vegan, what would I eat",
            "My dog is allergic to chicken", "I love you with all my heart")),
    L.Rule("constraint", "zh", lambda s: constraint(s, "zh"),
           ("我对芒果过敏", "我有高血压", "别在周末给我发消息", "晚上十点以后不要给我发通知", "我乳糖不耐受"),
           ("今天好累", "我不要喝咖啡", "我朋友对花生过敏吗", "假如我有糖尿病", "我女儿对花生过敏")),
)
