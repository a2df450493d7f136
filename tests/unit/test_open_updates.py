"""Open-vocabulary updates, corrections and endings, English and Chinese: the readers
(``memory.statements``, ``memory.endings``, ``memory.clauses``) and the write policy through
the engine (real SQLite, hand-driven clock), on wordings beside the probe's."""

from __future__ import annotations

import pytest

from memory import language
from memory.endings import endings, ends
from memory.semantic import claims, mentions
from memory.statements import attribute_key, bare_value
from memory.types import FactStatus


@pytest.mark.parametrize("clause, lang, known, key, value", [
    ("Our vet is Dr Moreau now", "en", (), "vet", "dr moreau"),
    ("My pharmacy these days is the Walgreens near work", "en", (), "pharmaci",
     "walgreens near work"),
    ("My car insurance at the moment is HUK24", "en", (), "car insur", "huk24"),
    ("Dr Patel retired, my new GP is Dr Chen", "en", (), "gp", "dr chen"),
    ("I switched banks to N26", "en", (), "bank", "n26"),
    ("We changed dentists to Dr Kaya", "en", (), "dentist", "dr kaya"),
    ("我把宽带换成了电信", "zh", (), "宽带", "电信"),
    ("我上个月把我的宽带换成了电信", "zh", (), "宽带", "电信"),
    ("我们把燃气公司换成了港华燃气", "zh", (), "燃气公司", "港华燃气"),
    ("开户行现在改成中国银行了", "zh", ("开户行",), "开户行", "中国银行"),
    ("车位换成了B1-023", "zh", ("车位",), "车位", "b1-023"),
])
def test_open_updates(clause, lang, known, key, value):
    found = {c.key: c.value for c in claims(clause, lang, known)}
    assert found.get(key) == value


@pytest.mark.parametrize("clause, lang, known", [
    ("We went to the cinema with Anna", "en", ()),
    ("I moved to the couch", "en", ()),
    ("我把这个问题换成了另一个说法", "zh", ()),
    ("开户行现在改成中国银行了", "zh", ()),  # no such attribute of the user's yet
    ("我是医生", "zh", ("车位",)),
])
def test_no_open_update(clause, lang, known):
    assert all(c.topic is not None for c in claims(clause, lang, known))


def test_a_switch_that_names_no_attribute_takes_the_old_value_the_clause_names():
    said = claims("Sal closed his shop, so I switched to Dom at Fade Factory", "en")
    assert [(c.key, c.value) for c in said] == [(None, "dom at fade factory")]
    assert mentions(said[0].context, "sal on 5th avenue", besides=said[0].shown)
    assert not mentions(said[0].context, "dr patel", besides=said[0].shown)
    assert mentions("Dr Ruiz moved away, so I changed to Dr Mendes", "dr ruiz",
                    besides="Dr Mendes")
    assert not claims("Anna and I went to the cinema", "en")


def test_key_words_that_name_the_attribute_itself_are_dropped():
    assert attribute_key("new GP") == attribute_key("GP") == "gp"
    assert attribute_key("current employer") == "employer"
    assert attribute_key("favourite band") != attribute_key("band")


@pytest.mark.parametrize("text, expected", [
    ("Sorry, I got that wrong, it's Mrs Kowalczyk.", True),
    ("Wait, I mixed that up: my bank is DKB.", True),
    ("My bad, it's 5F.", True),
    ("Oops, our vet is Dr Stein, not Stone.", True),
    ("不好意思说错了，是小周。", True),
    ("口误，我的理发师是阿康。", True),
    ("哎呀说错了，是平安。", True),
    ("不对不对，我的车牌是沪A54321。", True),
    ("I got a new bike last week.", False),
    ("我今天去了银行。", False),
])
def test_corrections_that_own_up_to_a_mistake(text, expected):
    assert language.is_correction(text) is expected


@pytest.mark.parametrize("clause, lang, value", [
    ("Sorry, I got that wrong, it's Mrs Kowalczyk.", "en", "Mrs Kowalczyk"),
    ("Correction - it's Jonas, not Jens.", "en", "Jonas"),
    ("不好意思说错了，是小周。", "zh", "小周"),
    ("不是王老师，是汪老师。", "zh", "汪老师"),
    ("I live in Graz, my sister lives in Linz.", "en", None),
])
def test_bare_value_in_a_later_part(clause, lang, value):
    assert bare_value(clause, lang) == value


@pytest.mark.parametrize("sentence, asks", [
    ("不对不对，我的车牌是沪A54321。", False), ("不是不是，我住在上海", False),
    ("你是不是搞错了", True), ("这样做对不对", True),
])
def test_a_denial_said_twice_asks_nothing(sentence, asks):
    assert language.is_question(sentence) is asks


