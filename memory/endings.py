"""What a user says no longer holds ("I'm no longer X", "I don't X anymore", "I quit X",
我不再X, 我戒了X, 我不X了, 我没有X了), and whether an ended phrase names a stored fact.

Read where the speaker is the subject and the statement holds as said (``memory.phrases``).
"""

from __future__ import annotations

from memory import language as L
from memory.lexicon import en as EN
from memory.lexicon import zh as ZH
from memory.phrases import clause_free, zh_adverb_skips, zh_clean, zh_speaker
from memory.sentences import find_phrase
from memory.text import has_cjk, search_tokens, stem_english


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
        if word != "i" or not clause_free(words, i):
            continue
        j = i + 1
        verb = None
        ended = False
        while j < len(words) and (words[j] in EN.ADVERBS or words[j] in {"have", "am", "do"}
                                  or words[j:j + 2] == ["no", "longer"]):
            if words[j:j + 2] == ["no", "longer"]:
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
        stop = find_phrase(words, EN.ENDING_VERBS, j) if j < len(words) else None
        if stop is not None and stop[0] == j and not ended:  # "quit", "stepped down from"
            ended = True
            j += stop[1]
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
        if zh_speaker(clause, at) and not clause.startswith(("的", *ZH.OTHER_PEOPLE), at + 1):
            q0 = at + 1 + clause.startswith(ZH.PLURAL, at + 1)  # 我们家现在没有保姆了:
            q0 += next((len(w) for w in ZH.HOUSEHOLD if clause.startswith(w, q0)), 0)  # 家's
            for q in zh_adverb_skips(clause, q0):
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
    bare = rest.removesuffix("了")
    leaving = next((v for v in ZH.LEAVING_VERBS if bare.endswith(v)), None)
    if marker:
        phrase = zh_clean(rest[len(marker):])
    elif leaving and rest.startswith(ZH.SOURCE):  # 我已经从腾讯离职了
        phrase = zh_clean(bare[len(ZH.SOURCE):-len(leaving)])
    elif rest.startswith(ZH.NEGATION) and rest.endswith("了") and len(rest) > 2:
        phrase = zh_clean(rest[1:])
    elif rest.startswith(ZH.NO_LONGER_HAVE) and rest.endswith("了"):
        phrase = zh_clean(rest[len(ZH.NO_LONGER_HAVE):])
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
        if not words and len(p) == 1 and p not in ZH.LIGHT_VERBS:
            return p in fact_text  # 戒烟 -> 烟: "用户抽烟"
        return bool(words) and all(w in fact_text for w in words)
    content = [w for w in L.norms(L.tokens(p)) if w.isalpha() and w not in _EN_FUNCTION_WORDS
               and w not in EN.TIME_WORDS]  # "the church choir this autumn"
    if not content:
        return False
    have = set(stem_english([w for w in L.norms(L.tokens(fact_text.lower())) if w.isalpha()]))
    return all(s in have for s in stem_english(content))


_EN_FUNCTION_WORDS = frozenset(
    "a an the of to in on at for with by from my me i is am are be do does not no any more "
    "anymore longer have has".split())