@pytest.mark.parametrize("clause, lang, phrase", [
    ("I stepped down from the tenants' association board.", "en",
     "tenants' association board"),
    ("I cancelled my McFit membership.", "en", "my McFit membership"),
    ("I dropped out of the church choir this autumn.", "en", "church choir this autumn"),
    ("我已经从腾讯离职了。", "zh", "腾讯"),
    ("我上个月从字节跳动辞职了。", "zh", "字节跳动"),
    ("我们家现在没有保姆了。", "zh", "保姆"),
    ("我戒烟了，已经三个月了。", "zh", "烟"),
])
def test_endings(clause, lang, phrase):
    assert endings(clause, lang) == [phrase]


@pytest.mark.parametrize("phrase, text, value, expected", [
    ("church choir this autumn", "The user sings in the church choir", None, True),
    ("my McFit membership", "The user has a membership at McFit", None, True),
    ("Siemens at the end of October", "The user works at Siemens", "siemens", True),
    ("烟", "用户抽烟", None, True),
    ("吃", "用户吃素", None, False),  # 我不吃了: a light verb alone ends nothing
    ("保姆", "用户家的保姆是张阿姨", "张阿姨", True),
])
def test_an_ended_phrase_names_the_fact(phrase, text, value, expected):
    assert ends(phrase, text, value) is expected


# ----------------------------------------------------------------- through the engine

CASES = {
    "our attribute, updated with a time phrase": (
        [["Remember our vet is Dr. Haas."], ["Our vet at the moment is Dr. Moreau."]],
        ["The user's vet is Dr Moreau"], ["The user's vet is Dr Haas"]),
    "a switch naming only the new value, the old one in the clause": (
        [["Remember that my barber is Sal."], ["Sal retired, so I switched to Dom."]],
        ["The user's barber is Dom"], ["The user's barber is Sal"]),
    "把 changes a free attribute": (
        [["记住我的宽带是联通。"], ["我把宽带换成了电信。"]],
        ["用户的宽带是电信"], ["用户的宽带是联通"]),
    "a known attribute without 我的": (
        [["记住我的车位是B2-117。"], ["车位换成了B1-023。"]],
        ["用户的车位是B1-023"], ["用户的车位是B2-117"]),
    "a correction owning up, the value in a later part": (
        [["Remember my landlady's name is Mrs. Kowalski.",
          "Sorry, I got that wrong, it's Mrs. Kowalczyk."]],
        ["The user's landlady's name is Mrs Kowalczyk"],
        ["The user's landlady's name is Mrs Kowalski"]),
    "不是A，是B": (
        [["记住我儿子的班主任是王老师。", "不是王老师，是汪老师。"]],
        ["用户儿子的班主任是汪老师"], ["用户儿子的班主任是王老师"]),
    "leaving an employer ends it": (
        [["Remember that I work at Siemens."], ["I left Siemens at the end of October."]],
        [], ["The user works at Siemens"]),
    "从X离职 ends it": (
        [["记住我在腾讯工作。"], ["我已经从腾讯离职了。"]], [], ["用户在腾讯工作"]),
    "the household no longer has it": (
        [["记一下，我家的保姆是张阿姨。"], ["我们家现在没有保姆了。"]], [], ["用户家的保姆是张阿姨"]),
}


async def _facts(h, user="alice"):
    u = await h.store.identities.find_user("console", user)
    active = await h.store.facts.list_facts(u.id, [FactStatus.ACTIVE])
    old = await h.store.facts.list_facts(u.id, [FactStatus.SUPERSEDED, FactStatus.ARCHIVED])
    return sorted(f.text for f in active), sorted(f.text for f in old), active


@pytest.mark.parametrize("name", list(CASES))
async def test_updates_corrections_and_endings(harness, name):
    sessions, want_active, want_old = CASES[name]
    for n, session in enumerate(sessions):
        if n:
            await harness.say("/new", user="alice")
            harness.clock.advance(86400)
        for text in session:
            await harness.say(text, user="alice")
    active, old, _ = await _facts(harness)
    assert active == sorted(want_active)
    assert old == sorted(want_old)


async def test_an_update_of_a_kept_attribute_is_kept_as_the_old_one_was(harness):
    await harness.say("Remember that my dentist is Dr. Weber.", user="alice")
    await harness.say("/new", user="alice")
    harness.clock.advance(86400)
    await harness.say("My dentist is now Dr. Kaya.", user="alice")
    _, _, active = await _facts(harness)
    assert [(f.text, f.mode) for f in active] == [("The user's dentist is Dr Kaya", "explicit")]
